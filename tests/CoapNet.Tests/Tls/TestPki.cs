using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace CoapNet.Tests.Tls;

/// <summary>
/// Certificates made at run time for the TLS tests (ECDSA P-256, as RFC 7252 section 9.1.3.3 asks of CoAP devices): a
/// test CA, a server certificate it issued for 127.0.0.1, ::1, localhost and device.example, a client certificate it
/// issued for CN=device-7, and, apart from them, a self-signed certificate nobody trusts and a CA that issued nothing
/// here. One set serves the whole run; <see cref="WritePem"/> puts them in files for libcoap.
/// </summary>
internal sealed class TestPki
{
    private static readonly Lazy<TestPki> Shared = new(() => new TestPki());

    private TestPki()
    {
        (Ca, ECDsa caKey) = CreateCa("CN=CoapNet Test CA");
        (Server, ServerKey) = Issue(Ca, caKey, "CN=coapnet-test-server", serverAuthentication: true, san =>
        {
            san.AddIpAddress(IPAddress.Loopback);
            san.AddIpAddress(IPAddress.IPv6Loopback);
            san.AddDnsName("localhost");
            san.AddDnsName(ServerName);
        });
        (Client, ClientKey) = Issue(Ca, caKey, "CN=device-7", serverAuthentication: false, _ => { });
        (OtherCa, _) = CreateCa("CN=Another CA");
        Untrusted = SelfSigned("CN=untrusted-server");
    }

    /// <summary>The DNS name, besides localhost, the server certificate is issued for.</summary>
    public const string ServerName = "device.example";

    /// <summary>The set of the run.</summary>
    public static TestPki Instance => Shared.Value;

    /// <summary>The test CA, with its key.</summary>
    public X509Certificate2 Ca { get; }

    /// <summary>The server's certificate, with its key, issued by <see cref="Ca"/>.</summary>
    public X509Certificate2 Server { get; }

    /// <summary>The server's key, for its PEM file.</summary>
    public ECDsa ServerKey { get; }

    /// <summary>The client's certificate (CN=device-7), with its key, issued by <see cref="Ca"/>.</summary>
    public X509Certificate2 Client { get; }

    /// <summary>The client's key, for its PEM file.</summary>
    public ECDsa ClientKey { get; }

    /// <summary>A CA that issued none of these certificates.</summary>
    public X509Certificate2 OtherCa { get; }

    /// <summary>A self-signed server certificate for 127.0.0.1, trusted by nobody.</summary>
    public X509Certificate2 Untrusted { get; }

    /// <summary>The trust roots that make <see cref="Server"/> and <see cref="Client"/> trusted.</summary>
    public X509Certificate2Collection Roots => [Ca];

    /// <summary>A self-signed certificate with its key for 127.0.0.1 (server authentication), as the sample server makes one.</summary>
    public static X509Certificate2 SelfSigned(string subject)
    {
        using ECDsa key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        CertificateRequest request = new(subject, key, HashAlgorithmName.SHA256);
        SubjectAlternativeNameBuilder san = new();
        san.AddIpAddress(IPAddress.Loopback);
        request.CertificateExtensions.Add(san.Build());
        DateTimeOffset now = DateTimeOffset.UtcNow;
        return request.CreateSelfSigned(now.AddMinutes(-5), now.AddDays(1));
    }

    /// <summary>The certificate alone, without its private key.</summary>
    public static X509Certificate2 WithoutKey(X509Certificate2 certificate)
    {
#if NET9_0_OR_GREATER
        return X509CertificateLoader.LoadCertificate(certificate.RawData);
#else
        return new X509Certificate2(certificate.RawData);
#endif
    }

    /// <summary>Writes ca.pem, other-ca.pem, server.pem, server.key, client.pem and client.key into <paramref name="directory"/>.</summary>
    public void WritePem(string directory)
    {
        File.WriteAllText(Path.Combine(directory, "ca.pem"), Ca.ExportCertificatePem());
        File.WriteAllText(Path.Combine(directory, "other-ca.pem"), OtherCa.ExportCertificatePem());
        File.WriteAllText(Path.Combine(directory, "server.pem"), Server.ExportCertificatePem());
        File.WriteAllText(Path.Combine(directory, "server.key"), ServerKey.ExportPkcs8PrivateKeyPem());
        File.WriteAllText(Path.Combine(directory, "client.pem"), Client.ExportCertificatePem());
        File.WriteAllText(Path.Combine(directory, "client.key"), ClientKey.ExportPkcs8PrivateKeyPem());
    }

    private static (X509Certificate2 Certificate, ECDsa Key) CreateCa(string subject)
    {
        ECDsa key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        CertificateRequest request = new(subject, key, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(certificateAuthority: true, hasPathLengthConstraint: false, pathLengthConstraint: 0, critical: true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, critical: true));
        request.CertificateExtensions.Add(new X509SubjectKeyIdentifierExtension(request.PublicKey, critical: false));
        DateTimeOffset now = DateTimeOffset.UtcNow;
        return (request.CreateSelfSigned(now.AddMinutes(-5), now.AddDays(2)), key);
    }

    private static (X509Certificate2 Certificate, ECDsa Key) Issue(X509Certificate2 ca, ECDsa caKey, string subject, bool serverAuthentication, Action<SubjectAlternativeNameBuilder> names)
    {
        ECDsa key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        CertificateRequest request = new(subject, key, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(false, false, 0, critical: true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.DigitalSignature, critical: true));
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension(
            [new Oid(serverAuthentication ? "1.3.6.1.5.5.7.3.1" : "1.3.6.1.5.5.7.3.2")], critical: false));
        request.CertificateExtensions.Add(X509AuthorityKeyIdentifierExtension.CreateFromCertificate(ca, true, false));
        SubjectAlternativeNameBuilder san = new();
        names(san);
        if (serverAuthentication)
        {
            request.CertificateExtensions.Add(san.Build());
        }

        DateTimeOffset now = DateTimeOffset.UtcNow;
        byte[] serial = new byte[8];
        RandomNumberGenerator.Fill(serial);
        serial[0] &= 0x7F;
        using X509Certificate2 issued = request.Create(ca.SubjectName, X509SignatureGenerator.CreateForECDsa(caKey), now.AddMinutes(-5), now.AddDays(1), serial);
        return (issued.CopyWithPrivateKey(key), key);
    }
}

/// <summary>The test PKI's PEM files (<see cref="TestPki.WritePem"/>) in a temporary directory, deleted with this.</summary>
internal sealed class PemFiles : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("coapnet-tls-").FullName;

    public PemFiles() => TestPki.Instance.WritePem(_directory);

    /// <summary>The path of <paramref name="name"/> in the directory (ca.pem, server.key, or a file of the test's own).</summary>
    public string this[string name] => Path.Combine(_directory, name);

    public void Dispose() => Directory.Delete(_directory, recursive: true);
}
