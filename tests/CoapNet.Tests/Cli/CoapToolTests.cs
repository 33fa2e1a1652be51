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

    [Fact]
    public async Task ALargeDownloadGoesToStandardOutputOrTheFileByteForByte()
    {
        byte[] body = Deterministic(300_000);
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapGet("/big", _ => CoapResponse.Content(new MemoryStream(body), CoapContentFormat.OctetStream)), LoopbackServer.Options(tcp: true));
        string file = Path.Combine(Path.GetTempPath(), Guid.NewGuid().ToString("N"));
        try
        {
            CoapToolResult piped = await CoapTool.RunAsync("get", Uri(server, "/big"));
            CoapToolResult saved = await CoapTool.RunAsync("get", Uri(server, "/big"), "-o", file);

            piped.ExitCode.Should().Be(0, piped.ErrorLines.FirstOrDefault());
            piped.Output.Should().Equal(body);
            saved.ExitCode.Should().Be(0, saved.ToString());
            (await File.ReadAllBytesAsync(file)).Should().Equal(body);
            piped.Error.Should().NotContain("%", "no progress bar where standard error is not a terminal");
        }
        finally
        {
            File.Delete(file);
        }
    }

    [SkippableFact]
    public async Task AFullDeviceEndsTheDownloadAtOnceWithItsError()
    {
        Skip.If(!File.Exists("/dev/full"), "needs /dev/full");
        byte[] body = Deterministic(1_000_000);
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapGet("/big", _ => CoapResponse.Content(new MemoryStream(body), CoapContentFormat.OctetStream)), LoopbackServer.Options(tcp: true));

        CoapToolResult result = await CoapTool.RunShellAsync("\"$0\" \"$1\" get \"$2\" > /dev/full", ChildProcess.DotnetHost, CoapTool.Dll, Uri(server, "/big"));

        result.ExitCode.Should().Be(1, result.ToString());
        result.ErrorLines.Should().Equal("error: No space left on device");
    }

    [Fact]
    public async Task AFailedDownloadLeavesTheOutputFileAsItWas()
    {
        await using LoopbackServer server = StartEchoServer();
        string file = Path.Combine(Directory.CreateTempSubdirectory("coap-output-").FullName, "kept.txt");
        await File.WriteAllTextAsync(file, "before");

        CoapToolResult result = await CoapTool.RunAsync("get", Uri(server, "/nowhere"), "-o", file);

        result.ExitCode.Should().Be(4, result.ToString());
        (await File.ReadAllTextAsync(file)).Should().Be("before");
        Directory.GetFiles(Path.GetDirectoryName(file)!, "*", new EnumerationOptions { AttributesToSkip = 0 }).Should().Equal(file);
        Directory.Delete(Path.GetDirectoryName(file)!, recursive: true);
    }

    [Fact]
    public async Task ALargeUploadFromAFileArrivesWhole()
    {
        byte[] body = Deterministic(100_000);
        byte[] stored = [];
        await using LoopbackServer server = LoopbackServer.Start(
            s => s.MapPut("/blob", request =>
            {
                stored = request.Payload.ToArray();
                return new CoapResponse(CoapCode.Changed);
            }),
            LoopbackServer.Options(tcp: true));
        string file = Path.GetTempFileName();
        try
        {
            await File.WriteAllBytesAsync(file, body);

            CoapToolResult result = await CoapTool.RunAsync("put", Uri(server, "/blob"), "-f", file, "-b", "256");

            result.ExitCode.Should().Be(0, result.ToString());
            stored.Should().Equal(body);
        }
        finally
        {
            File.Delete(file);
        }
    }

    [Fact]
    public async Task PutAndPostPrintTheirCodeAndLocationEvenWhenPiped()
    {
        await using LoopbackServer server = LoopbackServer.Start(
            s =>
            {
                s.MapPost("/items", _ =>
                {
                    CoapResponse created = new(CoapCode.Created);
                    created.Message.LocationPath = "/items/7";
                    created.Message.LocationQuery = "v=2";
                    return created;
                });
                s.MapPut("/items/7", _ => new CoapResponse(CoapCode.Changed));
            },
            LoopbackServer.Options(tcp: true));

        CoapToolResult post = await CoapTool.RunAsync("post", Uri(server, "/items"), "-e", "lamp");
        CoapToolResult put = await CoapTool.RunAsync("put", Uri(server, "/items/7"), "-d", "lamp");

        post.ExitCode.Should().Be(0, post.ToString());
        post.ErrorLines.Should().Equal("2.01 Created", "Location: /items/7?v=2");
        put.ErrorLines.Should().Equal("2.04 Changed");
        post.Output.Should().BeEmpty();
    }

    [Fact]
    public async Task DashOSendsAnyOptionAndDashAAsksForAFormat()
    {
        await using LoopbackServer server = LoopbackServer.Start(
            s => s.MapGet("/options", request =>
            {
                System.Text.StringBuilder seen = new();
                foreach (CoapOptionEntry option in request.Message.Options)
                {
                    if (option.Number is not (CoapOptionNumber.UriPath or CoapOptionNumber.UriPort or CoapOptionNumber.UriHost))
                    {
                        seen.Append((int)option.Number).Append('=').Append(Convert.ToHexStringLower(option.Value.Span)).Append(' ');
                    }
                }

                return CoapResponse.Content(seen.ToString().TrimEnd());
            }),
            LoopbackServer.Options(tcp: true));

        CoapToolResult result = await CoapTool.RunAsync("get", Uri(server, "/options"), "-O", "2048,0x0a0b", "-O", "65000,hi", "-O", "Max-Age,300", "-A", "cbor");

        result.ExitCode.Should().Be(0, result.ToString());
        result.OutputText.Should().Be("14=012c 17=3c 2048=0a0b 65000=6869");
    }

    [Fact]
    public async Task CborAndJsonAreShownForReadingWithPrettyAndAsTheyCameWithout()
    {
        byte[] cbor = [0xa2, 0x61, 0x74, 0x18, 0x2a, 0x61, 0x75, 0x42, 0x0a, 0x0b];
        await using LoopbackServer server = LoopbackServer.Start(
            s =>
            {
                s.MapGet("/cbor", _ => CoapResponse.Content(cbor, CoapContentFormat.Cbor));
                s.MapGet("/json", _ => CoapResponse.Content("{\"a\":[1,2],\"b\":\"é\"}"u8.ToArray(), CoapContentFormat.Json));
                s.MapGet("/broken", _ => CoapResponse.Content(new byte[] { 0x83, 0x01 }, CoapContentFormat.Cbor));
            },
            LoopbackServer.Options(tcp: true));

        CoapToolResult diagnostic = await CoapTool.RunAsync("get", Uri(server, "/cbor"), "--pretty");
        CoapToolResult json = await CoapTool.RunAsync("get", Uri(server, "/json"), "--pretty");
        CoapToolResult raw = await CoapTool.RunAsync("get", Uri(server, "/json"));
        CoapToolResult broken = await CoapTool.RunAsync("get", Uri(server, "/broken"), "--pretty");

        diagnostic.OutputText.Should().Be("{\"t\": 42, \"u\": h'0a0b'}\n");
        json.OutputText.Should().Be("{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": \"é\"\n}\n");
        raw.OutputText.Should().Be("{\"a\":[1,2],\"b\":\"é\"}");
        broken.ExitCode.Should().Be(0);
        broken.Error.Should().Contain("not well-formed CBOR");
        broken.OutputText.Should().StartWith("00000000  83 01 ");
    }

    private protected static byte[] Deterministic(int size)
    {
        byte[] body = new byte[size];
        for (int i = 0; i < size; i++)
        {
            body[i] = (byte)(i % 251);
        }

        return body;
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

    private protected string Uri(LoopbackServer server, string pathAndQuery) => server.Uri(pathAndQuery, _scheme).ToString();
}

