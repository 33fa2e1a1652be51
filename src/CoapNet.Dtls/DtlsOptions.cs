using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Microsoft.Extensions.Logging;

namespace CoapNet.Dtls;

/// <summary>What the DTLS server and client transports share: session bounds, ageing, record size, clock and logging.</summary>
public abstract class DtlsOptions
{
    private protected DtlsOptions()
    {
    }

    /// <summary>
    /// The most established sessions kept at once (default 150,000, Californium's bound). At it a server evicts the
    /// least recently active session idle past <see cref="DtlsServerOptions.SessionEvictionThreshold"/> for a new
    /// client, and refuses the client with a fatal internal_error alert when none is, so a flood of handshakes cannot
    /// push out the devices in use; a client refuses to start a handshake past it.
    /// </summary>
    public int MaxSessions { get; set; } = 150_000;

    /// <summary>
    /// How long a session may go without receiving an authenticated record before it is closed and forgotten
    /// (default 30 minutes; a device that sleeps longer handshakes again). Measured on <see cref="TimeProvider"/>.
    /// </summary>
    public TimeSpan SessionIdleTimeout { get; set; } = TimeSpan.FromMinutes(30);

    /// <summary>
    /// Sessions an ageing sweep looks at before it lets the thread pool's other work run (about 10 ms of work at the
    /// default); the sweep goes on as a new work item. Internal: tests make it small to see a sweep span work items.
    /// </summary>
    internal int SweepSlice { get; set; } = 4_096;

    /// <summary>
    /// The most handshakes under way at once (default 64). Each runs on a thread of its own, parked while it waits for
    /// the peer's next flight (BouncyCastle's DTLS handshake is a blocking call); on a server the wait is bounded by
    /// <see cref="DtlsServerOptions.HandshakeStallTimeout"/>, and a stalled handshake gives its place to a new client.
    /// </summary>
    public int MaxConcurrentHandshakes { get; set; } = 64;

    /// <summary>How long a handshake may take in all before it is abandoned (default 30 s, RFC 6347 section 4.2.4 retransmits within it).</summary>
    public TimeSpan HandshakeTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>
    /// The largest datagram sent or received in an established session, in bytes (default 1,500: a CoAP message of
    /// 1,152 bytes, RFC 7252 section 4.6, plus DTLS's 13-byte header and cipher overhead). A larger one received is
    /// dropped; a larger plaintext to send is refused.
    /// </summary>
    public int MaxDatagramSize { get; set; } = 1500;

    /// <summary>The clock that ages sessions and rotates cookie secrets (default <see cref="TimeProvider.System"/>).</summary>
    public TimeProvider TimeProvider { get; set; } = TimeProvider.System;

    /// <summary>Where handshakes, failures and refusals are logged; null for none. Keys are never logged.</summary>
    public ILoggerFactory? LoggerFactory { get; set; }

    /// <summary>
    /// Our key pair for raw public key authentication (RFC 7250; RFC 7252 section 9.1.3.2), an ECDSA P-256 key with
    /// its private part, or null for none. The peer learns only the public key and decides by itself whether it
    /// trusts it. Offered with TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8 and the ECDHE_ECDSA GCM suites. The transport
    /// copies the key when it is made; the object stays the caller's.
    /// </summary>
    public ECDsa? RawPublicKeyPair { get; set; }

    /// <summary>
    /// Which peers' raw public keys are trusted (RFC 7250), or null to accept none. A client with it set offers to
    /// authenticate the server by raw public key; a server with it set accepts clients authenticated that way.
    /// <see cref="RawPublicKeyTable"/> makes one over a fixed list.
    /// </summary>
    public DtlsRawPublicKeyValidator? TrustedRawPublicKeys { get; set; }

    /// <summary>
    /// Our X.509 certificate (RFC 7252 section 9.1.3.3) with its private key, an ECDSA P-256 key (the key of
    /// TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8), or null for none. The transport copies the key when it is made.
    /// Only this certificate is sent: a peer must be able to build the chain from its own roots and intermediates.
    /// </summary>
    public X509Certificate2? Certificate { get; set; }

