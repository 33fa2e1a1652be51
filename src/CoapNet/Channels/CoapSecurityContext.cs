using System.Security.Claims;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace CoapNet.Channels;

/// <summary>
/// The security session a message travelled in: a DTLS or TLS session that a secure transport established, and the
/// identity it authenticated. It is part of the <see cref="CoapPeer"/> of every message received through that
/// transport, so a response matches a request only when both travelled in the same session (RFC 7252 section 9.1.1,
/// RFC 8323 section 9), and deduplication, block-wise and Observe state is kept apart per session.
/// </summary>
/// <remarks>
/// Two contexts are equal only when they are the same object: a secure transport creates one per session it
/// establishes (a new handshake with the same peer and identity is a new session, and a response sent in the old one
/// does not answer a request sent in the new one, unless the endpoint opted out of RFC 7252 section 9.1.2 with
/// <see cref="Messaging.CoapEndpointOptions.SessionMatching"/>). Transports create it; applications read it, through
/// <see cref="CoapPeer.Identity"/>, to authorize.
/// </remarks>
public sealed class CoapSecurityContext
{
    /// <summary>Creates the context of one established session.</summary>
    /// <param name="protocol">The protocol and version, such as "DTLS 1.2" or "TLS 1.3", for logs.</param>
    /// <param name="identity">The identity the handshake authenticated for the peer.</param>
    /// <param name="sessionId">The session's identifier, for logs and diagnostics (may be empty).</param>
    /// <exception cref="ArgumentException"><paramref name="protocol"/> is empty.</exception>
    public CoapSecurityContext(string protocol, CoapPeerIdentity identity, ReadOnlyMemory<byte> sessionId = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(protocol);
        ArgumentNullException.ThrowIfNull(identity);
        Protocol = protocol;
        Identity = identity;
        SessionId = sessionId;
    }

    /// <summary>The protocol and version, such as "DTLS 1.2".</summary>
    public string Protocol { get; }

    /// <summary>Who the peer proved to be: a pre-shared key identity, a raw public key or a certificate.</summary>
    public CoapPeerIdentity Identity { get; }

    /// <summary>The session's identifier as the protocol gives it (may be empty).</summary>
    public ReadOnlyMemory<byte> SessionId { get; }

    /// <summary>
    /// The datagram channel of this session, kept here by the channel layer (<c>DatagramChannels</c>) so that a session's
    /// datagrams find it without an address cache: made once per session and again when the session moves (RFC 9146).
    /// </summary>
    internal object? Channel;

    /// <summary>The protocol and identity, such as "DTLS 1.2 psk:client-1".</summary>
    /// <returns>The text.</returns>
    public override string ToString() => $"{Protocol} {Identity}";
}

/// <summary>What a peer's identity rests on.</summary>
public enum CoapPeerIdentityKind
{
    /// <summary>A pre-shared key, named by its PSK identity (RFC 7252 section 9.1.3.1).</summary>
    PreSharedKey,

    /// <summary>A raw public key (RFC 7250; RFC 7252 section 9.1.3.2), as its SubjectPublicKeyInfo.</summary>
    RawPublicKey,

    /// <summary>An X.509 certificate (RFC 7252 section 9.1.3.3).</summary>
    Certificate,

    /// <summary>
    /// An OSCORE security context (RFC 8613): the peer protected the message with the keys derived for its Sender ID
    /// (the 'kid'), within an ID Context where there is one.
    /// </summary>
    Oscore,

    /// <summary>
    /// A user the protocol that carries CoAP authenticated, named by its claims: the ASP.NET Core user of the HTTP request
    /// that opened a WebSocket (RFC 8323 section 4), say.
    /// </summary>
    User,
}

/// <summary>
/// The identity a secure transport authenticated for a peer, for handlers that authorize requests
/// (<c>request.Peer.Identity</c>). Equal when the kind and the identifying bytes are equal, so one device is
/// recognised again across sessions and addresses.
/// </summary>
public sealed class CoapPeerIdentity : IEquatable<CoapPeerIdentity>
{
    private readonly byte[] _bytes;
    private readonly int _hashCode;

