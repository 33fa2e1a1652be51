using System.Diagnostics;
using System.Security.Cryptography;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Samples.Server;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Interop;
using CoapNet.Tests.Server;
using CoapNet.Tls;

namespace CoapNet.Tests.Tls;

/// <summary>
/// coaps+tcp (RFC 8323 section 9.1) with libcoap 4.3 over real loopback sockets, in both directions, with certificates
/// made at run time (<see cref="TestPki"/>) and written to a temporary directory for libcoap's <c>-c -j -C -R</c>.
/// </summary>
public sealed class TlsLibCoapTests : IDisposable
{
    private const int Megabyte = 1 << 20;
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(60);
    private readonly PemFiles _pem = new();

    public void Dispose() => _pem.Dispose();

    [SkippableFact]
    public async Task LibcoapOpenSslGetsOurHelloOverCoapsTcpTrustingOurCa()
    {
        await using LoopbackServer server = TlsLoopback.StartServer(s => SampleResources.Map(s));

        string output = await RunClientAsync(LibCoap.ClientOpenSsl, "-C", Pem("ca.pem"), TlsLoopback.Uri(server, "/hello").ToString());

        output.Should().Contain("Hello, CoAP!");
    }

    [SkippableFact]
    public async Task LibcoapGnuTlsGetsOurHelloOverCoapsTcpTrustingOurCa()
    {
        string gnutls = LibCoap.Find("coap-client-gnutls") ?? SkipWith("libcoap's coap-client-gnutls is not installed (sudo apt-get install -y libcoap3-bin)");
        await using LoopbackServer server = TlsLoopback.StartServer(s => SampleResources.Map(s));

        string output = await RunClientAsync(gnutls, "-C", Pem("ca.pem"), TlsLoopback.Uri(server, "/hello").ToString());

        output.Should().Contain("Hello, CoAP!");
    }

    [SkippableFact]
    public async Task LibcoapUploadsAndDownloadsAMegabyteBlockWiseOverCoapsTcp()
    {
        await using LoopbackServer server = TlsLoopback.StartServer(s => SampleResources.Map(s));
        string input = Pem("body.bin");
        string output = Pem("large.bin");
        byte[] body = new byte[Megabyte];
        new Random(11).NextBytes(body);
        await File.WriteAllBytesAsync(input, body);

        string hash = await RunClientAsync(LibCoap.ClientOpenSsl, "-C", Pem("ca.pem"), "-B", "60", "-m", "put", "-f", input, TlsLoopback.Uri(server, "/upload").ToString());
        await RunClientAsync(LibCoap.ClientOpenSsl, "-C", Pem("ca.pem"), "-B", "60", "-o", output, TlsLoopback.Uri(server, $"/large?size={Megabyte}").ToString());

        hash.Trim().Should().Be(Convert.ToHexString(SHA256.HashData(body)).ToLowerInvariant(), "/upload answers the SHA-256 of the whole body it received");
        (await File.ReadAllBytesAsync(output)).Should().Equal(Enumerable.Range(0, Megabyte).Select(i => (byte)(i % 251)));
    }

    [SkippableFact]
    public async Task LibcoapObservesOurServerOverCoapsTcp()
    {
        await using LoopbackServer server = TlsLoopback.StartServer(s => SampleResources.Map(s));
        await using CoapClient poster = TlsLoopback.Client();
        Uri counter = TlsLoopback.Uri(server, "/counter");
        // libcoap prints what it receives when it exits (its output is a pipe, so fully buffered): it observes for 4 s
        // (-s), in which the two changes are made as soon as the server holds its observation.
        Process observer = LibCoap.Start(LibCoap.ClientOpenSsl, "-C", Pem("ca.pem"), "-s", "4", counter.ToString());
        try
        {
            Task<string> output = LibCoap.ReadOutputAsync(observer, Bound);
            Wait.Until(() => server.Server.Observations == 1 || observer.HasExited, "libcoap registered");
            await poster.PostAsync(counter, default);
            await poster.PostAsync(counter, default);

            // The registration's answer and the notifications, each payload printed as it is (no separator). A
            // notification carries the state when it is sent (RFC 7641 section 4.5, eventual consistency), so the first
            // may already read 2 when both POSTs landed before it went out; the last must be 2.
            (await output).Trim().Should().MatchRegex("^0(12|22|2)$");
        }
        finally
        {
            LibCoap.Stop(observer);
        }
    }

