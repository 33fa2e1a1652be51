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

    private X509Certificate2? _certificate;
    private bool _certificateSet;

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
    /// (default 128). A connection beyond it is closed at once, so a flood of connections that never finish a
    /// handshake costs bounded memory and never delays the accepting of others.
    /// </summary>
    public int MaxPendingHandshakes { get; set; } = DefaultMaxPendingHandshakes;

    /// <summary>Checks the settings before a listener uses them.</summary>
    /// <exception cref="ArgumentException">A setting is missing or out of range; the message names it.</exception>
    internal void Validate()
    {
        ValidateShared();
        if (MaxPendingHandshakes < 1)
        {
            throw new ArgumentException($"{nameof(MaxPendingHandshakes)} must be at least 1.", nameof(MaxPendingHandshakes));
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
