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

    [SkippableFact]
    public async Task ObservesTheClockUntilTheCountAndDeregisters()
    {
        using LibCoapServer server = LibCoapServer.Start();

        CoapToolResult result = await CoapTool.RunAsync("observe", Uri(server, "/time"), "--count", "2", "-v");

        result.ExitCode.Should().Be(0, result.ToString());
        result.OutputText.Split('\n', StringSplitOptions.RemoveEmptyEntries).Should().HaveCount(2).And.OnlyContain(l => Clock.IsMatch(l));
        AssertDeregistered(result.ErrorLines);
    }

    [SkippableFact]
    public async Task CtrlCDeregistersFromLibcoapAndExitsCleanly()
    {
        Skip.If(OperatingSystem.IsWindows(), "POSIX signals");
        using LibCoapServer server = LibCoapServer.Start();
        int printed = 0;
        using Infrastructure.ChildProcess observe = Infrastructure.ChildProcess.StartDll(CoapTool.Dll, ["observe", Uri(server, "/time"), "-v"], line =>
        {
            if (Clock.IsMatch(line))
            {
                Interlocked.Increment(ref printed);
            }
        });
        await Infrastructure.Wait.UntilAsync(() => Volatile.Read(ref printed) >= 1, "a notification printed", CoapTool.Liveness);

        await observe.SignalAsync("INT");

        (await observe.WaitForExitAsync(CoapTool.Liveness)).Should().Be(0, observe.Output);
        AssertDeregistered(observe.Output.Split('\n', StringSplitOptions.TrimEntries));
    }

    [SkippableFact]
    public async Task SendsAnyOptionWithDashOAndLibcoapRefusesAnUnknownCriticalOne()
    {
        using LibCoapServer server = LibCoapServer.Start();

        CoapToolResult elective = await CoapTool.RunAsync("get", Uri(server, "/time"), "-O", "2048,0x0a0b", "-O", "65000,hi", "-v");
        CoapToolResult critical = await CoapTool.RunAsync("get", Uri(server, "/time"), "-O", "2049,x");

        elective.ExitCode.Should().Be(0, elective.ToString());
        elective.ErrorLines.Should().Contain(l => l.StartsWith("-> ", StringComparison.Ordinal) && l.Contains("2048:0x0a0b, 65000:0x6869 ]", StringComparison.Ordinal));
        critical.ExitCode.Should().NotBe(0, critical.ToString());
        critical.Error.Should().Contain("4.02 Bad Option", "RFC 7252 section 5.4.1: a critical option the server does not know is refused");
    }

    [SkippableFact]
    public async Task AsksForTheBlockSizeAndTheStartBlockOfDashB()
    {
        using LibCoapServer server = LibCoapServer.Start();

        CoapToolResult whole = await CoapTool.RunAsync("get", Uri(server, "/"));
        CoapToolResult blocks = await CoapTool.RunAsync("get", Uri(server, "/"), "-b", "16", "-v");
        CoapToolResult fromBlock = await CoapTool.RunAsync("get", Uri(server, "/"), "-b", "2,32");

        blocks.ExitCode.Should().Be(0, blocks.ToString());
        blocks.Output.Should().Equal(whole.Output);
        string[] sent = [.. blocks.ErrorLines.Where(l => l.StartsWith("-> ", StringComparison.Ordinal) && l.Contains("c:GET", StringComparison.Ordinal))];
        sent.Should().HaveCount((whole.Output.Length + 15) / 16).And.OnlyContain(l => l.Contains("/16 ]", StringComparison.Ordinal));
        fromBlock.Output.Should().Equal(whole.Output[64..], "RFC 7959 section 2.4: block 2 of 32 bytes starts at byte 64");
    }

    [SkippableFact]
    public async Task ShowsACborResourceInDiagnosticNotation()
    {
        using LibCoapServer server = LibCoapServer.Start();
        string cbor = Path.GetTempFileName();
        try
        {
            // {"t": 42, "v": [1.5, true, null]}
            await File.WriteAllBytesAsync(cbor, [0xa2, 0x61, 0x74, 0x18, 0x2a, 0x61, 0x76, 0x83, 0xf9, 0x3e, 0x00, 0xf5, 0xf6]);

            CoapToolResult put = await CoapTool.RunAsync("put", Uri(server, "/reading"), "-f", cbor, "-t", "cbor");
            CoapToolResult pretty = await CoapTool.RunAsync("get", Uri(server, "/reading"), "--pretty");
            CoapToolResult raw = await CoapTool.RunAsync("get", Uri(server, "/reading"));

            put.ExitCode.Should().Be(0, put.ToString());
            pretty.OutputText.Should().Be("{\"t\": 42, \"v\": [1.5, true, null]}\n");
            raw.Output.Should().Equal(await File.ReadAllBytesAsync(cbor), "piped, the payload's bytes go out as they came");
        }
        finally
        {
            File.Delete(cbor);
        }
    }

    private static readonly System.Text.RegularExpressions.Regex Clock = new(@"^[A-Z][a-z]{2} [ 0-9]\d \d\d:\d\d:\d\d$");

    /// <summary>RFC 7641 section 3.6: a GET with Observe=1, answered by libcoap without Observe: it observes for us no longer.</summary>
    private static void AssertDeregistered(string[] lines)
    {
        int deregistration = Array.FindIndex(lines, l => l.StartsWith("-> ", StringComparison.Ordinal) && l.Contains("c:GET", StringComparison.Ordinal) && l.Contains("Observe:1,", StringComparison.Ordinal));
        deregistration.Should().BeGreaterThan(0, string.Join('\n', lines));
        lines.Skip(deregistration + 1).Should().Contain(l => l.StartsWith("<- ", StringComparison.Ordinal) && l.Contains(" c:2.05 ", StringComparison.Ordinal) && !l.Contains("Observe:", StringComparison.Ordinal));
    }

    private string Uri(LibCoapServer server, string pathAndQuery) => $"{_scheme}://127.0.0.1:{server.Port}{pathAndQuery}";
}

/// <summary>The tool against coap-server-notls over UDP.</summary>
public sealed class CoapToolLibCoapOverUdpTests() : CoapToolLibCoapTests("coap");

/// <summary>The tool against coap-server-notls over TCP.</summary>
public sealed class CoapToolLibCoapOverTcpTests() : CoapToolLibCoapTests("coap+tcp");
