using System.Net;
using System.Net.Sockets;
using CoapNet.Messages;
using CoapNet.Serialization;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Server;

/// <summary>
/// A bare UDP socket that plays a CoAP client byte for byte: it sends exactly the messages a test
/// builds (its own Message IDs and tokens, no retransmission, no automatic ACK) and shows exactly
/// what the server sends back.
/// </summary>
internal sealed class RawPeer : IDisposable
{
    /// <summary>How long a receive that must succeed may take before the test fails (liveness only).</summary>
    public static readonly TimeSpan ReceiveTimeout = TimeSpan.FromSeconds(10);

    private readonly UdpClient _socket;
    private readonly IPEndPoint _server;
    private int _nextMessageId = 0x1000;
    private int _nextPingId = 0xB000;

    public RawPeer(IPEndPoint server)
    {
        _server = server;
        _socket = new UdpClient(new IPEndPoint(server.AddressFamily == AddressFamily.InterNetworkV6 ? IPAddress.IPv6Loopback : IPAddress.Loopback, 0));
    }

    /// <summary>A fresh Message ID for a request of this peer.</summary>
    public ushort NextMessageId() => (ushort)Interlocked.Increment(ref _nextMessageId);

    /// <summary>A request with this peer's next Message ID and a one-byte token <paramref name="token"/>.</summary>
    public CoapMessage Request(CoapMessageType type, CoapCode method, string pathAndQuery, byte token)
    {
        CoapMessage request = new() { Type = type, Code = method, MessageId = NextMessageId(), Token = new[] { token } };
        int question = pathAndQuery.IndexOf('?', StringComparison.Ordinal);
        request.UriPath = question < 0 ? pathAndQuery : pathAndQuery[..question];
        if (question >= 0)
        {
            request.UriQuery = pathAndQuery[(question + 1)..];
        }

        return request;
    }

    public Task SendAsync(CoapMessage message) => SendAsync(CoapMessageSerializer.Udp.Serialize(message));

    public async Task SendAsync(byte[] datagram) => await _socket.SendAsync(datagram, _server);

    /// <summary>The next datagram from the server, parsed; fails the test after <see cref="ReceiveTimeout"/>.</summary>
    public async Task<Received> ReceiveAsync(TimeSpan? timeout = null)
    {
        using CancellationTokenSource cancel = new(timeout ?? ReceiveTimeout);
        UdpReceiveResult result;
        try
        {
            result = await _socket.ReceiveAsync(cancel.Token);
        }
        catch (OperationCanceledException)
        {
            throw new TimeoutException($"The server sent nothing within {timeout ?? ReceiveTimeout}.");
        }

        return new Received(result.Buffer, CoapMessageSerializer.Udp.Deserialize(result.Buffer));
    }

    /// <summary>Waits for the next datagram and returns null when none arrives within <paramref name="window"/>.</summary>
    public async Task<Received?> TryReceiveAsync(TimeSpan window)
    {
        try
        {
            return await ReceiveAsync(window);
        }
        catch (TimeoutException)
        {
            return null;
        }
    }

    /// <summary>
    /// Sends a CoAP ping and returns everything the server sent before the RST that answers it. The
    /// server handles one socket's datagrams in order on its receive loop, so when the RST arrives,
    /// every earlier datagram of this peer has been handled and any immediate reply to it has been sent.
    /// </summary>
    public async Task<IReadOnlyList<CoapMessage>> PingBarrierAsync()
    {
        ushort pingId = (ushort)Interlocked.Increment(ref _nextPingId);
        await SendAsync([0x40, 0x00, (byte)(pingId >> 8), (byte)pingId]);
        List<CoapMessage> before = [];
        while (true)
        {
            Received received = await ReceiveAsync();
            if (received.Message.Type == CoapMessageType.Reset && received.Message.MessageId == pingId)
            {
                return before;
            }

            before.Add(received.Message);
        }
    }

    /// <summary>
    /// Everything <paramref name="server"/> sent this peer once every request it admitted has been answered or turned away:
    /// a ping barrier (each datagram sent before it has been received and admitted), a wait until the server holds no
    /// request (the dispatch that answers runs after the receive loop), then a second barrier for what that sent.
    /// </summary>
    public async Task<IReadOnlyList<CoapMessage>> SettledAsync(CoapNet.Server.CoapServer server)
    {
        List<CoapMessage> sent = [.. await PingBarrierAsync()];
        await Wait.UntilAsync(() => server.PendingRequests == 0, "the server to hold no request", ReceiveTimeout);

        sent.AddRange(await PingBarrierAsync());
        return sent;
    }

    public void Dispose() => _socket.Dispose();

    /// <summary>A datagram from the server: its bytes and the message they hold.</summary>
    internal sealed record Received(byte[] Bytes, CoapMessage Message);
}
