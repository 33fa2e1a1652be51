using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using CoapNet.Messages;
using CoapNet.Multicast;
using CoapNet.Serialization;
using CoapNet.Tests.Infrastructure;
using CoapNet.Transports;

namespace CoapNet.Tests.Multicast;

/// <summary>
/// The sockets of a multicast port over loopback, unicast only (the groups joined on "lo", so nothing leaves the
/// machine and no group datagram is sent): a group endpoint's message goes from the unicast address, and the ACK or
/// Reset a client sends back to it reaches that group endpoint, not the unicast one (RFC 7641 sections 3.6 and 4.5).
/// </summary>
public sealed class MulticastSocketsTests : IDisposable
{
    private readonly MulticastSockets _sockets = new(new CoapMulticastOptions { Port = 0, Interfaces = { "lo" } });
    private readonly Recorder _unicast = new();
    private readonly Recorder _group = new();
    private readonly Socket _client = new(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);

    public MulticastSocketsTests()
    {
        _sockets.Unicast.Start(_unicast);
        _sockets.Groups[0].Start(_group);
        _client.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        _client.ReceiveTimeout = (int)Wait.DefaultBound.TotalMilliseconds;
    }

    private IPEndPoint Server => new(IPAddress.Loopback, _sockets.Port);

    [Theory]
    [InlineData(CoapMessageType.Confirmable, CoapMessageType.Acknowledgement)]
    [InlineData(CoapMessageType.NonConfirmable, CoapMessageType.Reset)]
    public void TheAnswerToAGroupEndpointsNotificationReachesItFromTheUnicastAddress(CoapMessageType sent, CoapMessageType answer)
    {
        CoapMessage notification = new() { Type = sent, Code = CoapCode.Content, MessageId = 0x3838, Token = new byte[] { 7 }, Observe = 3 };
        _sockets.Groups[0].Send(CoapMessageSerializer.Udp.Serialize(notification), (IPEndPoint)_client.LocalEndPoint!);

        byte[] buffer = new byte[64];
        EndPoint from = new IPEndPoint(IPAddress.Any, 0);
        int length = _client.ReceiveFrom(buffer, ref from);
        ((IPEndPoint)from).Should().Be(Server, "a group endpoint sends from the unicast address and port (RFC 7252 section 8.2)");
        CoapMessageSerializer.Udp.TryDeserialize(buffer.AsSpan(0, length), out CoapMessage? received, out _).Should().BeTrue();
        received!.MessageId.Should().Be(0x3838);

        _client.SendTo(CoapMessageSerializer.Udp.Serialize(CoapMessage.CreateEmpty(answer, 0x3838)), Server);
        _client.SendTo(CoapMessageSerializer.Udp.Serialize(CoapMessage.CreateEmpty(answer, 0x3839)), Server);

        Wait.Until(() => _group.Count == 1 && _unicast.Count == 1, "each answer reaches an endpoint");
        _group.MessageIds.Should().Equal(0x3838);
        _unicast.MessageIds.Should().Equal(new ushort[] { 0x3839 }, "an answer to no message of a group endpoint is the unicast endpoint's");
    }

    public void Dispose()
    {
        _client.Dispose();
        _sockets.Unicast.Dispose();
        foreach (MulticastEndpointTransport group in _sockets.Groups)
        {
            group.Dispose();
        }
    }

    private sealed class Recorder : IDatagramReceiver
    {
        private readonly ConcurrentQueue<ushort> _ids = new();

        public int Count => _ids.Count;

        public IReadOnlyList<ushort> MessageIds => [.. _ids];

        public void OnDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote) => _ids.Enqueue((ushort)((datagram[2] << 8) | datagram[3]));
    }
}
