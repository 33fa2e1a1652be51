using System.Globalization;
using System.Net;
using System.Security.Cryptography;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Interop;

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
        (ChildProcess sample, IPEndPoint tls, string fingerprint) = await StartAsync([]);
        using (sample)
        {
            // A client that pins the printed fingerprint, as a user who read it at start would.
            await using CoapClient client = TlsLoopback.Client(options => options.CertificateValidator = (certificate, _, _) =>
                Fingerprint(certificate) == fingerprint);

            CoapResponse hello = await client.GetAsync(new Uri($"coaps+tcp://127.0.0.1:{tls.Port}/hello"));

            hello.GetPayloadString().Should().Be("Hello, CoAP!");
            sample.Output.Should().Contain("self-signed");
        }
    }

    [SkippableFact]
    public async Task ItServesTheCertificateGivenAndLibcoapTrustsIt()
    {
        string client = LibCoap.ClientOpenSsl;
        string pem = Directory.CreateTempSubdirectory("coapnet-sample-tls-").FullName;
        try
        {
            TestPki.Instance.WritePem(pem);
            (ChildProcess sample, IPEndPoint tls, string fingerprint) = await StartAsync(["--cert", Path.Combine(pem, "server.pem"), "--key", Path.Combine(pem, "server.key")]);
            using (sample)
            {
                System.Diagnostics.Process libcoap = LibCoap.Start(client, "-C", Path.Combine(pem, "ca.pem"), $"coaps+tcp://127.0.0.1:{tls.Port}/hello");
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
                fingerprint.Should().Be(Fingerprint(TestPki.Instance.Server));
            }
        }
        finally
        {
            Directory.Delete(pem, recursive: true);
        }
    }

    [Fact]
    public async Task ACertificateWithoutItsKeyIsRefusedWithExitCodeTwo()
    {
        using ChildProcess sample = ChildProcess.StartDll(SampleDll, ["--port", "0", "--tcp-port", "0", "--dtls-port", "0", "--cert", "server.pem", "--address", "127.0.0.1"], _ => { });

        (await sample.WaitForExitAsync(Liveness)).Should().Be(2, sample.Output);
        sample.Output.Should().Contain("--cert FILE and --key FILE go together");
    }

    private static string SampleDll => Path.Combine(AppContext.BaseDirectory, "CoapNet.Samples.Server.dll");

    private static string Fingerprint(System.Security.Cryptography.X509Certificates.X509Certificate2 certificate)
        => string.Join(':', certificate.GetCertHashString(HashAlgorithmName.SHA256).Chunk(2).Select(pair => new string(pair)));

    // UDP at a port the OS picks, TCP and DTLS off, TLS at a port free now (the program takes no 0 for it: 0 turns it off);
    // should another process take that port before the bind, the program exits with 1 and is started again on another.
    private static async Task<(ChildProcess Sample, IPEndPoint Tls, string Fingerprint)> StartAsync(string[] extra)
    {
        for (int attempt = 1; ; attempt++)
        {
            TaskCompletionSource<IPEndPoint> listening = new(TaskCreationOptions.RunContinuationsAsynchronously);
            TaskCompletionSource<string> fingerprint = new(TaskCreationOptions.RunContinuationsAsynchronously);
            int port = FreePorts.UdpAndTcp();
            ChildProcess sample = ChildProcess.StartDll(
                SampleDll,
                ["--port", "0", "--tcp-port", "0", "--dtls-port", "0", "--tls-port", port.ToString(CultureInfo.InvariantCulture), "--address", "127.0.0.1", .. extra],
                line =>
                {
                    const string Listening = "listening on coaps+tcp://", Print = "SHA-256 fingerprint ";
                    int at = line.IndexOf(Listening, StringComparison.Ordinal);
                    if (at >= 0)
                    {
                        listening.TrySetResult(IPEndPoint.Parse(line[(at + Listening.Length)..].Trim()));
                    }

                    at = line.IndexOf(Print, StringComparison.Ordinal);
                    if (at >= 0)
                    {
                        fingerprint.TrySetResult(line[(at + Print.Length)..].Trim());
                    }
                });
            Task started = Task.WhenAll(listening.Task, fingerprint.Task);
            Task<int> exited = sample.WaitForExitAsync(Liveness);
            if (await Task.WhenAny(started, exited) == started)
            {
                return (sample, await listening.Task, await fingerprint.Task);
            }

            string output = sample.Output;
            sample.Dispose();
            if (attempt == 5 || !exited.IsCompletedSuccessfully || exited.Result != 1)
            {
                throw new InvalidOperationException("The sample server did not start coaps+tcp: " + output);
            }
        }
    }
}
