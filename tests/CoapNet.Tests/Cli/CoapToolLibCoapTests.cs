using CoapNet.Tests.Interop;

namespace CoapNet.Tests.Cli;

/// <summary>
/// The coap tool against libcoap's coap-server-notls (dynamic resources on, -d), once over UDP and once
/// over TCP: each verb libcoap serves, exit codes from its answers, and a file up and down unchanged.
/// </summary>
public abstract class CoapToolLibCoapTests
{
    private readonly string _scheme;

    private protected CoapToolLibCoapTests(string scheme) => _scheme = scheme;

    [SkippableFact]
    public async Task UploadsWithPutDownloadsWithGetAndDeletesAFileUnchanged()
    {
        using LibCoapServer server = LibCoapServer.Start();
        byte[] content = new byte[1000];
        new Random(8323).NextBytes(content);
        string upload = Path.GetTempFileName();
        string download = Path.Combine(Path.GetTempPath(), Guid.NewGuid().ToString("N"));
        try
        {
            await File.WriteAllBytesAsync(upload, content);

            CoapToolResult put = await CoapTool.RunAsync("put", Uri(server, "/upload"), "-f", upload, "-t", "octet");
            CoapToolResult get = await CoapTool.RunAsync("get", Uri(server, "/upload"), "-o", download);
            CoapToolResult delete = await CoapTool.RunAsync("delete", Uri(server, "/upload"));
            CoapToolResult gone = await CoapTool.RunAsync("get", Uri(server, "/upload"));

            put.ExitCode.Should().Be(0, put.ToString());
            get.ExitCode.Should().Be(0, get.ToString());
            (await File.ReadAllBytesAsync(download)).Should().Equal(content);
            delete.ExitCode.Should().Be(0, delete.ToString());
            gone.ExitCode.Should().Be(4, gone.ToString());
            gone.Error.Should().Contain("4.04 Not Found");
        }
        finally
        {
            File.Delete(upload);
            File.Delete(download);
        }
    }

    [SkippableFact]
    public async Task GetsTheRootResourceAndDumpsTheExchange()
    {
        using LibCoapServer server = LibCoapServer.Start();

        CoapToolResult result = await CoapTool.RunAsync("get", Uri(server, "/"), "-v");

        result.ExitCode.Should().Be(0, result.ToString());
        result.OutputText.Should().Contain("libcoap");
        string version = _scheme == "coap" ? "v:1 t:" : "v:Reliable c:";
        result.ErrorLines.Should().Contain(l => l.StartsWith("-> " + version, StringComparison.Ordinal) && l.Contains("c:GET", StringComparison.Ordinal));
        result.ErrorLines.Should().Contain(l => l.StartsWith("<- " + version, StringComparison.Ordinal) && l.Contains("c:2.05", StringComparison.Ordinal) && l.Contains(":: '", StringComparison.Ordinal));
        result.Error.Should().NotContain("\u001b");
    }

    [SkippableTheory]
    [InlineData("post", "/time")]
    [InlineData("patch", "/time")]
    [InlineData("ipatch", "/time")]
    public async Task AMethodTheResourceDoesNotAllowExitsFour(string verb, string path)
    {
        using LibCoapServer server = LibCoapServer.Start();

        CoapToolResult result = await CoapTool.RunAsync(verb, Uri(server, path), "-d", "x");

        result.ExitCode.Should().Be(4, result.ToString());
        result.Error.Should().Contain("4.05 Method Not Allowed");
    }

    [SkippableFact]
    public async Task FetchesTheClock()
    {
        using LibCoapServer server = LibCoapServer.Start();

        // libcoap answers FETCH on /time as it answers GET: the time of day, "Nov 22 19:04:40".
        CoapToolResult result = await CoapTool.RunAsync("fetch", Uri(server, "/time"), "-d", "x");

        result.ExitCode.Should().Be(0, result.ToString());
        result.OutputText.Should().MatchRegex(@"^[A-Z][a-z]{2} [ 0-9]\d \d\d:\d\d:\d\d$");
    }

    [SkippableFact]
    public async Task DiscoversAndPings()
    {
        using LibCoapServer server = LibCoapServer.Start();

        CoapToolResult discover = await CoapTool.RunAsync("discover", Uri(server, "/"));
        CoapToolResult filtered = await CoapTool.RunAsync("discover", Uri(server, "/"), "-q", "rt=ticks");
        CoapToolResult ping = await CoapTool.RunAsync("ping", Uri(server, "/"));

        discover.ExitCode.Should().Be(0, discover.ToString());
        discover.OutputText.Split('\n').Should().Contain(l => l.StartsWith("</time>;", StringComparison.Ordinal)).And.Contain(l => l.StartsWith("</async>", StringComparison.Ordinal));
        filtered.OutputText.Split('\n', StringSplitOptions.RemoveEmptyEntries).Should().ContainSingle().Which.Should().StartWith("</time>;");
        ping.ExitCode.Should().Be(0, ping.ToString());
        ping.OutputText.Should().StartWith("pong from ");
    }

    private string Uri(LibCoapServer server, string pathAndQuery) => $"{_scheme}://127.0.0.1:{server.Port}{pathAndQuery}";
}

/// <summary>The tool against coap-server-notls over UDP.</summary>
public sealed class CoapToolLibCoapOverUdpTests() : CoapToolLibCoapTests("coap");

/// <summary>The tool against coap-server-notls over TCP.</summary>
public sealed class CoapToolLibCoapOverTcpTests() : CoapToolLibCoapTests("coap+tcp");
