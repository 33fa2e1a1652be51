using System.Net;

namespace CoapNet.Channels;

/// <summary>
/// Who is on the other side of an exchange: the transport (by URI scheme), the remote endpoint and,
/// for secured transports, the security context. Requests are matched to responses, duplicates are
/// detected and per-peer state is kept by this identity, never by a bare address (RFC 7252 section
/// 9.1.1: once DTLS exists, a response only matches a request sent in the same security context).
/// </summary>
/// <remarks>Immutable; equal when the scheme, the endpoint and the security context are equal.</remarks>
public sealed class CoapPeer : IEquatable<CoapPeer>
{
    /// <summary>The "coap" scheme: RFC 7252 over UDP.</summary>
    public const string UdpScheme = "coap";

    /// <summary>The "coap+tcp" scheme: RFC 8323 over TCP.</summary>
    public const string TcpScheme = "coap+tcp";

    /// <summary>The "coaps" scheme: RFC 7252 over DTLS (section 9.1).</summary>
    public const string DtlsScheme = "coaps";

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
    {
        ArgumentException.ThrowIfNullOrEmpty(scheme);
        ArgumentNullException.ThrowIfNull(endPoint);
        Scheme = scheme;
        EndPoint = endPoint;
        SecurityContext = securityContext;
        _hashCode = HashCode.Combine(StringComparer.Ordinal.GetHashCode(scheme), endPoint, securityContext);
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

    /// <summary>Creates a "coap" (UDP) peer.</summary>
    /// <param name="endPoint">The remote endpoint.</param>
    /// <returns>The peer.</returns>
    public static CoapPeer Udp(IPEndPoint endPoint) => new(UdpScheme, endPoint);

    /// <summary>Creates a "coap+tcp" peer.</summary>
    /// <param name="endPoint">The remote endpoint.</param>
    /// <returns>The peer.</returns>
    public static CoapPeer Tcp(IPEndPoint endPoint) => new(TcpScheme, endPoint);

    /// <summary>Equality by scheme, endpoint and security context.</summary>
    /// <param name="left">One peer.</param>
    /// <param name="right">The other.</param>
    /// <returns>True when equal.</returns>
    public static bool operator ==(CoapPeer? left, CoapPeer? right) => left is null ? right is null : left.Equals(right);

    /// <summary>Inequality by scheme, endpoint and security context.</summary>
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
                    && EndPoint.Equals(other.EndPoint)
                    && ReferenceEquals(SecurityContext, other.SecurityContext)));

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is CoapPeer other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => _hashCode;

    /// <summary>The peer as a URI authority with its scheme, such as "coap+tcp://[::1]:5683".</summary>
    /// <returns>The text.</returns>
    public override string ToString() => $"{Scheme}://{EndPoint}";
}

/// <summary>Where a received request came from and where its answer goes: a datagram channel, or a stream connection.</summary>
internal interface IPeerChannel
{
    /// <summary>The peer at the other end.</summary>
    CoapPeer Peer { get; }

    /// <summary>The message layer that answers requests received this way.</summary>
    Messaging.IMessageLayer Layer { get; }
}
