using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// Keys and certificates made at run time (no key files in the repository): ECDSA P-256 key pairs for raw public keys,
/// and a CA with leaf certificates for 127.0.0.1, written to PEM files when a libcoap peer needs them.
/// </summary>
internal static class DtlsKeys
{
    /// <summary>A new ECDSA P-256 key pair (RFC 7252 section 9.1.3.2).</summary>
    public static ECDsa NewKey() => ECDsa.Create(ECCurve.NamedCurves.nistP256);

    /// <summary>A self-signed CA certificate with its key, valid from yesterday for a year.</summary>
    public static X509Certificate2 NewAuthority(string name)
    {
        using ECDsa key = NewKey();
        CertificateRequest request = new($"CN={name}", key, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(true, false, 0, true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, true));
        request.CertificateExtensions.Add(new X509SubjectKeyIdentifierExtension(request.PublicKey, false));
        DateTimeOffset now = DateTimeOffset.UtcNow;
        return request.CreateSelfSigned(now.AddDays(-1), now.AddYears(1));
    }

    /// <summary>A leaf certificate for <paramref name="name"/> (and 127.0.0.1, localhost) issued by <paramref name="authority"/>, with its private key.</summary>
    public static X509Certificate2 NewLeaf(X509Certificate2 authority, string name, DateTimeOffset? notAfter = null)
    {
        using ECDsa key = NewKey();
        CertificateRequest request = new($"CN={name}", key, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(false, false, 0, false));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.DigitalSignature | X509KeyUsageFlags.KeyAgreement, false));
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid("1.3.6.1.5.5.7.3.1"), new Oid("1.3.6.1.5.5.7.3.2")], false));
        SubjectAlternativeNameBuilder names = new();
        names.AddIpAddress(IPAddress.Loopback);
        names.AddDnsName("localhost");
        request.CertificateExtensions.Add(names.Build());
        DateTimeOffset now = DateTimeOffset.UtcNow;
        byte[] serial = new byte[8];
        RandomNumberGenerator.Fill(serial);
        serial[0] &= 0x7F;
        using X509Certificate2 issued = request.Create(authority, now.AddDays(-1), notAfter ?? now.AddDays(300), serial);
        return issued.CopyWithPrivateKey(key);
    }

    /// <summary>A folder of PEM files for libcoap, deleted on dispose.</summary>
    public sealed class PemFolder : IDisposable
    {
        private readonly string _path = Directory.CreateTempSubdirectory("coapnet-dtls-").FullName;

        /// <summary>Writes a private key (PKCS#8) and, for raw public keys, the public key beside it; returns the file.</summary>
        public string Key(ECDsa key, string name)
        {
            string file = Path.Combine(_path, name);
            File.WriteAllText(file, key.ExportPkcs8PrivateKeyPem() + "\n" + key.ExportSubjectPublicKeyInfoPem() + "\n");
            return file;
        }

        /// <summary>Writes a certificate's PEM; returns the file.</summary>
        public string Certificate(X509Certificate2 certificate, string name)
        {
            string file = Path.Combine(_path, name);
            File.WriteAllText(file, certificate.ExportCertificatePem() + "\n");
            return file;
        }

        /// <summary>Writes a certificate's private key (PKCS#8 PEM); returns the file.</summary>
        public string CertificateKey(X509Certificate2 certificate, string name)
        {
            using ECDsa key = certificate.GetECDsaPrivateKey()!;
            string file = Path.Combine(_path, name);
            File.WriteAllText(file, key.ExportPkcs8PrivateKeyPem() + "\n");
            return file;
        }

        public void Dispose() => Directory.Delete(_path, recursive: true);
    }
}
