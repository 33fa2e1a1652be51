using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;
using CoapNet.Messages;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Cli;

/// <summary>
/// The coap tool against an in-process CoapServer on 127.0.0.1, once over UDP and once over TCP:
/// every verb, the exit codes, the wire dump, and byte-exact uploads and downloads.
/// </summary>
public abstract class CoapToolTests
{
    private static readonly CoapCode[] Methods = [CoapCode.Get, CoapCode.Post, CoapCode.Put, CoapCode.Delete, CoapCode.Fetch, CoapCode.Patch, CoapCode.IPatch];

    private readonly string _scheme;

    private protected CoapToolTests(string scheme) => _scheme = scheme;

    private bool Tcp => _scheme == "coap+tcp";

    [Theory]
    [InlineData("get")]
    [InlineData("post")]
    [InlineData("put")]
    [InlineData("delete")]
    [InlineData("fetch")]
    [InlineData("patch")]
    [InlineData("ipatch")]
    public async Task EachVerbSendsItsMethodAndPrintsThePayload(string verb)
    {
        await using LoopbackServer server = StartEchoServer();
        bool payload = verb is not ("get" or "delete");
        string[] arguments = payload ? [verb, Uri(server, "/echo"), "-d", "körper"] : [verb, Uri(server, "/echo")];

        CoapToolResult result = await CoapTool.RunAsync(arguments);

        result.ExitCode.Should().Be(0, result.ToString());
        string method = verb == "ipatch" ? "iPATCH" : verb.ToUpperInvariant();
        result.OutputText.Should().Be(payload ? $"{method} ct=- accept=- query= payload=körper" : $"{method} ct=- accept=- query= payload=");
    }

    [Fact]
    public async Task ContentFormatAcceptAndQueryGoIntoTheRequest()
    {
        await using LoopbackServer server = StartEchoServer();

        CoapToolResult result = await CoapTool.RunAsync("post", Uri(server, "/echo?a=1"), "-d", "{}", "-t", "json", "-A", "60", "-q", "b=2", "-q", "c");

        result.ExitCode.Should().Be(0, result.ToString());
        result.OutputText.Should().Be("POST ct=50 accept=60 query=a=1&b=2&c payload={}");
    }

    [Fact]
    public async Task StandardInputIsThePayloadWithFileDash()
    {
        await using LoopbackServer server = StartEchoServer();

        CoapToolResult result = await CoapTool.RunAsync(Encoding.UTF8.GetBytes("from a pipe"), "put", Uri(server, "/echo"), "-f", "-", "-t", "text/plain");

        result.ExitCode.Should().Be(0, result.ToString());
        result.OutputText.Should().Be("PUT ct=0 accept=- query= payload=from a pipe");
    }

    [SkippableFact]
    public async Task StandardInputIsNotReadWithoutFileDashSoAShellLoopRunsOncePerLine()
    {
        Skip.If(OperatingSystem.IsWindows(), "a POSIX shell loop");
        List<string> posted = [];
        await using LoopbackServer server = LoopbackServer.Start(
            s => s.MapPost("/log", request =>
            {
                lock (posted)
                {
                    posted.Add(request.Message.UriQuery + "|" + request.GetPayloadString());
                }

                return new CoapResponse(CoapCode.Changed);
            }),
            LoopbackServer.Options(tcp: true));

        // The loop reads its lines from the same standard input each coap inherits: a tool that read it (there is no -d
        // or -f here) would take the rest as its payload and the loop would end after one POST.
        string loop = "printf 'a\\nb\\nc\\n' | while read line; do \"$0\" \"$1\" post \"$2?n=$line\" || exit 9; done";
        CoapToolResult result = await CoapTool.RunShellAsync(loop, ChildProcess.DotnetHost, CoapTool.Dll, Uri(server, "/log"));

        result.ExitCode.Should().Be(0, result.ToString());
        posted.Should().Equal("n=a|", "n=b|", "n=c|");
    }

