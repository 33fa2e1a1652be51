using System.Security.Cryptography.X509Certificates;
using CoapNet.Tests.Tls;
using CoapNet.Tests.WebSockets;

namespace CoapNet.Tests.Cli;

/// <summary>
/// The coap tool over coap+ws and coaps+ws (RFC 8323 section 4), run as a process against our server on Kestrel (free
/// loopback ports, the sample's resources): GET, PUT then GET, observe with a count, discover, ping; and coaps+ws with a
/// self-signed server certificate, trusted with --ca as over coaps+tcp.
/// </summary>
public sealed class CoapToolWebSocketTests : IDisposable
{
    private readonly DirectoryInfo _files = Directory.CreateTempSubdirectory("coapnet-tool-ws-");

    public void Dispose() => _files.Delete(recursive: true);

    [Fact]
    public async Task GetsOverCoapWsAndDumpsTheMessagesWithV()
    {
        await using KestrelCoapServer server = await KestrelCoapServer.StartAsync();

        CoapToolResult result = await CoapTool.RunAsync("get", server.Ws("/hello").ToString(), "-v");

        result.ExitCode.Should().Be(0, result.ToString());
        result.OutputText.TrimEnd().Should().Be("Hello, CoAP!");
        result.ErrorLines.Should().Contain(l => l.StartsWith("-> ", StringComparison.Ordinal) && l.Contains("c:GET", StringComparison.Ordinal), "-v shows the request as over TCP");
    }

    [Fact]
    public async Task PutsThenGetsWhatItPut()
    {
        await using KestrelCoapServer server = await KestrelCoapServer.StartAsync();
        string uri = server.Ws("/store/lamp").ToString();

        CoapToolResult put = await CoapTool.RunAsync("put", uri, "-d", "on", "-t", "text/plain");
        CoapToolResult get = await CoapTool.RunAsync("get", uri);

        put.ExitCode.Should().Be(0, put.ToString());
        get.ExitCode.Should().Be(0, get.ToString());
        get.OutputText.TrimEnd().Should().Be("on");
    }

    [Fact]
    public async Task ObservesUntilTheCountThenDeregisters()
    {
        await using KestrelCoapServer server = await KestrelCoapServer.StartAsync();

        // The sample's /time notifies its observers once a second.
        CoapToolResult result = await CoapTool.RunAsync("observe", server.Ws("/time").ToString(), "--count", "3");

        result.ExitCode.Should().Be(0, result.ToString());
        string[] times = result.OutputText.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        times.Should().HaveCount(3, "the registration's response and two notifications");
        Array.ConvertAll(times, t => DateTimeOffset.Parse(t, System.Globalization.CultureInfo.InvariantCulture)).Should().BeInAscendingOrder();
        server.Coap.Observations.Should().Be(0, "the tool waited for the answer to its GET with Observe=1 before it exited");
    }

    [Fact]
    public async Task DiscoversAndPings()
    {
        await using KestrelCoapServer server = await KestrelCoapServer.StartAsync();

        CoapToolResult discover = await CoapTool.RunAsync("discover", server.Ws("/").ToString());
        CoapToolResult ping = await CoapTool.RunAsync("ping", server.Ws("/").ToString());

        discover.ExitCode.Should().Be(0, discover.ToString());
        discover.OutputText.Split('\n').Should().Contain(l => l.StartsWith("</hello>", StringComparison.Ordinal));
        ping.ExitCode.Should().Be(0, ping.ToString());
    }

    [Fact]
    public async Task GetsOverCoapsWsTrustingTheSelfSignedCertificateGivenWithCa()
    {
        using X509Certificate2 selfSigned = TestPki.SelfSigned("CN=coapnet-self-signed");
        await using KestrelCoapServer server = await KestrelCoapServer.StartAsync(certificate: selfSigned);

        CoapToolResult result = await CoapTool.RunAsync("get", server.Wss("/hello").ToString(), "--ca", Pem(selfSigned));

        result.ExitCode.Should().Be(0, result.ToString());
        result.OutputText.TrimEnd().Should().Be("Hello, CoAP!");
    }

    [Fact]
    public async Task RefusesASelfSignedCertificateItWasNotToldToTrustAndSaysWhy()
    {
        using X509Certificate2 selfSigned = TestPki.SelfSigned("CN=coapnet-self-signed");
        await using KestrelCoapServer server = await KestrelCoapServer.StartAsync(certificate: selfSigned);

        CoapToolResult result = await CoapTool.RunAsync("get", server.Wss("/hello").ToString());

        result.ExitCode.Should().Be(1, "the server took part in the handshake: an error, not no answer; " + result);
        result.OutputText.Should().BeEmpty();
        result.Error.Should().Contain("certificate");
    }

    [Fact]
    public async Task NothingListeningIsNoAnswerSayingWhy()
    {
        await using KestrelCoapServer server = await KestrelCoapServer.StartAsync();
        string uri = server.Ws("/hello").ToString();
        await server.StopAsync();

        CoapToolResult result = await CoapTool.RunAsync("get", uri);

        result.ExitCode.Should().Be(3, result.ToString());
        result.Error.Should().Contain("refused");
    }

    /// <summary>The certificate alone in a PEM file, as a user saves the one a server shows.</summary>
    private string Pem(X509Certificate2 certificate)
    {
        string path = Path.Combine(_files.FullName, "server.pem");
        File.WriteAllText(path, certificate.ExportCertificatePem());
        return path;
    }
}
