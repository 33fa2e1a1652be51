using System.Net;

namespace CoapNet.Transports;

/// <summary>
/// Moves datagrams between this machine and remote endpoints. A transport knows nothing of CoAP:
/// the channel layer above it frames and parses (RFC 7252 section 3).
/// </summary>
public interface IDatagramTransport : IAsyncDisposable, IDisposable
{
    /// <summary>The local endpoint the transport is bound to (with the actual port when 0 was asked for).</summary>
    IPEndPoint LocalEndPoint { get; }

    /// <summary>
    /// The URI scheme of what this transport carries (default "coap"): the endpoint gives it to every peer it hears
    /// from and to the peers it sends to, so a transport that secures its datagrams (DTLS, "coaps", RFC 7252
    /// section 9.1) keeps its peers apart from plain ones. It is the one fact about CoAP a transport states.
    /// </summary>
    string Scheme => Channels.CoapPeer.UdpScheme;

    /// <summary>Starts delivering received datagrams to <paramref name="receiver"/>. Call once.</summary>
    /// <param name="receiver">The receiver.</param>
    /// <exception cref="InvalidOperationException">The transport was already started or is disposed.</exception>
    void Start(IDatagramReceiver receiver);

    /// <summary>Sends one datagram synchronously.</summary>
    /// <param name="datagram">The bytes.</param>
    /// <param name="remote">The destination.</param>
    /// <exception cref="ObjectDisposedException">The transport is disposed.</exception>
    void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote);

    /// <summary>
    /// Sends one datagram in the session <paramref name="securityContext"/>: the channel layer calls this for every
    /// message, with the context of the peer it goes to. An unsecured transport ignores the context (it is always
    /// null there); a secure one sends in that session, or drops the datagram when the session is gone, never
    /// sending it in another or in the clear (RFC 7252 section 9.1.1).
    /// </summary>
    /// <param name="datagram">The bytes.</param>
    /// <param name="remote">The destination.</param>
    /// <param name="securityContext">The session, as received in <see cref="IDatagramReceiver.OnDatagram(ReadOnlySpan{byte}, IPEndPoint, Channels.CoapSecurityContext?)"/>; null for none.</param>
    /// <exception cref="ObjectDisposedException">The transport is disposed.</exception>
    void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote, Channels.CoapSecurityContext? securityContext) => Send(datagram, remote);

    /// <summary>
    /// Told by the message layer when a confirmable message to <paramref name="remote"/> in <paramref name="securityContext"/>
    /// got neither ACK nor RST after MAX_RETRANSMIT retransmissions (RFC 7252 section 4.2), before the exchange fails.
    /// A transport with sessions may take it as the evidence that the peer no longer has the session (a server that
    /// restarted drops records of sessions it does not know, RFC 6347 section 4.1.2.7) and end it, reporting that
    /// through <see cref="IDatagramReceiver.OnSessionLost"/>; the default does nothing, as a plain UDP transport should.
    /// </summary>
    /// <param name="remote">The destination.</param>
    /// <param name="securityContext">The session the message went in; null on an unsecured transport.</param>
    void OnUnacknowledged(IPEndPoint remote, Channels.CoapSecurityContext? securityContext)
    {
    }

    /// <summary>Sends one datagram.</summary>
    /// <param name="datagram">The bytes; the caller keeps them unchanged until the returned task completes.</param>
    /// <param name="remote">The destination.</param>
    /// <param name="cancellationToken">Cancels the send.</param>
    /// <returns>A task that completes when the datagram is handed to the network stack.</returns>
    /// <exception cref="ObjectDisposedException">The transport is disposed.</exception>
    ValueTask SendAsync(ReadOnlyMemory<byte> datagram, IPEndPoint remote, CancellationToken cancellationToken = default);
}