    [Fact]
    public async Task SuccessExitsZeroNotFoundFourServerErrorFive()
    {
        await using LoopbackServer server = StartEchoServer();

        (await CoapTool.RunAsync("get", Uri(server, "/echo"))).ExitCode.Should().Be(0);
        CoapToolResult notFound = await CoapTool.RunAsync("get", Uri(server, "/nowhere"));
        CoapToolResult failing = await CoapTool.RunAsync("get", Uri(server, "/fail"));

        notFound.ExitCode.Should().Be(4, notFound.ToString());
        notFound.Output.Should().BeEmpty("an error's diagnostic is no resource representation");
        notFound.ErrorLines.Should().Contain("4.04 Not Found");
        failing.ExitCode.Should().Be(5, failing.ToString());
        failing.ErrorLines.Should().ContainInOrder("5.03 Service Unavailable", "try later");
    }

    [Fact]
    public async Task VerboseDumpsEachMessageInAndOutLikeLibcoap()
    {
        await using LoopbackServer server = StartEchoServer();

        CoapToolResult result = await CoapTool.RunAsync("get", Uri(server, "/echo"), "-v", "-A", "text");

        result.ExitCode.Should().Be(0, result.ToString());
        string port = (Tcp ? server.TcpEndPoint! : server.EndPoint).Port.ToString(CultureInfo.InvariantCulture);
        string request = result.ErrorLines.Should().ContainSingle(l => l.StartsWith("-> ", StringComparison.Ordinal) && l.Contains("c:GET", StringComparison.Ordinal)).Subject;
        string response = result.ErrorLines.Should().ContainSingle(l => l.StartsWith("<- ", StringComparison.Ordinal) && l.Contains("c:2.05", StringComparison.Ordinal)).Subject;
        if (Tcp)
        {
            request.Should().MatchRegex($@"^-> v:Reliable c:GET \{{[0-9a-f]{{16}}\}} \[ Uri-Port:{port}, Uri-Path:echo, Accept:text/plain \]$");
            response.Should().MatchRegex(@"^<- v:Reliable c:2\.05 \{[0-9a-f]{16}\} \[ Content-Format:text/plain \] :: 'GET ct=- accept=0 query= payload='$");
            result.ErrorLines.Should().Contain(l => l.StartsWith("-> v:Reliable c:7.01 {} [ Max-Message-Size:", StringComparison.Ordinal), "the CSM opens the connection (RFC 8323 section 5.3)");
        }
        else
        {
            request.Should().MatchRegex($@"^-> v:1 t:CON c:GET i:[0-9a-f]{{4}} \{{[0-9a-f]{{16}}\}} \[ Uri-Port:{port}, Uri-Path:echo, Accept:text/plain \]$");
            response.Should().MatchRegex(@"^<- v:1 t:ACK c:2\.05 i:[0-9a-f]{4} \{[0-9a-f]{16}\} \[ Content-Format:text/plain \] :: 'GET ct=- accept=0 query= payload='$");
            MessageId(response).Should().Be(MessageId(request), "the piggybacked ACK carries the request's Message ID");
        }
    }

    [Fact]
    public async Task PipedOutputHasNoEscapeCodes()
    {
        await using LoopbackServer server = StartEchoServer();

        CoapToolResult ok = await CoapTool.RunAsync("get", Uri(server, "/echo"), "-v");
        CoapToolResult error = await CoapTool.RunAsync("get", Uri(server, "/nowhere"), "-v");
        CoapToolResult discover = await CoapTool.RunAsync("discover", Uri(server, "/"));

        foreach (CoapToolResult result in new[] { ok, error, discover })
        {
            result.Output.Should().NotContain(0x1b, result.ToString());
            result.Error.Should().NotContain("\u001b", result.ToString());
        }

        error.Error.Should().Contain("4.04 Not Found");
    }

    [Fact]
    public async Task UploadsAFileAndDownloadsItByteForByte()
    {
        byte[] stored = [];
        await using LoopbackServer server = LoopbackServer.Start(
            s =>
            {
                s.MapPut("/blob", request =>
                {
                    stored = request.Payload.ToArray();
                    return new CoapResponse(CoapCode.Changed);
                });
                s.MapGet("/blob", request => CoapResponse.Content(stored, CoapContentFormat.OctetStream));
            },
            LoopbackServer.Options(tcp: true));
        byte[] content = new byte[1000];
        new Random(7252).NextBytes(content);
        string upload = Path.GetTempFileName();
        string download = Path.Combine(Path.GetTempPath(), Guid.NewGuid().ToString("N"));
        try
        {
            await File.WriteAllBytesAsync(upload, content);

            CoapToolResult put = await CoapTool.RunAsync("put", Uri(server, "/blob"), "-f", upload, "-t", "octet");
            CoapToolResult get = await CoapTool.RunAsync("get", Uri(server, "/blob"), "-o", download);

            put.ExitCode.Should().Be(0, put.ToString());
            stored.Should().Equal(content);
            get.ExitCode.Should().Be(0, get.ToString());
            get.Output.Should().BeEmpty("the payload went to the file");
            (await File.ReadAllBytesAsync(download)).Should().Equal(content);
        }
        finally
        {
            File.Delete(upload);
            File.Delete(download);
        }
    }

