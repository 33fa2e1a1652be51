using CoapNet.Channels;
using CoapNet.Dtls.Credentials;
using CoapNet.Dtls.Sessions;
using CoapNet.Transports;

namespace CoapNet.Dtls;

/// <summary>
/// The server side of CoAP over DTLS 1.2 ("coaps", RFC 7252 section 9.1): one UDP socket, sessions demultiplexed by
/// the client's address, each message handed up with its session's <see cref="CoapSecurityContext"/> (so
/// <c>request.Peer.Identity</c> names the client) and every answer sent in the session it belongs to. A coaps endpoint
/// gets one with <c>UseDtls</c> (<see cref="CoapDtlsOptionsExtensions"/>).
/// </summary>
/// <remarks>
/// <para>
/// A ClientHello without a valid HelloVerifyRequest cookie is answered with one and leaves no state (RFC 6347
/// section 4.2.1), so spoofed sources cost a datagram each and no memory. Handshakes run on threads of their own,
/// at most <see cref="DtlsOptions.MaxConcurrentHandshakes"/> at once; an established session holds no thread: its
/// records are decrypted on the socket's receive thread. Sessions are bounded by <see cref="DtlsOptions.MaxSessions"/>
/// and closed after <see cref="DtlsOptions.SessionIdleTimeout"/> without a record.
/// </para>
/// <para>
/// A handshake that fails (unknown identity, wrong key) ends with a DTLS alert and nothing else: no CoAP message is
/// answered outside a session. Disposing sends close_notify in every session.
/// </para>
/// </remarks>
public sealed class DtlsServerTransport : DtlsTransport
{
    /// <summary>
    /// Secures datagrams carried by <paramref name="network"/> (which this transport owns from now on): the UDP socket of a
    /// coaps endpoint (what <c>UseDtls</c> does when the server starts), an in-memory network in tests, or a socket set up by hand.
    /// </summary>
    /// <param name="network">The datagram transport underneath, not started.</param>
    /// <param name="options">Credentials and bounds; the address and port are the network's.</param>
    /// <exception cref="ArgumentException">A setting is missing or out of range; the message names it.</exception>
    public DtlsServerTransport(IDatagramTransport network, DtlsServerOptions options)
        : base(CreateEngine(network ?? throw new ArgumentNullException(nameof(network)), options))
    {
    }

    private static ServerEngine CreateEngine(IDatagramTransport network, DtlsServerOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        return new ServerEngine(network, options, new DtlsCredentials(options));
    }
}
