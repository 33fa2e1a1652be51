using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace CoapNet.Samples.Server;

/// <summary>The sample server's coaps+tcp certificate when none is given: self-signed, made at start, never stored.</summary>
internal static class SampleCertificate
{
    /// <summary>
    /// A self-signed certificate with a new ECDSA P-256 key (the curve RFC 7252 section 9.1.3.3 names for CoAP), valid
    /// for 30 days, for the loopback addresses, localhost, this machine's name and <paramref name="address"/>.
    /// </summary>
    public static X509Certificate2 CreateSelfSigned(IPAddress address)
    {
        using ECDsa key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        CertificateRequest request = new("CN=CoapNet sample server", key, HashAlgorithmName.SHA256);
        SubjectAlternativeNameBuilder names = new();
        names.AddDnsName("localhost");
        names.AddDnsName(Environment.MachineName);
        names.AddIpAddress(IPAddress.Loopback);
        names.AddIpAddress(IPAddress.IPv6Loopback);
        if (!address.Equals(IPAddress.Any) && !address.Equals(IPAddress.IPv6Any) && !IPAddress.IsLoopback(address))
        {
            names.AddIpAddress(address);
        }

        request.CertificateExtensions.Add(names.Build());
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.DigitalSignature, critical: true));
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid("1.3.6.1.5.5.7.3.1")], critical: false));
        DateTimeOffset now = DateTimeOffset.UtcNow;
        return request.CreateSelfSigned(now.AddMinutes(-5), now.AddDays(30));
    }

    /// <summary>The SHA-256 fingerprint as openssl x509 -fingerprint -sha256 prints it (hex pairs joined by colons), for clients that pin it.</summary>
    public static string Fingerprint(X509Certificate2 certificate)
        => string.Join(':', certificate.GetCertHashString(HashAlgorithmName.SHA256).Chunk(2).Select(pair => new string(pair)));
}