    [Fact]
    public async Task RedirectedOutputIsThePayloadBytesExactly()
    {
        byte[] binary = [0x00, 0xff, 0x1b, 0x5b, 0x0a, 0x80];
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapGet("/bin", request => CoapResponse.Content(binary, CoapContentFormat.Cbor)), LoopbackServer.Options(tcp: true));

        CoapToolResult result = await CoapTool.RunAsync("get", Uri(server, "/bin"));

        result.ExitCode.Should().Be(0, result.ToString());
        result.Output.Should().Equal(binary);
    }

    [Fact]
    public async Task DiscoverPrintsOneLinkALine()
    {
        await using LoopbackServer server = StartEchoServer();

        CoapToolResult result = await CoapTool.RunAsync("discover", Uri(server, "/anything"));

        result.ExitCode.Should().Be(0, result.ToString());
        result.OutputText.Split('\n', StringSplitOptions.RemoveEmptyEntries).Should().Equal("</echo>", "</fail>;ct=0");
    }

    [Fact]
    public async Task PingGetsAnAnswer()
    {
        await using LoopbackServer server = StartEchoServer();

        CoapToolResult result = await CoapTool.RunAsync("ping", Uri(server, "/"), "-v");

        result.ExitCode.Should().Be(0, result.ToString());
        result.OutputText.Should().StartWith($"pong from {_scheme}://127.0.0.1:");
        string answer = Tcp ? "<- v:Reliable c:7.03 {} [ ]" : "<- v:1 t:RST c:0.00 i:";
        result.ErrorLines.Should().Contain(l => l.StartsWith(answer, StringComparison.Ordinal), "the answer to the ping (Pong, or RST to an empty CON) is on the wire");
    }

    [Fact]
    public async Task NoAnswerExitsThree()
    {
        // A peer that takes everything and answers nothing: a bound UDP socket, or a TCP listener that never reads.
        using Socket silent = Tcp ? new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) : new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        silent.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        if (Tcp)
        {
            silent.Listen();
        }

        int port = ((IPEndPoint)silent.LocalEndPoint!).Port;

        CoapToolResult result = await CoapTool.RunAsync("get", $"{_scheme}://127.0.0.1:{port}/x", "--timeout", "1");

        result.ExitCode.Should().Be(3, result.ToString());
        result.Output.Should().BeEmpty();
        result.Error.Should().Contain("no answer");
    }

    private static LoopbackServer StartEchoServer() => LoopbackServer.Start(
        server =>
        {
            foreach (CoapCode method in Methods)
            {
                server.Map(method, "/echo", Echo);
            }

            server.MapGet("/fail", request => CoapResponse.Diagnostic(CoapCode.ServiceUnavailable, "try later")).Produces(CoapContentFormat.TextPlain);
        },
        LoopbackServer.Options(tcp: true));

    // Says what arrived, so a test reads the request back from the tool's output.
    private static CoapResponse Echo(CoapRequest request)
    {
        string ct = request.ContentFormat?.ToString(CultureInfo.InvariantCulture) ?? "-";
        string accept = request.Accept?.ToString(CultureInfo.InvariantCulture) ?? "-";
        return CoapResponse.Content($"{request.Method.Name} ct={ct} accept={accept} query={request.Message.UriQuery} payload={request.GetPayloadString()}");
    }

    private static string MessageId(string line) => System.Text.RegularExpressions.Regex.Match(line, " i:([0-9a-f]{4}) ").Groups[1].Value;

    private string Uri(LoopbackServer server, string pathAndQuery) => server.Uri(pathAndQuery, _scheme).ToString();
}

/// <summary>The tool over UDP.</summary>
public sealed class CoapToolOverUdpTests() : CoapToolTests("coap");

/// <summary>The tool over TCP (RFC 8323).</summary>
public sealed class CoapToolOverTcpTests() : CoapToolTests("coap+tcp");
