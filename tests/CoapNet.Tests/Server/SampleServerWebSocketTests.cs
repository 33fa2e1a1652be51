using System.Globalization;
using System.Net;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.WebSockets;

namespace CoapNet.Tests.Server;

/// <summary>
/// The sample server program with its HTTP port (on a port chosen free at run time, never the default 8683): it says
/// where coap+ws and the explorer are, in the form of its other start lines, and serves its resources over coap+ws, the
/// observable /sensors/temperature among them, and the explorer's page.
/// </summary>
public sealed class SampleServerWebSocketTests
{
    private static readonly TimeSpan Liveness = TimeSpan.FromSeconds(30);

    [SkippableFact]
    public async Task TheSampleServerServesCoapOverWebSocketsAndTheExplorerOnItsHttpPort()
    {
        Skip.If(OperatingSystem.IsWindows(), "POSIX signals");
        using SampleServerProcess sample = await SampleServerProcess.StartWithHttpAsync();
        int port = sample.WebSocketEndPoint.Port;

        // The sample lists its resources after its endpoints, and the start returns at the explorer's line: wait for the list.
        await Wait.UntilAsync(() => sample.Output.Contains("Resources: ", StringComparison.Ordinal), "the sample to list its resources");
        string[] lines = sample.Output.Split('\n', StringSplitOptions.TrimEntries);
        lines.Should().Contain($"CoapNet sample server listening on coap+ws://127.0.0.1:{port}").And.Contain($"explorer: http://127.0.0.1:{port}/");
        lines.Should().Contain(line => line.StartsWith("Resources: ", StringComparison.Ordinal) && line.Contains("/sensors/temperature", StringComparison.Ordinal));

        await using CoapClient client = KestrelCoapServer.Client();
        (await client.GetAsync(new Uri($"coap+ws://127.0.0.1:{port}/hello"))).GetPayloadString().Should().Be("Hello, CoAP!");

        using HttpClient http = new();
        string page = await http.GetStringAsync(sample.Explorer);
        page.Should().Contain("<title>CoAP explorer</title>");

        await sample.SignalAsync("TERM");
        (await sample.WaitForExitAsync()).Should().Be(0, sample.Output);
        sample.Output.Split('\n', StringSplitOptions.TrimEntries).Should().ContainInOrder("Stopping...", "Stopped.");
    }

    [SkippableFact]
    public async Task TheTemperatureIsANumberWhoseObserversAreNotifiedEverySecond()
    {
        Skip.If(OperatingSystem.IsWindows(), "POSIX signals");
        using SampleServerProcess sample = await SampleServerProcess.StartWithHttpAsync();
        await using CoapClient client = KestrelCoapServer.Client();
        using CancellationTokenSource stop = new(Wait.DefaultBound);
        List<double> values = [];

        await foreach (CoapResponse notification in client.ObserveAsync(new Uri($"coap+ws://{sample.WebSocketEndPoint}/sensors/temperature"), stop.Token))
        {
            values.Add(double.Parse(notification.GetPayloadString(), NumberStyles.Float, CultureInfo.InvariantCulture));
            if (values.Count == 3)
            {
                break;
            }
        }

        values.Should().OnlyContain(value => value >= 15 && value <= 25, "a sine of amplitude 5 around 20 degrees");
    }

    [SkippableFact]
    public async Task OnABusyHttpPortTheSampleServerSaysSoAndItsHintWorksAsWritten()
    {
        Skip.If(OperatingSystem.IsWindows(), "POSIX signals");
        using System.Net.Sockets.Socket holder = new(System.Net.Sockets.AddressFamily.InterNetwork, System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp);
        holder.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        holder.Listen();
        int port = ((IPEndPoint)holder.LocalEndPoint!).Port;
        string dll = Path.Combine(AppContext.BaseDirectory, "CoapNet.Samples.Server.dll");

        using ChildProcess sample = ChildProcess.StartDll(
            dll,
            ["--port", "0", "--tcp-port", "0", "--dtls-port", "0", "--tls-port", "0", "--http-port", port.ToString(CultureInfo.InvariantCulture), "--address", "127.0.0.1"],
            _ => { });

        (await sample.WaitForExitAsync(Liveness)).Should().Be(1, sample.Output);
        sample.Output.Should().Contain($"127.0.0.1:{port}").And.NotContain("   at ", "a busy port is a message, not a stack trace");
        const string Run = "run on a port free now: dotnet run --project samples/CoapNet.Samples.Server -- ";
        string hint = sample.Output.Split('\n').Single(line => line.Contains(Run, StringComparison.Ordinal)).Trim();
        string[] moved = hint[(hint.IndexOf(Run, StringComparison.Ordinal) + Run.Length)..].Split(' ');
        moved.Should().ContainInOrder(["--address", "127.0.0.1"]).And.NotContain(port.ToString(CultureInfo.InvariantCulture));

        // The hint, as written, starts the server while the first port is still held.
        TaskCompletionSource explorer = new(TaskCreationOptions.RunContinuationsAsynchronously);
        using ChildProcess again = ChildProcess.StartDll(dll, moved, line =>
        {
            if (line.StartsWith("explorer: http://127.0.0.1:", StringComparison.Ordinal))
            {
                explorer.TrySetResult();
            }
        });
        await again.UntilAsync(explorer.Task, Liveness, "say where the explorer is, on the port of the hint");
        await again.SignalAsync("TERM");
        (await again.WaitForExitAsync(Liveness)).Should().Be(0, again.Output);
    }
}
