using System.Net;
using System.Net.Sockets;
using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Tests.Oscore;

/// <summary>A peer that is no CoAP endpoint: one message from a socket of its own and its answer, as an attacker replays one.</summary>
internal static class RawPeer
{
    /// <summary>Sends <paramref name="message"/> as it is to <paramref name="server"/> over UDP and returns the answer.</summary>
    public static async Task<CoapMessage> Exchange(IPEndPoint server, CoapMessage message)
    {
        using UdpClient socket = new(new IPEndPoint(IPAddress.Loopback, 0));
        byte[] bytes = CoapMessageSerializer.Udp.Serialize(message);
        await socket.SendAsync(bytes, server);
        using CancellationTokenSource timeout = new(TimeSpan.FromSeconds(10));
        UdpReceiveResult result = await socket.ReceiveAsync(timeout.Token);
        return CoapMessageSerializer.Udp.Deserialize(result.Buffer);
    }
}