/// <summary>The tool over UDP, and what only UDP has: ICMP port unreachable from a port nothing listens on.</summary>
public sealed class CoapToolOverUdpTests() : CoapToolTests("coap")
{
    [Fact]
    public async Task NothingListeningIsReportedAtOnceByItsIcmpPortUnreachable()
    {
        // A port that was just free: the kernel answers a datagram to it with ICMP port unreachable.
        int port = FreePorts.UdpAndTcp();

        CoapToolResult result = await CoapTool.RunAsync("get", $"coap://127.0.0.1:{port}/x");

        result.ExitCode.Should().Be(3, result.ToString());
        result.ErrorLines.Should().ContainSingle().Which.Should().Be($"error: 127.0.0.1:{port}: port unreachable (ICMP): nothing listens on that port.");
    }
}

/// <summary>The tool over TCP (RFC 8323), and what only TCP has: BERT blocks.</summary>
public sealed class CoapToolOverTcpTests() : CoapToolTests("coap+tcp")
{
    [Fact]
    public async Task ALargeBodyOverTcpIsShownAsBertBlocksInTheDump()
    {
        byte[] body = Deterministic(200_000);
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapGet("/big", _ => CoapResponse.Content(body, CoapContentFormat.OctetStream)), LoopbackServer.Options(tcp: true));

        CoapToolResult result = await CoapTool.RunAsync("get", Uri(server, "/big"), "-v");

        result.ExitCode.Should().Be(0, result.ErrorLines.FirstOrDefault());
        result.Output.Should().Equal(body);
        result.ErrorLines.Should().Contain(l => l.StartsWith("<- ", StringComparison.Ordinal) && l.Contains("Block2:0/M/BERT", StringComparison.Ordinal), "RFC 8323 section 6: SZX 7 is BERT");
    }
}
