using System.Net;
using CoapNet.Channels;
using CoapNet.Dtls.Credentials;
using CoapNet.Dtls.Sessions;
using CoapNet.Transports;

namespace CoapNet.Dtls;

/// <summary>
/// The server side of CoAP over DTLS 1.2 ("coaps", RFC 7252 section 9.1): one UDP socket, sessions demultiplexed by
/// the client's address, each message handed up with its session's <see cref="CoapSecurityContext"/> (so
/// <c>request.Peer.Identity</c> names the client) and every answer sent in the session it belongs to. Give it to
/// <c>CoapServerOptions.DatagramTransports</c>.
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
    /// <summary>Binds a UDP socket as <paramref name="options"/> say (default [::]:5684).</summary>
    /// <param name="options">Credentials, address, bounds.</param>
    /// <exception cref="ArgumentException">A setting is missing or out of range; the message names it.</exception>
    /// <exception cref="CoapBindException">The address cannot be bound.</exception>
    public DtlsServerTransport(DtlsServerOptions options)
        : base(CreateEngine(null, options))
    {
    }

    /// <summary>Secures datagrams carried by <paramref name="network"/> (which this transport owns from now on): for tests over an in-memory network, or a socket configured by hand.</summary>
    /// <param name="network">The datagram transport underneath.</param>
    /// <param name="options">Credentials and bounds; the address and port are the network's.</param>
    /// <exception cref="ArgumentException">A setting is missing or out of range; the message names it.</exception>
    public DtlsServerTransport(IDatagramTransport network, DtlsServerOptions options)
        : base(CreateEngine(network ?? throw new ArgumentNullException(nameof(network)), options))
    {
    }

    private static ServerEngine CreateEngine(IDatagramTransport? network, DtlsServerOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();

        // Keys are copied (and refused) before the socket is bound, so a bad key leaves no socket behind.
        DtlsCredentials credentials = new(options);
        return new ServerEngine(network ?? Bind(new IPEndPoint(options.Address, options.Port)), options, credentials);
    }
}
