using System.Security.Cryptography.X509Certificates;

namespace CoapNet.Tls;

/// <summary>
/// How a client connects over TLS (<c>coaps+tcp</c>, RFC 8323 section 9.1): which servers it trusts and, when servers
/// ask, its own certificate. Set as <see cref="Client.CoapClientOptions.Tls"/>.
/// </summary>
/// <remarks>
/// The server's certificate must chain to <see cref="TlsOptions.TrustedRoots"/> (or the system's roots) and name the
/// host of the URI, which is sent as SNI when it is a name; <see cref="TlsOptions.CertificateValidator"/> decides in
/// their place when set. TLS with a pre-shared key is not available: .NET's TLS has no PSK (see <see cref="TlsOptions"/>).
/// </remarks>
public sealed class TlsClientOptions : TlsOptions
{
    /// <summary>The client's certificate, with its private key, for servers that ask for one; null (the default) for none.</summary>
    public X509Certificate2? Certificate { get; set; }

    /// <summary>Checks the settings before a factory uses them.</summary>
    /// <exception cref="ArgumentException">A setting is out of range; the message names it.</exception>
    internal void Validate()
    {
        ValidateShared();
        if (Certificate is not null)
        {
            RequirePrivateKey(Certificate, nameof(Certificate));
        }
    }
}