    private CoapPeerIdentity(CoapPeerIdentityKind kind, byte[] bytes, X509Certificate2? certificate, string name, ClaimsPrincipal? user = null)
    {
        Kind = kind;
        _bytes = bytes;
        Certificate = certificate;
        Name = name;
        User = user;
        HashCode hash = default;
        hash.Add(kind);
        hash.AddBytes(bytes);
        _hashCode = hash.ToHashCode();
    }

    /// <summary>What the identity rests on.</summary>
    public CoapPeerIdentityKind Kind { get; }

    /// <summary>
    /// The identifying bytes: the PSK identity, the DER SubjectPublicKeyInfo of a raw public key, the DER
    /// encoding of a certificate, or an OSCORE peer's Sender ID (its ID Context is in <see cref="Name"/>).
    /// </summary>
    public ReadOnlyMemory<byte> Value => _bytes;

    /// <summary>The certificate, for <see cref="CoapPeerIdentityKind.Certificate"/>; null otherwise.</summary>
    public X509Certificate2? Certificate { get; }

    /// <summary>The user with all its claims, for <see cref="CoapPeerIdentityKind.User"/>; null otherwise.</summary>
    public ClaimsPrincipal? User { get; }

    /// <summary>
    /// A readable name: the PSK identity as UTF-8 (hexadecimal when it is not text), "rpk:" and the SHA-256 of the
    /// public key in hexadecimal, the certificate's subject, or an OSCORE peer's kid in hexadecimal (after its ID Context
    /// and a colon where there is one).
    /// </summary>
    public string Name { get; }

    /// <summary>The identity of a peer that proved knowledge of the key named <paramref name="identity"/>.</summary>
    /// <param name="identity">The PSK identity the peer sent (RFC 4279 section 2), at most 65535 bytes.</param>
    /// <returns>The identity.</returns>
    /// <exception cref="ArgumentException">The identity is longer than 65535 bytes.</exception>
    public static CoapPeerIdentity FromPreSharedKey(ReadOnlySpan<byte> identity)
    {
        if (identity.Length > ushort.MaxValue)
        {
            throw new ArgumentException("A PSK identity is at most 65535 bytes (RFC 4279 section 5.3).", nameof(identity));
        }

        byte[] bytes = identity.ToArray();
        return new CoapPeerIdentity(CoapPeerIdentityKind.PreSharedKey, bytes, null, ReadableName(bytes));
    }

    /// <summary>The identity of a peer that proved possession of the private key of <paramref name="subjectPublicKeyInfo"/>.</summary>
    /// <param name="subjectPublicKeyInfo">The DER SubjectPublicKeyInfo of its raw public key (RFC 7250 section 3).</param>
    /// <returns>The identity.</returns>
    /// <exception cref="ArgumentException">The key is empty.</exception>
    public static CoapPeerIdentity FromRawPublicKey(ReadOnlySpan<byte> subjectPublicKeyInfo)
    {
        if (subjectPublicKeyInfo.IsEmpty)
        {
            throw new ArgumentException("A raw public key needs its SubjectPublicKeyInfo.", nameof(subjectPublicKeyInfo));
        }

        byte[] bytes = subjectPublicKeyInfo.ToArray();
        return new CoapPeerIdentity(CoapPeerIdentityKind.RawPublicKey, bytes, null, "rpk:" + Convert.ToHexString(SHA256.HashData(bytes)).ToLowerInvariant());
    }

    /// <summary>The identity of a peer that presented <paramref name="certificate"/> and proved possession of its key.</summary>
    /// <param name="certificate">Its end-entity certificate, already validated by the transport.</param>
    /// <returns>The identity.</returns>
    public static CoapPeerIdentity FromCertificate(X509Certificate2 certificate)
    {
        ArgumentNullException.ThrowIfNull(certificate);
        return new CoapPeerIdentity(CoapPeerIdentityKind.Certificate, certificate.RawData, certificate, certificate.Subject);
    }

