using System.Net.Security;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace CoapNet.Tls;

/// <summary>What the server and the client share in setting up a handshake: ALPN, trust, and the decision on a peer's certificate.</summary>
internal static class TlsCertificates
{
    /// <summary>The ALPN protocol ID of CoAP over TLS, "coap" (RFC 8323 section 9.1; registered in its IANA section).</summary>
    public static readonly SslApplicationProtocol Alpn = new("coap");

    // The extended key usages a peer's certificate must allow when it has the extension (RFC 5280 section 4.2.1.12).
    private static readonly Oid ServerAuthentication = new("1.3.6.1.5.5.7.3.1");
    private static readonly Oid ClientAuthentication = new("1.3.6.1.5.5.7.3.2");

    /// <summary>The ALPN list both sides offer: "coap" only.</summary>
    public static List<SslApplicationProtocol> AlpnList() => [Alpn];

    /// <summary>
    /// The chain policy for the peer's certificate when the options name trust roots of their own; null to leave the
    /// system's trust store and SslStream's own policy in place.
    /// </summary>
    /// <param name="options">The options.</param>
    /// <param name="peerIsServer">True when the certificate checked is a server's (on a client), false for a client's.</param>
    public static X509ChainPolicy? ChainPolicy(TlsOptions options, bool peerIsServer)
    {
        if (options.TrustedRoots is not { } roots)
        {
            return null;
        }

        X509ChainPolicy policy = new()
        {
            TrustMode = X509ChainTrustMode.CustomRootTrust,
            RevocationMode = RevocationMode(options),
        };
        policy.CustomTrustStore.AddRange(roots);

        // A policy of our own replaces SslStream's, which would have asked for the key usage: it is asked here instead.
        policy.ApplicationPolicy.Add(peerIsServer ? ServerAuthentication : ClientAuthentication);
        return policy;
    }

    /// <summary>The revocation check the options ask for.</summary>
    public static X509RevocationMode RevocationMode(TlsOptions options)
        => options.CheckCertificateRevocation ? X509RevocationMode.Online : X509RevocationMode.NoCheck;

    /// <summary>
    /// The decision on a peer's certificate: absent is acceptable only where <paramref name="optional"/>; present, it is
    /// the validator's call when there is one, otherwise accepted only when validation found nothing wrong.
    /// </summary>
    public static RemoteCertificateValidationCallback Decide(TlsCertificateValidator? validator, bool optional)
        => (_, certificate, chain, errors) =>
        {
            if (certificate is null)
            {
                return optional;
            }

            if (validator is null)
            {
                return errors == SslPolicyErrors.None;
            }

            // On .NET the certificate SslStream hands over is an X509Certificate2 and the chain is built; both are
            // checked rather than assumed, and without them the default rule applies.
            return certificate is X509Certificate2 certificate2 && chain is not null
                ? validator(certificate2, chain, errors)
                : errors == SslPolicyErrors.None;
        };

    /// <summary>A certificate of its own, independent of the session that received it (which disposes its copy).</summary>
    public static X509Certificate2 Copy(X509Certificate certificate)
    {
#if NET9_0_OR_GREATER
        return X509CertificateLoader.LoadCertificate(certificate.GetRawCertData());
#else
        return new X509Certificate2(certificate.GetRawCertData());
#endif
    }
}
