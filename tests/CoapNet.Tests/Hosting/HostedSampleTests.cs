using System.Net;
using System.Text.Json;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Hosting;

/// <summary>
/// The hosted sample run as a process with its own appsettings.json: the endpoints the file lists, each
/// moved to 127.0.0.1 at a free port on the command line; it serves /hello through its scoped greeter
/// and stops gracefully on SIGTERM.
/// </summary>
public sealed class HostedSampleTests
{
    private static readonly TimeSpan Liveness = TimeSpan.FromSeconds(30);

    [SkippableFact]
    public async Task TheSampleStartsFromItsSettingsServesAndStopsWithTheHost()
    {
        Skip.If(OperatingSystem.IsWindows(), "POSIX signals");
        string dll = Path.Combine(AppContext.BaseDirectory, "CoapNet.Samples.Hosted.dll");
        List<string> arguments = [];
        List<string> schemes = [];
        int index = 0;
        foreach (string endpoint in FileEndpoints())
        {
            // Same transport as the file says, on loopback at a port the OS picks.
            string transport = endpoint[..endpoint.IndexOf("://", StringComparison.Ordinal)];
            arguments.AddRange([$"--Coap:Endpoints:{index++}", $"{transport}://127.0.0.1:0"]);
            schemes.Add(transport == "udp" ? "coap" : "coap+tcp");
        }

        List<Uri> listening = [];
        TaskCompletionSource allListening = new(TaskCreationOptions.RunContinuationsAsynchronously);
        using ChildProcess sample = ChildProcess.StartDll(dll, arguments, line =>
        {
            int at = line.IndexOf("listening on ", StringComparison.Ordinal);
            if (at >= 0)
            {
                lock (listening)
                {
                    listening.Add(new Uri(line[(at + "listening on ".Length)..].Trim()));
                    if (listening.Count == schemes.Count)
                    {
                        allListening.TrySetResult();
                    }
                }
            }
        });
        await allListening.Task.WaitAsync(Liveness);
        listening.Select(u => u.Scheme).Should().BeEquivalentTo(schemes);
        await using CoapClient client = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) });

        CoapResponse first = await client.GetAsync(new Uri(listening[0], "/hello"));
        CoapResponse second = await client.GetAsync(new Uri(listening[^1], "/hello"));

        first.GetPayloadString().Should().Be("Hello, CoAP! You are visitor 1.");
        second.GetPayloadString().Should().Be("Hello, CoAP! You are visitor 2.");
        await sample.SignalAsync("TERM");
        (await sample.WaitForExitAsync(Liveness)).Should().Be(0, sample.Output);
        sample.Output.Should().Contain("Application is shutting down...");
    }

    [SkippableFact]
    public async Task TheSampleServesCoapsTcpOnceItsSettingsNameAnEndpointAndACertificate()
    {
        Skip.If(OperatingSystem.IsWindows(), "POSIX signals");
        using CoapNet.Tests.Tls.PemFiles pem = new();
        List<string> arguments = ["--Coap:Endpoints:0", "udp://127.0.0.1:0", "--Coap:Endpoints:1", "tcp://127.0.0.1:0"];

        // What the sample's header says to add to turn coaps+tcp on; its appsettings.json leaves the keys empty.
        arguments.AddRange(["--Coap:Tls:Endpoints:0", "127.0.0.1:0", "--Coap:Tls:CertificateFile", pem["server.pem"], "--Coap:Tls:CertificateKeyFile", pem["server.key"]]);
        TaskCompletionSource<Uri> coapsTcp = new(TaskCreationOptions.RunContinuationsAsynchronously);
        using ChildProcess sample = ChildProcess.StartDll(Path.Combine(AppContext.BaseDirectory, "CoapNet.Samples.Hosted.dll"), arguments, line =>
        {
            int at = line.IndexOf("listening on coaps+tcp://", StringComparison.Ordinal);
            if (at >= 0)
            {
                coapsTcp.TrySetResult(new Uri(line[(at + "listening on ".Length)..].Trim()));
            }
        });
        Uri listening = await coapsTcp.Task.WaitAsync(Liveness);
        await using CoapClient client = CoapNet.Tests.Tls.TlsLoopback.Client();

        CoapResponse hello = await client.GetAsync(new Uri(listening, "/hello"));

        hello.GetPayloadString().Should().Be("Hello, CoAP! You are visitor 1.");
        await sample.SignalAsync("TERM");
        (await sample.WaitForExitAsync(Liveness)).Should().Be(0, sample.Output);
    }

    [Fact]
    public async Task OnABusyPortTheSampleSaysWhichEndpointAndWhatToChangeAndExitsWithOne()
    {
        // The host logs the failed start; the program adds what to change, and exits with 1 rather than abort (134).
        using System.Net.Sockets.Socket holder = new(System.Net.Sockets.AddressFamily.InterNetwork, System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp);
        holder.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        holder.Listen();
        int port = ((IPEndPoint)holder.LocalEndPoint!).Port;

        using ChildProcess sample = ChildProcess.StartDll(
            Path.Combine(AppContext.BaseDirectory, "CoapNet.Samples.Hosted.dll"),
            ["--Coap:Endpoints:0", $"tcp://127.0.0.1:{port}"],
            _ => { });

        (await sample.WaitForExitAsync(Liveness)).Should().Be(1, sample.Output);
        sample.Output.Should().Contain($"Cannot bind the coap+tcp (TCP) endpoint 127.0.0.1:{port}: ").And.Contain("Set other endpoints in Coap:Endpoints");
    }

    [Fact]
    public void TheReadmeShowsTheSamplesProgram()
    {
        string readme = File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "ReadmeCheck", "README.md")).ReplaceLineEndings("\n");
        string program = File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "ReadmeCheck", "HostedProgram.cs.txt")).ReplaceLineEndings("\n");

        string code = program[(program.IndexOf("\nusing ", StringComparison.Ordinal) + 1)..].TrimEnd('\n');
        readme.Should().Contain("```csharp\n" + code + "\n```", "the README's hosting example is the sample's code");
    }

    // The sample's own appsettings.json, copied next to the tests with the sample.
    private static List<string> FileEndpoints()
    {
        string path = Path.Combine(AppContext.BaseDirectory, "appsettings.json");
        using JsonDocument settings = JsonDocument.Parse(File.ReadAllText(path));
        List<string> endpoints = [.. settings.RootElement.GetProperty("Coap").GetProperty("Endpoints").EnumerateArray().Select(e => e.GetString()!)];
        endpoints.Should().NotBeEmpty();
        return endpoints;
    }
}
