using System.Net;
using CoapNet.Channels;
using CoapNet.Transports;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// A secure datagram transport in memory for the client's coaps path: it hands out the session the test says, records
/// every send with its session, delivers what the test gives it in the session the test names, and ends a session
/// when told, as DTLS reports one (<see cref="IDatagramReceiver.OnSessionLost"/>).
/// </summary>
internal sealed class StandInSecureTransport : ISecureDatagramTransport
{
    private readonly object _gate = new();
    private IDatagramReceiver? _receiver;
    private Task<CoapSecurityContext>? _nextHandshake;
    private int _connects;

    public StandInSecureTransport() => Session = NewSession();

    /// <summary>The session <see cref="ConnectAsync"/> hands out now.</summary>
    public CoapSecurityContext Session { get; private set; }

    public List<(byte[] Bytes, CoapSecurityContext? Session)> Sent { get; } = [];

    /// <summary>How many times the client asked for a session.</summary>
    public int Connects => Volatile.Read(ref _connects);

    public IPEndPoint LocalEndPoint { get; } = new(IPAddress.Loopback, 40000);

    public string Scheme => CoapPeer.DtlsScheme;

    /// <summary>What was sent so far, under the lock.</summary>
    public (byte[] Bytes, CoapSecurityContext? Session)[] SentSoFar()
    {
        lock (Sent)
        {
            return [.. Sent];
        }
    }

    /// <summary>
    /// Ends the current session as a DTLS transport reports it (with <paramref name="reason"/>), and makes the next
    /// <see cref="ConnectAsync"/> return <paramref name="handshake"/>: a new session, or a handshake that fails or is still under way.
    /// </summary>
    public void EndSession(IPEndPoint remote, Exception reason, Task<CoapSecurityContext>? handshake = null)
    {
        CoapSecurityContext ended;
        lock (_gate)
        {
            ended = Session;
            Session = NewSession();
            _nextHandshake = handshake;
        }

        _receiver!.OnSessionLost(remote, ended, reason);
    }

    public Task<CoapSecurityContext> ConnectAsync(IPEndPoint remote, CancellationToken cancellationToken = default)
    {
        Interlocked.Increment(ref _connects);
        lock (_gate)
        {
            Task<CoapSecurityContext> handshake = _nextHandshake ?? Task.FromResult(Session);
            return cancellationToken.CanBeCanceled ? handshake.WaitAsync(cancellationToken) : handshake;
        }
    }

    public void Deliver(byte[] datagram, IPEndPoint from, CoapSecurityContext session) => _receiver!.OnDatagram(datagram, from, session);

    public void Start(IDatagramReceiver receiver) => _receiver = receiver;

    public void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote) => Send(datagram, remote, null);

    public void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote, CoapSecurityContext? securityContext)
    {
        lock (Sent)
        {
            Sent.Add((datagram.ToArray(), securityContext));
        }
    }

    public ValueTask SendAsync(ReadOnlyMemory<byte> datagram, IPEndPoint remote, CancellationToken cancellationToken = default)
    {
        Send(datagram.Span, remote, null);
        return ValueTask.CompletedTask;
    }

    public void Dispose()
    {
    }

    public ValueTask DisposeAsync() => ValueTask.CompletedTask;

    private static CoapSecurityContext NewSession() => new("DTLS 1.2", CoapPeerIdentity.FromPreSharedKey("client-1"u8));
}