    /// <summary>
    /// The identity of a peer that protected its messages with the OSCORE security context of Sender ID
    /// <paramref name="kid"/> (RFC 8613 section 3), which has no ID Context: "oscore:" and the kid in hexadecimal.
    /// </summary>
    /// <param name="kid">The peer's Sender ID, this side's Recipient ID (may be empty).</param>
    /// <returns>The identity.</returns>
    public static CoapPeerIdentity FromOscore(ReadOnlySpan<byte> kid)
    {
        byte[] bytes = kid.ToArray();
        return new CoapPeerIdentity(CoapPeerIdentityKind.Oscore, bytes, null, Convert.ToHexString(bytes).ToLowerInvariant());
    }

    /// <summary>
    /// The identity of a peer that protected its messages with the OSCORE security context of Sender ID
    /// <paramref name="kid"/> within <paramref name="idContext"/> (RFC 8613 sections 3.1, 5.1): "oscore:", the ID Context
    /// and the kid in hexadecimal, separated by a colon.
    /// </summary>
    /// <param name="kid">The peer's Sender ID, this side's Recipient ID (may be empty).</param>
    /// <param name="idContext">The context's ID Context (may be empty, which is not the same as none).</param>
    /// <returns>The identity; equal to another only with the same kid and ID Context.</returns>
    public static CoapPeerIdentity FromOscore(ReadOnlySpan<byte> kid, ReadOnlySpan<byte> idContext)
    {
        byte[] bytes = kid.ToArray();
        return new CoapPeerIdentity(
            CoapPeerIdentityKind.Oscore,
            bytes,
            null,
            Convert.ToHexString(idContext).ToLowerInvariant() + ":" + Convert.ToHexString(bytes).ToLowerInvariant());
    }

    /// <summary>
    /// The identity of a user that the protocol carrying CoAP authenticated, such as the user ASP.NET Core authentication
    /// found for the HTTP request that opened a WebSocket: named by <see cref="System.Security.Principal.IIdentity.Name"/>,
    /// else by its <see cref="ClaimTypes.NameIdentifier"/> claim, so the same user is recognised again on another
    /// connection; its claims are in <see cref="User"/> for handlers that authorize by them.
    /// </summary>
    /// <param name="user">The authenticated user.</param>
    /// <returns>The identity.</returns>
    /// <exception cref="ArgumentException">The user is not authenticated, or has neither a name nor a name identifier claim.</exception>
    public static CoapPeerIdentity FromUser(ClaimsPrincipal user)
    {
        ArgumentNullException.ThrowIfNull(user);
        if (user.Identity is not { IsAuthenticated: true } identity)
        {
            throw new ArgumentException("The user is not authenticated; a peer nothing authenticated has no identity.", nameof(user));
        }

        string name = identity.Name is { Length: > 0 } named ? named
            : user.FindFirst(ClaimTypes.NameIdentifier)?.Value is { Length: > 0 } id ? id
            : throw new ArgumentException("The user has neither a name nor a name identifier claim to be recognised by.", nameof(user));
        return new CoapPeerIdentity(CoapPeerIdentityKind.User, System.Text.Encoding.UTF8.GetBytes(name), null, name, user);
    }

    /// <inheritdoc/>
    /// <remarks>The name is compared too: two OSCORE identities with one kid in different ID Contexts differ.</remarks>
    public bool Equals(CoapPeerIdentity? other)
        => other is not null && (ReferenceEquals(this, other)
            || (Kind == other.Kind && _hashCode == other._hashCode && _bytes.AsSpan().SequenceEqual(other._bytes) && string.Equals(Name, other.Name, StringComparison.Ordinal)));

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is CoapPeerIdentity other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => _hashCode;

    /// <summary>The kind and the name, such as "psk:client-1" or "cert:CN=device-7".</summary>
    /// <returns>The text.</returns>
    public override string ToString() => Kind switch
    {
        CoapPeerIdentityKind.PreSharedKey => "psk:" + Name,
        CoapPeerIdentityKind.Certificate => "cert:" + Name,
        CoapPeerIdentityKind.Oscore => "oscore:" + Name,
        CoapPeerIdentityKind.User => "user:" + Name,
        _ => Name,
    };

    private static string ReadableName(byte[] bytes)
    {
        foreach (byte b in bytes)
        {
            if (b is < 0x20 or > 0x7E)
            {
                return Convert.ToHexString(bytes).ToLowerInvariant();
            }
        }

        return System.Text.Encoding.ASCII.GetString(bytes);
    }
}
