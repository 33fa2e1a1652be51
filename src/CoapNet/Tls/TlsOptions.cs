using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;

namespace CoapNet.Tls;

/// <summary>
/// What both sides of CoAP over TLS (<c>coaps+tcp</c>, RFC 8323 section 9.1) configure: whom they trust, how long a
/// handshake may take, which TLS versions they speak.
/// </summary>
/// <remarks>
/// TLS here is the platform's (<see cref="System.Net.Security.SslStream"/>), authenticated by X.509 certificates.
/// .NET offers no TLS pre-shared keys (PSK) and no raw public keys over TLS, so the PreSharedKey and RawPublicKey modes
/// of RFC 7252 section 9 are not available over coaps+tcp; they are over coaps (DTLS, CoapNet.Dtls).
/// </remarks>
public abstract class TlsOptions
{
    /// <summary>The default <see cref="HandshakeTimeout"/>: 10 seconds.</summary>
    public static readonly TimeSpan DefaultHandshakeTimeout = TimeSpan.FromSeconds(10);

    private protected TlsOptions()
    {
    }

    /// <summary>
    /// The certificate authorities the peer's certificate must chain to, in place of the system's trust store; null
    /// (the default) trusts the system's. Self-signed certificates of devices are trusted by listing them here.
    /// </summary>
    public X509Certificate2Collection? TrustedRoots { get; set; }

    /// <summary>
    /// Decides on the peer's certificate in place of the default rule (accepted only when it chains to a trusted root
    /// and, on a client, names the host addressed); null for the default rule. It receives what validation found.
    /// </summary>
    public TlsCertificateValidator? CertificateValidator { get; set; }

    /// <summary>
    /// How long a TLS handshake may take from the connection's opening (default 10 s): a peer that connects and stays
    /// silent, or stalls mid-handshake, loses its connection then.
    /// </summary>
    public TimeSpan HandshakeTimeout { get; set; } = DefaultHandshakeTimeout;

    /// <summary>The TLS versions allowed; <see cref="SslProtocols.None"/> (the default) lets the system choose (TLS 1.2 and 1.3 today).</summary>
    public SslProtocols EnabledProtocols { get; set; } = SslProtocols.None;

    /// <summary>
    /// True to check the revocation of the peer's certificate chain online (CRL or OCSP, which may wait on the network
    /// during the handshake); false (the default) not to, as constrained deployments without such services need.
    /// </summary>
    public bool CheckCertificateRevocation { get; set; }

    /// <summary>Checks the settings both sides share.</summary>
    /// <exception cref="ArgumentException">A setting is out of range; the message names it.</exception>
    private protected void ValidateShared()
    {
        // Infinite is refused too: a peer that never finishes its handshake would hold its connection for ever.
        if (HandshakeTimeout <= TimeSpan.Zero)
        {
            throw new ArgumentException($"{nameof(HandshakeTimeout)} must be positive and finite.", nameof(HandshakeTimeout));
        }
    }

    /// <summary>Refuses a certificate without its private key, which a TLS endpoint needs to prove it holds.</summary>
    /// <exception cref="ArgumentException">It has no private key; the message names <paramref name="name"/>.</exception>
    /// <remarks>
    /// Never inlined: the JIT loads the assemblies an inlined body names when it compiles the caller, and every server
    /// validates its TLS options, so inlining this into that check loaded the platform's cryptography library (about
    /// 1 MB of resident memory) into servers without coaps+tcp (issue 25).
    /// </remarks>
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private protected static void RequirePrivateKey(X509Certificate2 certificate, string name)
    {
        if (!certificate.HasPrivateKey)
        {
            throw new ArgumentException($"{name} ('{certificate.Subject}') has no private key; load it with its key (a PFX, or PEM certificate and key files).", name);
        }
    }
}
