using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace CoapNet.Tls;

/// <summary>
/// Decides whether a certificate a TLS peer presented is accepted, in place of the default rule (accept only when
/// <paramref name="errors"/> is <see cref="SslPolicyErrors.None"/>).
/// </summary>
/// <param name="certificate">The peer's end-entity certificate; the handshake proved it holds the private key.</param>
/// <param name="chain">
/// The chain built for it with the configured trust (the trust roots of the options when set, the system's otherwise),
/// with its status per element.
/// </param>
/// <param name="errors">
/// What that validation found: an untrusted chain, and on a client a name that does not match the host it addressed.
/// </param>
/// <returns>True to accept the certificate and go on with the handshake; false to fail it.</returns>
/// <remarks>Called on the connection's handshake, once per connection; it must not block for long.</remarks>
public delegate bool TlsCertificateValidator(X509Certificate2 certificate, X509Chain chain, SslPolicyErrors errors);
