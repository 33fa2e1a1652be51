using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using CoapNet.Channels;
using Org.BouncyCastle.Tls;
using BcCertificate = Org.BouncyCastle.Tls.Certificate;

namespace CoapNet.Dtls.Credentials;

/// <summary>
/// What one transport authenticates with and whom it trusts, made once from its options: our raw public key and
/// certificate (each optional), and the checks of a peer's (RFC 7252 sections 9.1.3.2 and 9.1.3.3). The handshake
/// classes ask it which certificate types to offer and accept, for a signer, and for the identity a peer proved.
/// </summary>
internal sealed class DtlsCredentials
{
    private readonly DtlsOptions _options;

    public DtlsCredentials(DtlsOptions options)
    {
        _options = options;
        RawPublicKey = options.RawPublicKeyPair is { } pair ? LocalKey.FromRawPublicKey(pair, nameof(DtlsOptions.RawPublicKeyPair)) : null;
        Certificate = options.Certificate is { } certificate ? LocalKey.FromCertificate(certificate, nameof(DtlsOptions.Certificate)) : null;
        OwnTypes = Types(RawPublicKey is not null, Certificate is not null);
        TrustedTypes = Types(options.TrustsRawPublicKeys, options.TrustsCertificates);
    }

    /// <summary>Our raw public key, or null.</summary>
    public LocalKey? RawPublicKey { get; }

    /// <summary>Our certificate, or null.</summary>
    public LocalKey? Certificate { get; }

    /// <summary>The certificate types we can present, raw public key first (RFC 7250 section 4.1), or null for none.</summary>
    public short[]? OwnTypes { get; }

    /// <summary>The certificate types we can check a peer's by, raw public key first, or null for none.</summary>
    public short[]? TrustedTypes { get; }

    /// <summary>
    /// Our credential for a peer that accepts <paramref name="acceptedTypes"/> (its certificate type extension; null
    /// when it sent none, which means X.509 only, RFC 7250 section 4.1), or null when we have none it accepts.
    /// </summary>
    public LocalKey? For(short[]? acceptedTypes)
    {
        if (acceptedTypes is null)
        {
            return Certificate;
        }

        foreach (short type in acceptedTypes)
        {
            LocalKey? key = type switch
            {
                CertificateType.RawPublicKey => RawPublicKey,
                CertificateType.X509 => Certificate,
                _ => null,
            };
            if (key is not null)
            {
                return key;
            }
        }

        return null;
    }

    /// <summary>
    /// The identity a peer's certificate message proves, once its key is trusted: a raw public key the application
    /// accepts, or a certificate whose chain validates. BouncyCastle has already checked, or will check before the
    /// handshake completes, that the peer holds the private key (its signature in ServerKeyExchange or CertificateVerify).
    /// </summary>
    /// <exception cref="TlsFatalAlert">No certificate, one of a kind we did not ask for, or one we do not trust.</exception>
    public CoapPeerIdentity Verify(BcCertificate? presented)
    {
        if (presented is null || presented.IsEmpty)
        {
            // RFC 7252 section 9.1.3.2/9.1.3.3: both ends authenticate; an anonymous peer has no identity to act on.
            throw new TlsFatalAlert(AlertDescription.handshake_failure, "The peer presented no certificate or raw public key.");
        }

        byte[] leaf = presented.GetCertificateAt(0).GetEncoded();
        if (presented.CertificateType == CertificateType.RawPublicKey)
        {
            if (_options.TrustedRawPublicKeys is { } trusted && Decide(() => trusted(leaf)))
            {
                return CoapPeerIdentity.FromRawPublicKey(leaf);
            }

            throw new TlsFatalAlert(AlertDescription.bad_certificate, "The peer's raw public key is not trusted.");
        }

        if (presented.CertificateType != CertificateType.X509 || !_options.TrustsCertificates)
        {
            throw new TlsFatalAlert(AlertDescription.unsupported_certificate, "The peer presented a certificate of a kind not configured to be trusted.");
        }

        X509Certificate2 certificate = X509.Load(leaf);
        using X509Chain chain = new();
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        chain.ChainPolicy.VerificationTime = _options.TimeProvider.GetUtcNow().UtcDateTime;
        if (_options.TrustedRoots is { } roots)
        {
            chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
            chain.ChainPolicy.CustomTrustStore.AddRange(roots);
        }

        List<X509Certificate2> sent = [];
        try
        {
            for (int i = 1; i < presented.Length; i++)
            {
                X509Certificate2 other = X509.Load(presented.GetCertificateAt(i).GetEncoded());
                sent.Add(other);
                chain.ChainPolicy.ExtraStore.Add(other);
            }

            SslPolicyErrors errors = chain.Build(certificate) ? SslPolicyErrors.None : SslPolicyErrors.RemoteCertificateChainErrors;
            bool accepted = _options.CertificateValidator is { } validator
                ? Decide(() => validator(certificate, chain, errors))
                : errors == SslPolicyErrors.None;
            if (!accepted)
            {
                string reason = $"The peer's certificate {certificate.Subject} is not trusted ({Status(chain)}).";
                certificate.Dispose();
                throw new TlsFatalAlert(errors == SslPolicyErrors.None ? AlertDescription.bad_certificate : AlertDescription.unknown_ca, reason);
            }
        }
        finally
        {
            foreach (X509Certificate2 other in sent)
            {
                other.Dispose();
            }
        }

        return CoapPeerIdentity.FromCertificate(certificate);
    }

    private static short[]? Types(bool rawPublicKey, bool x509)
        => (rawPublicKey, x509) switch
        {
            (true, true) => [CertificateType.RawPublicKey, CertificateType.X509],
            (true, false) => [CertificateType.RawPublicKey],
            (false, true) => [CertificateType.X509],
            _ => null,
        };

    // An application callback that throws refuses the peer: a failure to decide is not a yes.
    private static bool Decide(Func<bool> decision)
    {
        try
        {
            return decision();
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            throw new TlsFatalAlert(AlertDescription.internal_error, "The trust callback threw: " + e.Message, e);
        }
    }

    private static string Status(X509Chain chain)
    {
        if (chain.ChainStatus.Length == 0)
        {
            return "refused by CertificateValidator";
        }

        System.Text.StringBuilder text = new();
        foreach (X509ChainStatus status in chain.ChainStatus)
        {
            text.Append(text.Length == 0 ? string.Empty : ", ").Append(status.Status);
        }

        return text.ToString();
    }
}
