using System.Security.Cryptography;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Interop;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Tls;

/// <summary>
/// The sample server program's coaps+tcp endpoint, run as a process the way a user runs it: a self-signed certificate
/// made at start whose SHA-256 fingerprint it prints, or the PEM certificate and key given with --cert and --key.
/// </summary>
public sealed class SampleServerTlsTests
{
    private static readonly TimeSpan Liveness = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task ItServesCoapsTcpWithASelfSignedCertificateWhoseFingerprintItPrints()
    {
        using SampleServerProcess sample = await SampleServerProcess.StartWithTlsAsync();

        // A client that pins the printed fingerprint, as a user who read it at start would.
        await using CoapClient client = TlsLoopback.Client(options => options.CertificateValidator = (certificate, _, _) =>
            Fingerprint(certificate) == sample.Fingerprint);
        CoapResponse hello = await client.GetAsync(new Uri($"coaps+tcp://127.0.0.1:{sample.TlsEndPoint.Port}/hello"));

        hello.GetPayloadString().Should().Be("Hello, CoAP!");
        sample.Output.Should().Contain("self-signed");
    }

    [SkippableFact]
    public async Task ItServesTheCertificateGivenAndLibcoapTrustsIt()
    {
        string client = LibCoap.ClientOpenSsl;
        using PemFiles pem = new();
        using SampleServerProcess sample = await SampleServerProcess.StartWithTlsAsync("--cert", pem["server.pem"], "--key", pem["server.key"]);

        System.Diagnostics.Process libcoap = LibCoap.Start(client, "-C", pem["ca.pem"], $"coaps+tcp://127.0.0.1:{sample.TlsEndPoint.Port}/hello");
        string output;
        try
        {
            output = await LibCoap.ReadOutputAsync(libcoap, Liveness);
        }
        finally
        {
            LibCoap.Stop(libcoap);
        }

        output.Should().Contain("Hello, CoAP!");
        sample.Fingerprint.Should().Be(Fingerprint(TestPki.Instance.Server));
    }

    [Fact]
    public async Task ACertificateWithoutItsKeyIsRefusedWithExitCodeTwo()
    {
        using ChildProcess sample = ChildProcess.StartDll(
            Path.Combine(AppContext.BaseDirectory, "CoapNet.Samples.Server.dll"),
            ["--port", "0", "--tcp-port", "0", "--dtls-port", "0", "--http-port", "0", "--cert", "server.pem", "--address", "127.0.0.1"],
            _ => { });

        (await sample.WaitForExitAsync(Liveness)).Should().Be(2, sample.Output);
        sample.Output.Should().Contain("--cert FILE and --key FILE go together");
    }

    private static string Fingerprint(System.Security.Cryptography.X509Certificates.X509Certificate2 certificate)
        => string.Join(':', certificate.GetCertHashString(HashAlgorithmName.SHA256).Chunk(2).Select(pair => new string(pair)));
}