    [SkippableFact]
    public async Task AHandlerReadsLibcoapsClientCertificate()
    {
        await using LoopbackServer server = TlsLoopback.StartWhoAmI(TlsClientCertificateMode.Required);

        string output = await RunClientAsync(LibCoap.ClientOpenSsl, "-c", Pem("client.pem"), "-j", Pem("client.key"), "-C", Pem("ca.pem"), TlsLoopback.Uri(server, "/whoami").ToString());

        output.Should().Contain("cert:CN=device-7 over TLS");
    }

    [SkippableFact]
    public async Task LibcoapThatDoesNotTrustOurCertificateGetsNothingAndReachesNoHandler()
    {
        int calls = 0;
        await using LoopbackServer server = TlsLoopback.StartServer(s => s.MapGet("/hello", _ => { Interlocked.Increment(ref calls); return CoapResponse.Content("Hello, CoAP!"); }));

        string output = await RunClientAsync(LibCoap.ClientOpenSsl, "-R", Pem("other-ca.pem"), "-B", "5", TlsLoopback.Uri(server, "/hello").ToString());

        output.Should().NotContain("Hello");
        calls.Should().Be(0);
    }

    [SkippableFact]
    public async Task OurClientGetsPutsAndObservesOnLibcoapsTlsServer()
    {
        using LibCoapServer libcoap = LibCoapServer.Start(LibCoap.ServerOpenSsl, "-c", Pem("server.pem"), "-j", Pem("server.key"));
        await using CoapClient client = TlsLoopback.Client();
        string root = $"coaps+tcp://127.0.0.1:{libcoap.Port + 1}";
        Uri dynamic = new($"{root}/dynamic-{Guid.NewGuid():N}");
        byte[] body = new byte[5000];
        new Random(3).NextBytes(body);

        CoapResponse index = await client.GetAsync(new Uri(root + "/"));
        (await client.PutAsync(dynamic, body, CoapContentFormat.OctetStream)).Code.Should().Be(CoapCode.Created);
        CoapResponse back = await client.GetAsync(dynamic);
        using CancellationTokenSource stop = new(Bound);
        int notifications = 0;
        await foreach (CoapResponse time in client.ObserveAsync(new Uri(root + "/time"), stop.Token))
        {
            time.Code.Should().Be(CoapCode.Content);
            if (++notifications == 2)
            {
                break;
            }
        }

        index.GetPayloadString().Should().Contain("libcoap");
        back.Payload.ToArray().Should().Equal(body);
        notifications.Should().Be(2, "the registration's answer and a notification of libcoap's /time");
    }

    [SkippableFact]
    public async Task OurClientPutsAndGetsAMegabyteBlockWiseOnLibcoapsTlsServer()
    {
        using LibCoapServer libcoap = LibCoapServer.Start(LibCoap.ServerOpenSsl, "-c", Pem("server.pem"), "-j", Pem("server.key"));
        await using CoapClient client = TlsLoopback.Client();
        Uri dynamic = new($"coaps+tcp://127.0.0.1:{libcoap.Port + 1}/dynamic-{Guid.NewGuid():N}");
        byte[] body = new byte[Megabyte];
        new Random(13).NextBytes(body);

        (await client.PutAsync(dynamic, body, CoapContentFormat.OctetStream)).Code.Should().Be(CoapCode.Created);
        CoapResponse back = await client.GetAsync(dynamic);

        back.Payload.ToArray().Should().Equal(body);
    }

    [SkippableFact]
    public async Task OurClientRefusesLibcoapsServerWhenItsCertificateIsNotTrusted()
    {
        using LibCoapServer libcoap = LibCoapServer.Start(LibCoap.ServerOpenSsl, "-c", Pem("server.pem"), "-j", Pem("server.key"));
        await using CoapClient client = TlsLoopback.Client(tls => tls.TrustedRoots = [TestPki.Instance.OtherCa]);

        Func<Task> get = () => client.GetAsync(new Uri($"coaps+tcp://127.0.0.1:{libcoap.Port + 1}/"));

        (await get.Should().ThrowAsync<CoapNet.Messaging.CoapConnectionException>()).Which.Message.Should().Contain("certificate");
    }

    private static string SkipWith(string reason)
    {
        Skip.If(true, reason);
        return string.Empty;
    }

    private static async Task<string> RunClientAsync(string executable, params string[] arguments)
    {
        Process client = LibCoap.Start(executable, arguments);
        try
        {
            return await LibCoap.ReadOutputAsync(client, Bound);
        }
        finally
        {
            LibCoap.Stop(client);
        }
    }

    private string Pem(string name) => _pem[name];
}
