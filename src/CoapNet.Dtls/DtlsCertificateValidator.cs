using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace CoapNet.Dtls;

/// <summary>
/// Decides whether a peer's X.509 certificate (RFC 7252 section 9.1.3.3) is accepted, after the transport built its
/// chain against <see cref="DtlsOptions.TrustedRoots"/> (or the system's roots when none are given), as .NET's
/// <c>RemoteCertificateValidationCallback</c> does for TLS. Runs on a handshake thread, after the peer proved it holds
/// the certificate's private key.
/// </summary>
/// <param name="certificate">The peer's end-entity certificate.</param>
/// <param name="chain">The chain built for it, with the certificates the peer sent as extra candidates.</param>
/// <param name="errors"><see cref="SslPolicyErrors.None"/> when the chain ends at a trusted root and every certificate
/// in it is valid now; <see cref="SslPolicyErrors.RemoteCertificateChainErrors"/> otherwise (the chain's status says
/// why). The name is not checked: a DTLS session is made to an address, so the callback checks names when it needs to.</param>
/// <returns>True to accept the certificate; false fails the handshake with a bad_certificate alert.</returns>
public delegate bool DtlsCertificateValidator(X509Certificate2 certificate, X509Chain chain, SslPolicyErrors errors);
