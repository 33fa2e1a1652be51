using System.Net;
using System.Text.RegularExpressions;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Hosting;

/// <summary>
/// The hosted sample run as a process with its own appsettings.json, whose endpoints are replaced whole by ones on
/// 127.0.0.1 at ports the OS picks (<see cref="HostedSampleSettings"/>); it serves /hello through its scoped greeter
/// and stops gracefully on SIGTERM; a start it cannot make (ports held, a misspelled key) says why in one line.
/// </summary>
public sealed partial class HostedSampleTests
{
    private static readonly TimeSpan Liveness = TimeSpan.FromSeconds(30);

    [SkippableFact]
    public async Task TheSampleStartsFromItsSettingsServesAndStopsWithTheHost()
    {
        Skip.If(OperatingSystem.IsWindows(), "POSIX signals");
        string dll = Path.Combine(AppContext.BaseDirectory, "CoapNet.Samples.Hosted.dll");
        using HostedSampleSettings settings = new();
        List<string> schemes = [.. settings.Endpoints.Values];
        List<Uri> listening = [];
        TaskCompletionSource allListening = new(TaskCreationOptions.RunContinuationsAsynchronously);
        using ChildProcess sample = ChildProcess.StartDll(dll, settings.Arguments, line =>
        {
            if (HostedSampleSettings.ListeningOn(line) is { } uri)
            {
                lock (listening)
                {
                    listening.Add(uri);
                    if (listening.Count == schemes.Count)
                    {
                        allListening.TrySetResult();
                    }
                }
            }
        });
        await sample.UntilAsync(allListening.Task, Liveness, "say it listens on every endpoint of its file");
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
        using HostedSampleSettings settings = new();

        // What the sample's header says to add to turn coaps+tcp on.
        List<string> arguments =
        [
            .. settings.Arguments,
            "--Coap:Endpoints:secure:Url", "coaps+tcp://127.0.0.1:0",
            "--Coap:Endpoints:secure:Tls:CertificateFile", pem["server.pem"],
            "--Coap:Endpoints:secure:Tls:CertificateKeyFile", pem["server.key"],
        ];
        TaskCompletionSource<Uri> coapsTcp = new(TaskCreationOptions.RunContinuationsAsynchronously);
        using ChildProcess sample = ChildProcess.StartDll(Path.Combine(AppContext.BaseDirectory, "CoapNet.Samples.Hosted.dll"), arguments, line =>
        {
            int at = line.IndexOf("listening on coaps+tcp://", StringComparison.Ordinal);
            if (at >= 0)
            {
                coapsTcp.TrySetResult(new Uri(line[(at + "listening on ".Length)..].Trim()));
            }
        });
        await sample.UntilAsync(coapsTcp.Task, Liveness, "say it listens on coaps+tcp");
        Uri listening = await coapsTcp.Task;
        await using CoapClient client = CoapNet.Tests.Tls.TlsLoopback.Client();

        CoapResponse hello = await client.GetAsync(new Uri(listening, "/hello"));

        hello.GetPayloadString().Should().Be("Hello, CoAP! You are visitor 1.");
        await sample.SignalAsync("TERM");
        (await sample.WaitForExitAsync(Liveness)).Should().Be(0, sample.Output);
    }

    [SkippableFact]
    public async Task OnBusyPortsTheSampleNamesEveryEndpointAndItsHintWorksAsWritten()
    {
        Skip.If(OperatingSystem.IsWindows(), "POSIX signals");

        // Both of the file's endpoints on ports something else holds: one start reports both, each by its scheme and name.
        using System.Net.Sockets.Socket udpHolder = new(System.Net.Sockets.AddressFamily.InterNetwork, System.Net.Sockets.SocketType.Dgram, System.Net.Sockets.ProtocolType.Udp);
        udpHolder.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        using System.Net.Sockets.Socket tcpHolder = new(System.Net.Sockets.AddressFamily.InterNetwork, System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp);
        tcpHolder.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        tcpHolder.Listen();
        int udpPort = ((IPEndPoint)udpHolder.LocalEndPoint!).Port, tcpPort = ((IPEndPoint)tcpHolder.LocalEndPoint!).Port;
        string dll = Path.Combine(AppContext.BaseDirectory, "CoapNet.Samples.Hosted.dll");
        using HostedSampleSettings settings = new();
        settings.Endpoints.Keys.Should().BeEquivalentTo(["udp", "tcp"]);

        using ChildProcess refused = ChildProcess.StartDll(dll, [.. settings.Arguments, "--Coap:Endpoints:udp:Url", $"coap://127.0.0.1:{udpPort}", "--Coap:Endpoints:tcp:Url", $"coap+tcp://127.0.0.1:{tcpPort}"], _ => { });

        (await refused.WaitForExitAsync(Liveness)).Should().Be(1, refused.Output);
        refused.Output.Should().Contain("Cannot bind 2 endpoints: ")
            .And.Contain($"coap://127.0.0.1:{udpPort} (Coap:Endpoints:udp): ")
            .And.Contain($"coap+tcp://127.0.0.1:{tcpPort} (Coap:Endpoints:tcp): ");
        string[] hint = [.. Regex.Matches(refused.Output, @"--Coap:Endpoints:(udp|tcp):Url=\S+").Select(m => m.Value)];
        hint.Should().HaveCount(2, "the hint moves each endpoint that failed: " + refused.Output);

        // The hint, as written, starts the sample with both endpoints while the first ports are still held.
        int listening = 0;
        TaskCompletionSource both = new(TaskCreationOptions.RunContinuationsAsynchronously);
        TaskCompletionSource started = new(TaskCreationOptions.RunContinuationsAsynchronously);
        using ChildProcess moved = ChildProcess.StartDll(dll, [.. settings.Arguments, .. hint], line =>
        {
            if (HostedSampleSettings.ListeningOn(line) is not null && Interlocked.Increment(ref listening) == 2)
            {
                both.TrySetResult();
            }

            if (line.Contains("Application started.", StringComparison.Ordinal))
            {
                started.TrySetResult();
            }
        });
        await moved.UntilAsync(both.Task, Liveness, "listen on both moved endpoints");
        await moved.UntilAsync(started.Task, Liveness, "start, Kestrel too");
        await moved.SignalAsync("TERM");
        (await moved.WaitForExitAsync(Liveness)).Should().Be(0, moved.Output);
    }

