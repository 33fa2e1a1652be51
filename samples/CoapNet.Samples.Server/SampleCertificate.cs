using System.Net;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using CoapNet.Channels;
using CoapNet.Dtls;
using CoapNet.Server;
using CoapNet.Tls;

namespace CoapNet.Samples.Server;

/// <summary>
/// The sample server's secure endpoints: coaps with its demo pre-shared key, and coaps+tcp with the certificate given or,
/// when none is, a self-signed one made at start and never stored.
/// </summary>
/// <remarks>
/// Apart from the program's main method so that a server with both off loads neither BouncyCastle nor the platform's
/// cryptography library (about 1 MB of resident memory, issue 25): the JIT loads what a method names when it compiles
/// the method (and what the methods it inlines name), whether or not that code runs.
/// </remarks>
internal static class SampleCertificate
{
    /// <summary>A coaps endpoint at <paramref name="local"/> with the one demo pre-shared key (RFC 7252 section 9.1.3.1).</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void ListenDtls(CoapServerOptions options, IPEndPoint local, string pskIdentity, string pskKey)
        => ListenDtls(options, local, DtlsServerOptions.PskTable(new Dictionary<string, byte[]> { [pskIdentity] = System.Text.Encoding.UTF8.GetBytes(pskKey) }));

    /// <summary>
    /// A coaps endpoint at <paramref name="local"/> with a pre-shared key per identity (RFC 7252 section 9.1.3.1): the
    /// demo key in a table, or a fleet's from --psk-file (<see cref="SampleFleet"/>), whose keys are one per device, so
    /// a device back from a new address replaces its old session (<paramref name="oneSessionPerIdentity"/>).
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void ListenDtls(CoapServerOptions options, IPEndPoint local, DtlsPskStore keys, bool oneSessionPerIdentity = false)
        => options.Listen(CoapPeer.DtlsScheme, local, endpoint => endpoint.UseDtls(new DtlsServerOptions { PskKeys = keys, OneSessionPerIdentity = oneSessionPerIdentity }));

    /// <summary>
    /// A coaps+tcp endpoint at <paramref name="local"/> with the PEM certificate and key given, or a self-signed certificate
    /// made now; false when they cannot be read. <paramref name="message"/> is the line to print: the certificate and its
    /// fingerprint, or what went wrong.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static bool TryListenTls(CoapServerOptions options, IPEndPoint local, string? certFile, string? keyFile, out string message)
    {
        X509Certificate2 certificate;
        try
        {
            certificate = certFile is null || keyFile is null ? CreateSelfSigned(local.Address) : X509Certificate2.CreateFromPemFile(certFile, keyFile);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or CryptographicException or ArgumentException)
        {
            message = $"Could not read the certificate '{certFile}' with the key '{keyFile}': {e.Message}";
            return false;
        }

        message = $"coaps+tcp certificate: {certificate.Subject}{(certFile is null ? " (self-signed, made at start; set yours with --cert and --key)" : string.Empty)}, SHA-256 fingerprint {Fingerprint(certificate)} (try: coap-client-openssl coaps+tcp://127.0.0.1/hello)";
        options.Listen(CoapPeer.TlsScheme, local, endpoint => endpoint.UseTls(certificate));
        return true;
    }

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
