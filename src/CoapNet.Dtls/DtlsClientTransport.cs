using System.Net;
using CoapNet.Channels;
using CoapNet.Dtls.Credentials;
using CoapNet.Dtls.Sessions;
using CoapNet.Transports;

namespace CoapNet.Dtls;

/// <summary>
/// The client side of CoAP over DTLS 1.2 ("coaps", RFC 7252 section 9.1): one UDP socket, one session per server,
/// made on the first request and reused by the next ones, made again after it closed or aged out. A client's coaps
/// transport is one once <c>UseDtls</c> (<see cref="CoapDtlsOptionsExtensions"/>) secures it, and <c>coaps://</c> URIs go
/// through it; give one to <c>new CoapClient(transport)</c> over a network of your own.
/// </summary>
/// <remarks>
/// The client asks for the session (<see cref="ConnectAsync"/>) before it builds the request's <see cref="CoapPeer"/>,
/// so the request carries its session and its response is matched only when it comes back in that same session
/// (RFC 7252 section 9.1.1). A handshake that fails fails the request with
/// <see cref="System.Security.Authentication.AuthenticationException"/> as soon as the server's alert arrives, its
/// message naming the alert and its likely cause ("bad_record_mac (wrong key?)"); one that gets no answer fails with
/// <see cref="TimeoutException"/> after <see cref="DtlsOptions.HandshakeTimeout"/>. Nothing is ever sent in the clear.
/// A session ends when the server sends close_notify or a fatal alert, when it ages out here, or when a confirmable
/// message in it goes unacknowledged through all its retransmissions: a server that restarted has lost the session and
/// drops its records unanswered (RFC 6347 sections 4.1.2.7 and 4.2.8). The client is told (what was pending in the
/// session fails with a <c>CoapConnectionException</c> that says why, an observation registers again), and its next
/// request handshakes again.
/// </remarks>
public sealed class DtlsClientTransport : DtlsTransport, ISecureDatagramTransport
{
    private readonly ClientEngine _engine;

    /// <summary>Secures datagrams carried by <paramref name="network"/> (which this transport owns from now on): the client's coaps socket, or a network of your own.</summary>
    /// <param name="network">The datagram transport underneath.</param>
    /// <param name="options">Credentials and bounds.</param>
    /// <exception cref="ArgumentException">A setting is missing or out of range; the message names it.</exception>
    public DtlsClientTransport(IDatagramTransport network, DtlsClientOptions options)
        : this(CreateEngine(network ?? throw new ArgumentNullException(nameof(network)), options))
    {
    }

    private DtlsClientTransport(ClientEngine engine)
        : base(engine)
        => _engine = engine;

    /// <inheritdoc/>
    /// <remarks>
    /// May be called before the client starts the transport, to handshake before the first request (the <c>coap</c>
    /// tool does, to tell a failed handshake from a request that got no answer).
    /// </remarks>
    public Task<CoapSecurityContext> ConnectAsync(IPEndPoint remote, CancellationToken cancellationToken = default)
        => _engine.ConnectAsync(remote, cancellationToken);

    private static ClientEngine CreateEngine(IDatagramTransport network, DtlsClientOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        return new ClientEngine(network, options, new DtlsCredentials(options));
    }
}
