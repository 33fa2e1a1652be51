using System.Net;

namespace CoapNet.Channels;

/// <summary>
/// Who is on the other side of an exchange: the transport (by URI scheme), the remote endpoint and,
/// for secured transports, the security context. Requests are matched to responses, duplicates are
/// detected and per-peer state is kept by this identity, never by a bare address (RFC 7252 section
/// 9.1.1: once DTLS exists, a response only matches a request sent in the same security context).
/// </summary>
/// <remarks>
/// Immutable; equal when the scheme, the security context and the host name (if any) are equal and, on an unsecured
/// transport, the endpoint. On a secured one the session is the peer and its address is the session's business: a
/// DTLS session that a Connection ID moved to a new address (RFC 9146) is the same peer, so what is pending in it
/// keeps matching (RFC 7252 section 9.1.2 matches in the same session and epoch, not at the same address).
/// </remarks>
public sealed class CoapPeer : IEquatable<CoapPeer>
{
    /// <summary>The "coap" scheme: RFC 7252 over UDP.</summary>
    public const string UdpScheme = "coap";

    /// <summary>The "coap+tcp" scheme: RFC 8323 over TCP.</summary>
    public const string TcpScheme = "coap+tcp";

    /// <summary>The "coaps" scheme: RFC 7252 over DTLS (section 9.1).</summary>
    public const string DtlsScheme = "coaps";

    /// <summary>The "coaps+tcp" scheme: RFC 8323 over TLS (sections 8.2 and 9.1).</summary>
    public const string TlsScheme = "coaps+tcp";

    private readonly int _hashCode;

    /// <summary>Creates a peer identity.</summary>
    /// <param name="scheme">The URI scheme of the transport, such as <see cref="UdpScheme"/> or <see cref="TcpScheme"/>.</param>
    /// <param name="endPoint">The remote endpoint.</param>
    /// <param name="securityContext">
    /// The session a secure transport established with the peer (DTLS, TLS), compared by reference; null on an
    /// unsecured transport.
    /// </param>
    /// <exception cref="ArgumentException">The scheme is empty.</exception>
    public CoapPeer(string scheme, IPEndPoint endPoint, CoapSecurityContext? securityContext = null)
        : this(scheme, endPoint, securityContext, null)
    {
    }

    private CoapPeer(string scheme, IPEndPoint endPoint, CoapSecurityContext? securityContext, string? hostName)
    {
        ArgumentException.ThrowIfNullOrEmpty(scheme);
        ArgumentNullException.ThrowIfNull(endPoint);
        Scheme = scheme;
        EndPoint = endPoint;
        SecurityContext = securityContext;
        HostName = hostName;
        _hashCode = HashCode.Combine(
            StringComparer.Ordinal.GetHashCode(scheme),
            securityContext is null ? endPoint : null,
            securityContext,
            hostName is null ? 0 : StringComparer.OrdinalIgnoreCase.GetHashCode(hostName));
    }

    /// <summary>The URI scheme of the transport ("coap", "coap+tcp", ...).</summary>
    public string Scheme { get; }

    /// <summary>The remote endpoint.</summary>
    public IPEndPoint EndPoint { get; }

    /// <summary>The session on a secured transport; null otherwise.</summary>
    public CoapSecurityContext? SecurityContext { get; }

    /// <summary>
    /// Who the peer proved to be on a secured transport (a PSK identity, a raw public key, a certificate), for
    /// handlers that authorize; null on an unsecured one, where nothing about the peer is authenticated.
    /// </summary>
    public CoapPeerIdentity? Identity => SecurityContext?.Identity;

    /// <summary>
    /// The host a client addressed, when the transport needs it to reach the right server: over TLS it is the server
    /// name sent in the handshake (SNI) and the name the server's certificate must carry. Null otherwise. Part of the
    /// identity, so two names served at one address get a connection each, each authenticated for its own name.
    /// </summary>
    public string? HostName { get; }

    /// <summary>Creates a "coap" (UDP) peer.</summary>
    /// <param name="endPoint">The remote endpoint.</param>
    /// <returns>The peer.</returns>
    public static CoapPeer Udp(IPEndPoint endPoint) => new(UdpScheme, endPoint);

    /// <summary>Creates a "coap+tcp" peer.</summary>
    /// <param name="endPoint">The remote endpoint.</param>
    /// <returns>The peer.</returns>
    public static CoapPeer Tcp(IPEndPoint endPoint) => new(TcpScheme, endPoint);

    /// <summary>Creates a "coaps+tcp" peer (CoAP over TLS, RFC 8323 section 9.1) to connect to as a client.</summary>
    /// <param name="endPoint">The server's endpoint.</param>
    /// <param name="hostName">
    /// The server's name (or IP address as text) the certificate must be issued for, sent as SNI when it is a name;
    /// null for the address of <paramref name="endPoint"/>.
    /// </param>
    /// <returns>The peer.</returns>
    /// <exception cref="ArgumentException"><paramref name="hostName"/> is empty.</exception>
    public static CoapPeer Tls(IPEndPoint endPoint, string? hostName = null) => ForHost(TlsScheme, endPoint, hostName);