    [Fact]
    public async Task AMisspelledKeyInTheSamplesSettingsStopsTheStartNamingItAndTheKeyItMeant()
    {
        using HostedSampleSettings settings = new(text =>
        {
            text.Should().Contain("\"MaxPendingRequests\"");
            return text.Replace("\"MaxPendingRequests\"", "\"MaxPendingRequest\"", StringComparison.Ordinal);
        });

        using ChildProcess sample = ChildProcess.StartDll(Path.Combine(AppContext.BaseDirectory, "CoapNet.Samples.Hosted.dll"), settings.Arguments, _ => { });

        (await sample.WaitForExitAsync(Liveness)).Should().Be(1, sample.Output);
        sample.Output.Should().Contain("Coap:MaxPendingRequest is not a setting; did you mean MaxPendingRequests?").And.NotContain("listening on");
    }

    [SkippableFact]
    public async Task TheSampleServesCoapOverWebSocketsAndTheExplorerOnKestrelsPortFromItsSettings()
    {
        Skip.If(OperatingSystem.IsWindows(), "POSIX signals");
        using HostedSampleSettings settings = new();
        TaskCompletionSource<int> http = new(TaskCreationOptions.RunContinuationsAsynchronously);
        using ChildProcess sample = ChildProcess.StartDll(Path.Combine(AppContext.BaseDirectory, "CoapNet.Samples.Hosted.dll"), settings.Arguments, line =>
        {
            // Kestrel's line for the settings' Kestrel:Endpoints (the file's 8683, port 0 here).
            if (KestrelListening().Match(line) is { Success: true } match)
            {
                http.TrySetResult(int.Parse(match.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture));
            }
        });
        await sample.UntilAsync(http.Task, Liveness, "say where Kestrel listens");
        int port = await http.Task;
        await using CoapClient client = CoapNet.Tests.WebSockets.KestrelCoapServer.Client();

        CoapResponse hello = await client.GetAsync(new Uri($"coap+ws://127.0.0.1:{port}/hello"));
        using CancellationTokenSource stop = new(Wait.DefaultBound);
        int notifications = 0;
        await foreach (CoapResponse temperature in client.ObserveAsync(new Uri($"coap+ws://127.0.0.1:{port}/sensors/temperature"), stop.Token))
        {
            double.Parse(temperature.GetPayloadString(), System.Globalization.CultureInfo.InvariantCulture).Should().BeInRange(15, 25);
            if (++notifications == 2)
            {
                break;
            }
        }

        using HttpClient browser = new();
        string page = await browser.GetStringAsync(new Uri($"http://127.0.0.1:{port}/"));

        hello.GetPayloadString().Should().Be("Hello, CoAP! You are visitor 1.");
        page.Should().Contain("<title>CoAP explorer</title>");
        await sample.SignalAsync("TERM");
        (await sample.WaitForExitAsync(Liveness)).Should().Be(0, sample.Output);
    }

    [GeneratedRegex(@"Now listening on: http://127\.0\.0\.1:(\d+)")]
    private static partial Regex KestrelListening();

    [Fact]
    public void TheHostingGuideShowsTheSamplesProgram()
    {
        string guide = File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "ReadmeCheck", "hosting.md")).ReplaceLineEndings("\n");
        string program = File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "ReadmeCheck", "HostedProgram.cs.txt")).ReplaceLineEndings("\n");

        string code = program[(program.IndexOf("\nusing ", StringComparison.Ordinal) + 1)..].TrimEnd('\n');
        guide.Should().Contain("```csharp\n" + code + "\n```", "docs/hosting.md's example is the sample's code");
    }

}
