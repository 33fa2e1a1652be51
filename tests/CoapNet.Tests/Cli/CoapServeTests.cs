using System.Net;
using CoapNet.Cli;
using CoapNet.Client;
using CoapNet.LinkFormat;
using CoapNet.Messages;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Cli;

/// <summary>
/// <c>coap serve DIR</c> run as a process: it serves the folder's files over UDP and TCP with their
/// Content-Format, lists them in discovery, never serves anything outside the folder, and stops on SIGTERM.
/// </summary>
public sealed class CoapServeTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("coap-serve-").FullName;
    private readonly string _outside = Directory.CreateTempSubdirectory("coap-outside-").FullName;

    public CoapServeTests()
    {
        File.WriteAllText(Path.Combine(_root, "hello.txt"), "Hello from a file\n");
        Directory.CreateDirectory(Path.Combine(_root, "data"));
        File.WriteAllBytes(Path.Combine(_root, "data", "reading.cbor"), [0xa1, 0x61, 0x74, 0x18, 0x2a]);
        File.WriteAllText(Path.Combine(_outside, "secret.txt"), "not for you");
    }

    [SkippableFact]
    public async Task ServesTheFolderOverUdpAndTcpListsItAndStopsOnSigterm()
    {
        Skip.If(OperatingSystem.IsWindows(), "POSIX signals");
        using ServeProcess serve = await ServeProcess.StartAsync(_root);
        await using CoapClient client = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) });

        CoapResponse text = await client.GetAsync(new Uri(serve.Udp, "/hello.txt"));
        CoapResponse cbor = await client.GetAsync(new Uri(serve.Tcp, "/data/reading.cbor"));
        IReadOnlyList<CoapLink> links = await client.DiscoverAsync(serve.Udp);

        text.Code.Should().Be(CoapCode.Content);
        text.ContentFormat.Should().Be(CoapContentFormat.TextPlain);
        text.GetPayloadString().Should().Be("Hello from a file\n");
        cbor.ContentFormat.Should().Be(CoapContentFormat.Cbor);
        cbor.Payload.ToArray().Should().Equal(0xa1, 0x61, 0x74, 0x18, 0x2a);
        links.Select(l => l.ToString()).Should().BeEquivalentTo("</hello.txt>;ct=0", "</data/reading.cbor>;ct=60");

        await serve.SignalAsync("TERM");
        (await serve.WaitForExitAsync()).Should().Be(0);
        serve.Output.Should().Contain("Stopped.");
    }

    [SkippableFact]
    public async Task ServesFilesAddedAfterItStartedAndAnswersNotFoundForMissingOnes()
    {
        Skip.If(OperatingSystem.IsWindows(), "POSIX signals");
        using ServeProcess serve = await ServeProcess.StartAsync(_root);
        await using CoapClient client = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) });
        await File.WriteAllTextAsync(Path.Combine(_root, "data", "later.json"), "{\"late\":true}");

        CoapResponse later = await client.GetAsync(new Uri(serve.Udp, "/data/later.json"));
        CoapResponse missing = await client.GetAsync(new Uri(serve.Udp, "/data/none.json"));

        later.ContentFormat.Should().Be(CoapContentFormat.Json);
        later.GetPayloadString().Should().Be("{\"late\":true}");
        missing.Code.Should().Be(CoapCode.NotFound);
    }

    [SkippableFact]
    public async Task ServesAFileOfAnySizeBlockByBlockAndListsTheFolderAtTheRoot()
    {
        Skip.If(OperatingSystem.IsWindows(), "POSIX signals");
        byte[] big = new byte[1_000_000];
        new Random(7959).NextBytes(big);
        await File.WriteAllBytesAsync(Path.Combine(_root, "big.bin"), big);
        using ServeProcess serve = await ServeProcess.StartAsync(_root);
        string download = Path.Combine(_root, "..", Guid.NewGuid().ToString("N"));
        try
        {
            CoapToolResult udp = await CoapTool.RunAsync("get", new Uri(serve.Udp, "/big.bin").ToString(), "-o", download);
            CoapToolResult tcp = await CoapTool.RunAsync("get", new Uri(serve.Tcp, "/big.bin").ToString());
            CoapToolResult root = await CoapTool.RunAsync("get", new Uri(serve.Udp, "/").ToString());
            CoapToolResult folder = await CoapTool.RunAsync("get", new Uri(serve.Udp, "/data").ToString());

            udp.ExitCode.Should().Be(0, udp.ToString());
            (await File.ReadAllBytesAsync(download)).Should().Equal(big, "RFC 7959: the file goes block by block, however large");
            tcp.Output.Should().Equal(big);
            root.ExitCode.Should().Be(0, root.ToString());
            root.OutputText.Split('\n', StringSplitOptions.RemoveEmptyEntries).Should().BeEquivalentTo(
                "coap serve: /", "/hello.txt  18 bytes  text/plain", "/data/", "/big.bin  1000000 bytes  application/octet-stream");
            folder.OutputText.Should().Be("coap serve: /data/\n/data/reading.cbor  5 bytes  application/cbor\n");
        }
        finally
        {
            File.Delete(download);
        }
    }

    [SkippableFact]
    public async Task RefusesASymbolicLinkThatLeadsOutOfTheFolder()
    {
        Skip.If(OperatingSystem.IsWindows(), "symbolic links need privileges there");
        File.CreateSymbolicLink(Path.Combine(_root, "escape.txt"), Path.Combine(_outside, "secret.txt"));
        Directory.CreateSymbolicLink(Path.Combine(_root, "out"), _outside);
        using ServeProcess serve = await ServeProcess.StartAsync(_root);
        await using CoapClient client = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) });

        CoapResponse file = await client.GetAsync(new Uri(serve.Udp, "/escape.txt"));
        CoapResponse throughFolder = await client.GetAsync(new Uri(serve.Udp, "/out/secret.txt"));
        IReadOnlyList<CoapLink> links = await client.DiscoverAsync(serve.Udp);

        file.Code.Should().Be(CoapCode.Forbidden);
        throughFolder.Code.Should().Be(CoapCode.Forbidden);
        links.Should().NotContain(l => l.Target.Contains("secret", StringComparison.Ordinal) || l.Target.Contains("escape", StringComparison.Ordinal));
    }

    [Theory]
    [InlineData("..", "hello.txt")]
    [InlineData("data", "..", "..", "etc", "passwd")]
    [InlineData(".", "hello.txt")]
    [InlineData("data\\..\\hello.txt")]
    [InlineData("")]
    public async Task RefusesUriPathSegmentsThatWouldLeaveOrBendThePath(params string[] segments)
    {
        // Sent as raw Uri-Path options: a URI would be normalized before it left the client.
        await using Server.LoopbackServer server = Server.LoopbackServer.Start(s => new FolderResources(_root).Map(s));
        await using CoapClient client = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) });
        CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get };
        foreach (string segment in segments)
        {
            request.Options.Add(CoapOptionNumber.UriPath, segment);
        }

        request.Options.Add(CoapOptionNumber.UriPath, "x");

        CoapResponse response = await client.SendAsync(request, server.EndPoint);

        response.Code.Should().Be(CoapCode.Forbidden);
    }

    [Fact]
    public async Task OnABusyPortServeSaysWhichEndpointAndExitsWithTheErrorCode()
    {
        using System.Net.Sockets.Socket holder = new(System.Net.Sockets.AddressFamily.InterNetwork, System.Net.Sockets.SocketType.Dgram, System.Net.Sockets.ProtocolType.Udp);
        holder.Bind(new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, 0));
        string port = ((System.Net.IPEndPoint)holder.LocalEndPoint!).Port.ToString(System.Globalization.CultureInfo.InvariantCulture);

        CoapToolResult result = await CoapTool.RunAsync("serve", _root, "--port", port, "--address", "127.0.0.1");

        result.ExitCode.Should().Be(1, result.ToString());
        result.ErrorLines.Should().ContainSingle().Which.Should().StartWith($"error: cannot listen: Cannot bind coap://127.0.0.1:{port}: ");
    }

    public void Dispose()
    {
        Directory.Delete(_root, recursive: true);
        Directory.Delete(_outside, recursive: true);
    }

    /// <summary>coap serve as a child process on 127.0.0.1, UDP and TCP at ports the OS picks.</summary>
    private sealed class ServeProcess : IDisposable
    {
        private readonly TaskCompletionSource<Uri> _udp = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly TaskCompletionSource<Uri> _tcp = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private ChildProcess? _child;

        public Uri Udp => _udp.Task.Result;

        public Uri Tcp => _tcp.Task.Result;

        public string Output => _child!.Output;

        public static async Task<ServeProcess> StartAsync(string root)
        {
            ServeProcess serve = new();
            serve._child = ChildProcess.StartDll(CoapTool.Dll, ["serve", root, "--port", "0", "--tcp-port", "0", "--address", "127.0.0.1"], serve.OnLine);
            try
            {
                await serve._child.UntilAsync(Task.WhenAll(serve._udp.Task, serve._tcp.Task), CoapTool.Liveness, "print its 'Serving ... on' lines");
            }
            catch
            {
                serve.Dispose();
                throw;
            }

            return serve;
        }

        public Task SignalAsync(string signal) => _child!.SignalAsync(signal);

        public Task<int> WaitForExitAsync() => _child!.WaitForExitAsync(CoapTool.Liveness);

        public void Dispose() => _child?.Dispose();

        private void OnLine(string line)
        {
            int at = line.IndexOf(" on coap", StringComparison.Ordinal);
            if (at >= 0)
            {
                Uri uri = new(line[(at + 4)..].Trim());
                (uri.Scheme == "coap" ? _udp : _tcp).TrySetResult(uri);
            }
        }
    }
}