    /// <summary>
    /// Creates a peer of <paramref name="scheme"/> that keeps the host a client addressed, for a transport that needs the
    /// name to reach the right server, as <see cref="Tls"/> does for coaps+tcp: coaps+ws sends it as SNI and checks the
    /// server's certificate against it, coap+ws and coaps+ws send it as the HTTP Host (RFC 8323 sections 4.1 and 8). For a
    /// transport factory's <see cref="Transports.CoapTransportFactory.CreatePeer"/>.
    /// </summary>
    /// <param name="scheme">The URI scheme of the transport.</param>
    /// <param name="endPoint">The server's endpoint.</param>
    /// <param name="hostName">The host the client addressed (a name, or an IP address as text); null for none.</param>
    /// <returns>The peer.</returns>
    /// <exception cref="ArgumentException">The scheme or <paramref name="hostName"/> is empty.</exception>
    public static CoapPeer ForHost(string scheme, IPEndPoint endPoint, string? hostName)
    {
        if (hostName is not null && hostName.Length == 0)
        {
            throw new ArgumentException("The host name must not be empty; pass null for the endpoint's address.", nameof(hostName));
        }

        return new(scheme, endPoint, null, hostName);
    }

    /// <summary>Equality by scheme, security context, host name and, without a security context, endpoint.</summary>
    /// <param name="left">One peer.</param>
    /// <param name="right">The other.</param>
    /// <returns>True when equal.</returns>
    public static bool operator ==(CoapPeer? left, CoapPeer? right) => left is null ? right is null : left.Equals(right);

    /// <summary>Inequality by scheme, security context, host name and, without a security context, endpoint.</summary>
    /// <param name="left">One peer.</param>
    /// <param name="right">The other.</param>
    /// <returns>True when different.</returns>
    public static bool operator !=(CoapPeer? left, CoapPeer? right) => !(left == right);

    /// <inheritdoc/>
    public bool Equals(CoapPeer? other)
        => other is not null
            && (ReferenceEquals(this, other)
                || (_hashCode == other._hashCode
                    && string.Equals(Scheme, other.Scheme, StringComparison.Ordinal)
                    && ReferenceEquals(SecurityContext, other.SecurityContext)
                    && (SecurityContext is not null || EndPoint.Equals(other.EndPoint))
                    && string.Equals(HostName, other.HostName, StringComparison.OrdinalIgnoreCase)));

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is CoapPeer other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => _hashCode;

    /// <summary>The peer as a URI authority with its scheme, such as "coap+tcp://[::1]:5683".</summary>
    /// <returns>The text.</returns>
    public override string ToString() => $"{Scheme}://{EndPoint}";
}

/// <summary>Where a received request came from and where its answer goes: a datagram channel, or a stream connection.</summary>
/// <remarks>
/// A class rather than an interface: each request's exchange asks its channel for the stages its response passes and whether
/// it is reliable several times on the way up and down, and reading a field costs less than an interface dispatch through
/// the message layer each time (issue 39).
/// </remarks>
internal abstract class PeerChannel
{
    private Messaging.ExchangeLayer? _stages;
    private bool _stagesFound;

    /// <param name="peer">The peer at the other end.</param>
    /// <param name="isReliable">True for a connection (RFC 8323: no message types), as its message layer declares.</param>
    protected PeerChannel(CoapPeer peer, bool isReliable)
    {
        Peer = peer;
        IsReliable = isReliable;
    }

    /// <summary>The peer at the other end.</summary>
    public CoapPeer Peer { get; }

    /// <summary>True over a connection, false over datagrams: what <see cref="Messaging.IMessageLayer.IsReliable"/> of <see cref="Layer"/> says.</summary>
    public bool IsReliable { get; }

    /// <summary>The message layer that answers requests received this way.</summary>
    public abstract Messaging.IMessageLayer Layer { get; }

    /// <summary>
    /// The exchange layer above <see cref="Layer"/> when it has stages, which a response from this channel's exchanges
    /// passes on its way down; null without stages. Found on first use: the layers are assembled before any request arrives
    /// and never change, so two threads that look at once find the same.
    /// </summary>
    public Messaging.ExchangeLayer? Stages
    {
        get
        {
            if (!Volatile.Read(ref _stagesFound))
            {
                _stages = Layer.Upper is Messaging.ExchangeLayer { HasStages: true } layer ? layer : null;
                Volatile.Write(ref _stagesFound, true);
            }

            return _stages;
        }
    }

    /// <summary>True when <paramref name="message"/>, sent with a token of <paramref name="tokenLength"/> bytes, fits one message to <see cref="Peer"/>.</summary>
    public abstract bool Fits(Messages.CoapMessage message, int tokenLength);
}
