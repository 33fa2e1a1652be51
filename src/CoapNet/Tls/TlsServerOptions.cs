using System.Security.Cryptography.X509Certificates;

namespace CoapNet.Tls;

/// <summary>
/// How a server's CoAP over TLS endpoint (<c>coaps+tcp</c>, RFC 8323 section 9.1) authenticates: its certificate, and
/// whether and how it asks clients for theirs. Given to an endpoint with <see cref="CoapListenOptionsTlsExtensions.UseTls(Server.CoapListenOptions, TlsServerOptions)"/>.
/// </summary>
/// <remarks>
/// Every connection is one TLS session; the client's certificate, when it sent one, is the
/// <see cref="Channels.CoapPeerIdentity"/> of every request on it (<c>request.Peer.Identity</c>). TLS with a pre-shared key is
/// not available: .NET's TLS has no PSK (see <see cref="TlsOptions"/>).
/// </remarks>
public sealed class TlsServerOptions : TlsOptions
{
    /// <summary>The default coaps+tcp port: 5684 (RFC 8323 section 8.2), over TCP (UDP 5684 is coaps over DTLS).</summary>
    public const int DefaultPort = 5684;

    /// <summary>The default <see cref="MaxPendingHandshakes"/>: 128.</summary>
    public const int DefaultMaxPendingHandshakes = 128;

    /// <summary>The default <see cref="MaxPendingHandshakesPerAddress"/>: 16.</summary>
    public const int DefaultMaxPendingHandshakesPerAddress = 16;

    /// <summary>A server's default <see cref="TlsOptions.HandshakeTimeout"/>: 5 seconds, shorter than a client's.</summary>
    public static readonly TimeSpan DefaultServerHandshakeTimeout = TimeSpan.FromSeconds(5);

    private X509Certificate2? _certificate;
    private bool _certificateSet;

    /// <summary>
    /// Server options with a short <see cref="TlsOptions.HandshakeTimeout"/> (<see cref="DefaultServerHandshakeTimeout"/>):
    /// a server holds a place for each handshake in progress, and a TLS handshake takes two round trips (three with
    /// TLS 1.2), well within 5 s on a slow link, as Kestrel's and nginx's short handshake timeouts assume.
    /// </summary>
    public TlsServerOptions() => HandshakeTimeout = DefaultServerHandshakeTimeout;

    /// <summary>
    /// The server's certificate, with its private key; required. Its intermediate certificates, if any, go in
    /// <see cref="CertificateChain"/>.
    /// </summary>
    public X509Certificate2? Certificate
    {
        get => _certificate;
        set
        {
            _certificate = value;
            _certificateSet = value is not null;
        }
    }

    /// <summary>Intermediate certificates sent with <see cref="Certificate"/> so clients can build its chain; null for none.</summary>
    public X509Certificate2Collection? CertificateChain { get; set; }

    /// <summary>Whether clients are asked for a certificate (default <see cref="TlsClientCertificateMode.None"/>).</summary>
    public TlsClientCertificateMode ClientCertificateMode { get; set; } = TlsClientCertificateMode.None;

    /// <summary>
    /// How many connections may be in their TLS handshake, or handshaken and not yet taken up by the server, at once
    /// (default 128). At the bound a new connection takes the place of a handshake whose peer never spoke (the one open
    /// longest first) or has been silent for a second, and is closed at once when there is none, so a flood of
    /// connections that never finish a handshake costs bounded memory, never delays the accepting of others, and does
    /// not shut new clients out.
    /// </summary>
    public int MaxPendingHandshakes { get; set; } = DefaultMaxPendingHandshakes;

    /// <summary>
    /// How many of <see cref="MaxPendingHandshakes"/> one address may hold (default 16): an IPv4 address, or an IPv6
    /// /64. Generous, since clients behind carrier-grade NAT share addresses; at the bound a new connection from that
    /// address takes the place of one of its own silent handshakes, as at <see cref="MaxPendingHandshakes"/>.
    /// </summary>
    public int MaxPendingHandshakesPerAddress { get; set; } = DefaultMaxPendingHandshakesPerAddress;

    /// <summary>Checks the settings before a listener uses them.</summary>
    /// <exception cref="ArgumentException">A setting is missing or out of range; the message names it.</exception>
    internal void Validate()
    {
        ValidateShared();
        if (MaxPendingHandshakes < 1)
        {
            throw new ArgumentException($"{nameof(MaxPendingHandshakes)} must be at least 1.", nameof(MaxPendingHandshakes));
        }

        if (MaxPendingHandshakesPerAddress < 1)
        {
            throw new ArgumentException($"{nameof(MaxPendingHandshakesPerAddress)} must be at least 1.", nameof(MaxPendingHandshakesPerAddress));
        }

        if (!Enum.IsDefined(ClientCertificateMode))
        {
            throw new ArgumentException($"{nameof(ClientCertificateMode)} {ClientCertificateMode} is not a mode.", nameof(ClientCertificateMode));
        }

        if (!_certificateSet)
        {
            throw new ArgumentException($"{nameof(Certificate)} must be set to serve coaps+tcp: a TLS server authenticates with a certificate (.NET's TLS has no pre-shared keys).", nameof(Certificate));
        }

        RequireCertificateKey();
    }

    // Apart, and never inlined, like RequirePrivateKey: every server validates its TLS options, and a body that names
    // X509Certificate2 makes the JIT load the platform's cryptography library (about 1 MB of resident memory) into
    // servers without coaps+tcp (issue 25). Validate reads a flag the setter keeps instead.
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private void RequireCertificateKey() => RequirePrivateKey(_certificate!, nameof(Certificate));
}
