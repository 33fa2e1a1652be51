using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Org.BouncyCastle.Crypto;
using Org.BouncyCastle.Security;
using Org.BouncyCastle.Tls;
using Org.BouncyCastle.Tls.Crypto;
using Org.BouncyCastle.Tls.Crypto.Impl.BC;
using BcCertificate = Org.BouncyCastle.Tls.Certificate;

namespace CoapNet.Dtls.Credentials;

/// <summary>
/// One of our own signing credentials, as BouncyCastle needs it: an ECDSA P-256 private key and what we present with
/// it, a raw public key (RFC 7250) or an X.509 certificate. Made once per transport from the options; each handshake
/// that uses it gets a signer from <see cref="Signer"/>.
/// </summary>
internal sealed class LocalKey
{
    private const string P256Oid = "1.2.840.10045.3.1.7";

    private readonly AsymmetricKeyParameter _privateKey;
    private readonly byte[] _encoding;

    private LocalKey(short certificateType, byte[] encoding, AsymmetricKeyParameter privateKey)
    {
        CertificateType = certificateType;
        _encoding = encoding;
        _privateKey = privateKey;
    }

    /// <summary><see cref="Org.BouncyCastle.Tls.CertificateType.RawPublicKey"/> or <see cref="Org.BouncyCastle.Tls.CertificateType.X509"/>.</summary>
    public short CertificateType { get; }

    /// <summary>True for an ECDSA key on P-256 (secp256r1), the curve of RFC 7252 section 9.1.3.2.</summary>
    public static bool IsP256(ECDsa key)
    {
        try
        {
            ECCurve curve = key.ExportParameters(includePrivateParameters: false).Curve;
            return curve.IsNamed && (curve.Oid.Value == P256Oid || curve.Oid.FriendlyName is "nistP256" or "ECDSA_P256" or "secp256r1" or "prime256v1");
        }
        catch (CryptographicException)
        {
            return false;
        }
    }

    /// <summary>Our raw public key: the SubjectPublicKeyInfo of <paramref name="key"/>, signed for with its private key.</summary>
    /// <exception cref="ArgumentException">The private key cannot be exported.</exception>
    public static LocalKey FromRawPublicKey(ECDsa key, string optionName)
        => new(Org.BouncyCastle.Tls.CertificateType.RawPublicKey, key.ExportSubjectPublicKeyInfo(), PrivateKey(key, optionName));

    /// <summary>Our certificate, signed for with its ECDSA private key.</summary>
    /// <exception cref="ArgumentException">The private key is missing or cannot be exported.</exception>
    public static LocalKey FromCertificate(X509Certificate2 certificate, string optionName)
    {
        using ECDsa key = certificate.GetECDsaPrivateKey() ?? throw new ArgumentException($"{optionName} must come with its ECDSA private key.", optionName);
        return new(Org.BouncyCastle.Tls.CertificateType.X509, certificate.RawData, PrivateKey(key, optionName));
    }

    /// <summary>
    /// The signer for one handshake: our certificate message and the private key, with the strongest ECDSA hash the
    /// peer lists in <paramref name="peerAlgorithms"/> (TLS 1.2's signature_algorithms; SHA-256 when it lists none).
    /// </summary>
    public TlsCredentialedSigner Signer(TlsContext context, TlsCrypto crypto, IList<SignatureAndHashAlgorithm>? peerAlgorithms)
    {
        BcTlsCrypto bc = (BcTlsCrypto)crypto;
        TlsCertificate presented = CertificateType == Org.BouncyCastle.Tls.CertificateType.RawPublicKey
            ? new BcTlsRawKeyCertificate(bc, _encoding)
            : new BcTlsCertificate(bc, _encoding);
        BcCertificate certificate = new(CertificateType, null, [new CertificateEntry(presented, null)]);
        SignatureAndHashAlgorithm algorithm = TlsUtilities.ChooseSignatureAndHashAlgorithm(context, peerAlgorithms, SignatureAlgorithm.ecdsa)
            ?? throw new TlsFatalAlert(AlertDescription.handshake_failure);
        return new BcDefaultTlsCredentialedSigner(new TlsCryptoParameters(context), bc, _privateKey, certificate, algorithm);
    }

    private static AsymmetricKeyParameter PrivateKey(ECDsa key, string optionName)
    {
        byte[] pkcs8;
        try
        {
            pkcs8 = key.ExportPkcs8PrivateKey();
        }
        catch (CryptographicException e)
        {
            throw new ArgumentException($"{optionName} must hold an exportable private key: BouncyCastle's DTLS signs with its own copy ({e.Message}).", optionName, e);
        }

        try
        {
            return PrivateKeyFactory.CreateKey(pkcs8);
        }
        finally
        {
            CryptographicOperations.ZeroMemory(pkcs8);
        }
    }
}
