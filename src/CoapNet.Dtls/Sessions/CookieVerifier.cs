using System.Net;
using CoapNet.Transports;
using Org.BouncyCastle.Tls;
using Org.BouncyCastle.Tls.Crypto;

namespace CoapNet.Dtls.Sessions;

/// <summary>
/// HelloVerifyRequest cookies (RFC 6347 section 4.2.1): a ClientHello without a cookie that proves the client
/// receives at its source address is answered with a cookie and creates no state. The cookie is an HMAC of the
/// source and the ClientHello under a secret replaced every <see cref="DtlsServerOptions.CookieSecretLifetime"/>;
/// the previous secret is still accepted, so a client that got its cookie just before the change is not refused.
/// </summary>
/// <remarks>
/// Called on the transport's receive threads: one, and briefly two while one takes over a socket from a stalled call,
/// or several with <see cref="UdpTransportOptions.ReceiveSockets"/> above 1; a lock orders them (its cost is nothing
/// beside a ClientHello's HMAC).
/// </remarks>
internal sealed class CookieVerifier
{
    private readonly TlsCrypto _crypto;
    private readonly TimeProvider _time;
    private readonly TimeSpan _lifetime;
    private readonly Sender _sender;
    private readonly Capture _capture = new();
    private DtlsVerifier _current;
    private DtlsVerifier? _previous;
    private long _madeAt;

    public CookieVerifier(TlsCrypto crypto, TimeProvider time, TimeSpan lifetime, IDatagramTransport network)
    {
        _crypto = crypto;
        _time = time;
        _lifetime = lifetime;
        _sender = new Sender(network);
        _current = new DtlsVerifier(crypto);
        _madeAt = time.GetTimestamp();
    }

    /// <summary>
    /// The verified request when <paramref name="datagram"/> is a ClientHello with a valid cookie; null otherwise,
    /// after answering a well-formed one with a HelloVerifyRequest carrying the current cookie.
    /// </summary>
    public DtlsRequest? Verify(ReadOnlySpan<byte> datagram, IPEndPoint remote)
    {
        lock (_capture)
        {
            return VerifyLocked(datagram, remote);
        }
    }

    private DtlsRequest? VerifyLocked(ReadOnlySpan<byte> datagram, IPEndPoint remote)
    {
        if (_time.GetElapsedTime(_madeAt) >= _lifetime)
        {
            _previous = _current;
            _current = new DtlsVerifier(_crypto);
            _madeAt = _time.GetTimestamp();
        }

        byte[] data = datagram.ToArray();
        byte[] clientId = DtlsRecords.ClientId(remote);
        _capture.Clear();
        DtlsRequest? request = _current.VerifyRequest(clientId, data, 0, data.Length, _capture);
        if (request is null && _previous is not null)
        {
            request = _previous.VerifyRequest(clientId, data, 0, data.Length, Discard.Instance);
        }

        if (request is null && _capture.Datagram is { } helloVerifyRequest)
        {
            _sender.Remote = remote;
            _sender.Send(helloVerifyRequest);
        }

        return request;
    }

    /// <summary>Keeps the HelloVerifyRequest the current verifier would send, so it is sent only when no secret accepts the cookie.</summary>
    private sealed class Capture : DatagramSender
    {
        public byte[]? Datagram { get; private set; }

        public void Clear() => Datagram = null;

        public int GetSendLimit() => 1024;

        public void Send(byte[] buf, int off, int len) => Datagram = buf.AsSpan(off, len).ToArray();

        public void Send(ReadOnlySpan<byte> buffer) => Datagram = buffer.ToArray();
    }

    /// <summary>Swallows what the previous verifier would send: its cookie is not handed out any more.</summary>
    private sealed class Discard : DatagramSender
    {
        public static readonly Discard Instance = new();

        public int GetSendLimit() => 1024;

        public void Send(byte[] buf, int off, int len)
        {
        }

        public void Send(ReadOnlySpan<byte> buffer)
        {
        }
    }

    private sealed class Sender(IDatagramTransport network)
    {
        public IPEndPoint? Remote { get; set; }

        public void Send(ReadOnlySpan<byte> datagram)
        {
            try
            {
                network.Send(datagram, Remote!);
            }
            catch (System.Net.Sockets.SocketException)
            {
                // A spoofed source may be unreachable; the cookie was for it alone.
            }
        }
    }
}