    /// <summary>
    /// The roots a peer's certificate chain must end at (a custom trust store, as with libcoap's <c>-C ca.pem</c>),
    /// or null to use the system's roots. A peer's certificate is accepted only when its chain is valid and
    /// <see cref="CertificateValidator"/>, when set, agrees; certificates are checked at all only when this or
    /// <see cref="CertificateValidator"/> is set.
    /// </summary>
    public X509Certificate2Collection? TrustedRoots { get; set; }

    /// <summary>
    /// Has the last word on a peer's certificate once its chain is built, or null to accept exactly the certificates
    /// whose chain ends at one of <see cref="TrustedRoots"/> without errors.
    /// </summary>
    public DtlsCertificateValidator? CertificateValidator { get; set; }

    /// <summary>
    /// Whether to use Connection IDs (RFC 9146; default true): the server issues a Connection ID to each client that
    /// offers the extension and finds the session by it, so a client whose address or port changes (a NAT rebinding)
    /// keeps its session; the client offers the extension. The peer's address moves only with a newer record that
    /// authenticates (RFC 9146 section 6). Peers that do not know the extension ignore it.
    /// </summary>
    public bool UseConnectionId { get; set; } = true;

    /// <summary>A raw public key trust decision over a fixed list of keys, for configuration and tests.</summary>
    /// <param name="subjectPublicKeyInfos">The trusted keys as DER SubjectPublicKeyInfo.</param>
    /// <returns>The validator; it copies the list, so later changes to it are not seen.</returns>
    /// <exception cref="ArgumentException">A key is empty.</exception>
    public static DtlsRawPublicKeyValidator RawPublicKeyTable(IEnumerable<byte[]> subjectPublicKeyInfos)
    {
        ArgumentNullException.ThrowIfNull(subjectPublicKeyInfos);
        List<byte[]> keys = [];
        foreach (byte[] key in subjectPublicKeyInfos)
        {
            Require(key is { Length: > 0 }, nameof(subjectPublicKeyInfos), "must hold non-empty SubjectPublicKeyInfo encodings");
            keys.Add((byte[])key.Clone());
        }

        return spki =>
        {
            foreach (byte[] key in keys)
            {
                if (spki.SequenceEqual(key))
                {
                    return true;
                }
            }

            return false;
        };
    }

    /// <summary>Checks the shared settings.</summary>
    /// <exception cref="ArgumentException">A setting is out of range; the message names it.</exception>
    private protected void ValidateShared()
    {
        Require(MaxSessions >= 1, nameof(MaxSessions), "must be at least 1");
        Require(SessionIdleTimeout > TimeSpan.Zero, nameof(SessionIdleTimeout), "must be positive");
        Require(MaxConcurrentHandshakes >= 1, nameof(MaxConcurrentHandshakes), "must be at least 1");
        Require(HandshakeTimeout > TimeSpan.Zero && HandshakeTimeout.TotalMilliseconds <= int.MaxValue, nameof(HandshakeTimeout), "must be positive and under 24 days");
        Require(MaxDatagramSize is >= 256 and <= 16_384 + 256, nameof(MaxDatagramSize), "must be between 256 and 16,640 bytes (a DTLS record carries at most 16,384 bytes of plaintext)");
        Require(TimeProvider is not null, nameof(TimeProvider), "must not be null");
        Require(RawPublicKeyPair is null || Credentials.LocalKey.IsP256(RawPublicKeyPair), nameof(RawPublicKeyPair), "must be an ECDSA key on the P-256 curve (RFC 7252 section 9.1.3.2)");
        Require(Certificate is null || (Certificate.GetECDsaPublicKey() is { } key && Credentials.LocalKey.IsP256(key)), nameof(Certificate), "must hold an ECDSA P-256 public key (RFC 7252 section 9.1.3.3: TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8)");
        Require(Certificate is null || Certificate.HasPrivateKey, nameof(Certificate), "must come with its private key");
    }

    /// <summary>True when peers' raw public keys can be checked.</summary>
    internal bool TrustsRawPublicKeys => TrustedRawPublicKeys is not null;

    /// <summary>True when peers' certificates can be checked.</summary>
    internal bool TrustsCertificates => TrustedRoots is not null || CertificateValidator is not null;

    private protected static void Require(bool condition, string name, string problem)
    {
        if (!condition)
        {
            throw new ArgumentException($"{name} {problem}.", name);
        }
    }
}
