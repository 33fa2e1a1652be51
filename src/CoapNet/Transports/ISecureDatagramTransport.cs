using System.Net;
using CoapNet.Channels;

namespace CoapNet.Transports;

/// <summary>
/// A datagram transport that secures what it carries in sessions it establishes itself (DTLS, "coaps", RFC 7252
/// section 9.1), and that a client asks for a session before it sends: the request's <see cref="CoapPeer"/> carries
/// the session, so its response matches only when it comes back in that session (RFC 7252 section 9.1.1).
/// </summary>
/// <remarks>
/// CoapNet.Dtls's DtlsClientTransport implements it. A client asks it, whatever its scheme, for the session of each
/// request (<see cref="ConnectAsync"/>): the transport sets its sessions up itself, as aiocoap's transports fill in the
/// remote of a request.
/// </remarks>
public interface ISecureDatagramTransport : IDatagramTransport
{
    /// <summary>
    /// The session with <paramref name="remote"/>: the established one when there is one, else a new handshake
    /// (concurrent callers share it). A session that was closed, failed or aged out is replaced by a new one.
    /// </summary>
    /// <param name="remote">The server.</param>
    /// <param name="cancellationToken">Stops waiting; a handshake under way continues for other callers.</param>
    /// <returns>The session's context, to put in the <see cref="CoapPeer"/> of every request sent in it.</returns>
    /// <exception cref="System.Security.Authentication.AuthenticationException">The handshake failed: wrong key, untrusted peer, no common cipher suite.</exception>
    /// <exception cref="TimeoutException">The server did not complete the handshake in time.</exception>
    /// <exception cref="ObjectDisposedException">The transport is disposed.</exception>
    Task<CoapSecurityContext> ConnectAsync(IPEndPoint remote, CancellationToken cancellationToken = default);
}
