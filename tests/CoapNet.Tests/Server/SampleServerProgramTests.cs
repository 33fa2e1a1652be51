using System.Globalization;
using System.Net;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Server;

/// <summary>
/// The sample server program itself, run as a process the way a user runs it (its dll is copied
/// next to the tests through the project reference): it listens where told, serves, and stops
/// gracefully on SIGTERM and SIGINT, answering the request in flight first.
/// </summary>
public sealed class SampleServerProgramTests
{
    private static readonly TimeSpan Liveness = TimeSpan.FromSeconds(30);

    [SkippableFact]
    public async Task TheSampleServerServesAndOnSigtermAnswersTheRequestInFlightBeforeItStops()
    {
        Skip.If(OperatingSystem.IsWindows(), "POSIX signals");
        using SampleServerProcess sample = await SampleServerProcess.StartAsync();
        await using CoapClient client = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) });
        CoapResponse hello = await client.GetAsync(new Uri($"coap://{sample.EndPoint}/hello"));
        hello.GetPayloadString().Should().Be("Hello, CoAP!");

        using RawPeer peer = new(sample.EndPoint);
        await peer.SendAsync(peer.Request(CoapMessageType.Confirmable, CoapCode.Get, "/slow?ms=1500", token: 0x51));
        (await peer.PingBarrierAsync()).Should().BeEmpty("the request is in the pipeline, its handler sleeping");
        await sample.SignalAsync("TERM");

        CoapMessage answer = await ReceiveResponseAsync(peer);
        answer.GetPayloadString().Should().Be("Slept 1500 ms.");
        (await sample.WaitForExitAsync()).Should().Be(0);
        sample.Output.Split('\n', StringSplitOptions.TrimEntries).Should().ContainInOrder("Stopping...", "Stopped.");
    }

    [SkippableFact]
    public async Task TheSampleServerStopsGracefullyOnSigint()
    {
        Skip.IfNot(OperatingSystem.IsLinux(), "POSIX signals, and /proc to see whether SIGINT is ignored");
        Skip.If(SigintIgnored(), "SIGINT is ignored by this process (started in the background without job control), so a child inherits that and Ctrl+C cannot reach it");
        using SampleServerProcess sample = await SampleServerProcess.StartAsync();
        await using CoapClient client = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) });
        (await client.GetAsync(new Uri($"coap://{sample.EndPoint}/hello"))).GetPayloadString().Should().Be("Hello, CoAP!");

        await sample.SignalAsync("INT");

        (await sample.WaitForExitAsync()).Should().Be(0);
        sample.Output.Split('\n', StringSplitOptions.TrimEntries).Should().ContainInOrder("Stopping...", "Stopped.");
    }

    [SkippableFact]
    public async Task OnBusyPortsTheSampleServerNamesEveryEndpointByItsSchemeAndItsHintWorksAsWritten()
    {
        Skip.If(OperatingSystem.IsWindows(), "POSIX signals");
        using System.Net.Sockets.Socket holder = new(System.Net.Sockets.AddressFamily.InterNetwork, System.Net.Sockets.SocketType.Dgram, System.Net.Sockets.ProtocolType.Udp);
        holder.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        int port = ((IPEndPoint)holder.LocalEndPoint!).Port;
        using System.Net.Sockets.Socket secureHolder = new(System.Net.Sockets.AddressFamily.InterNetwork, System.Net.Sockets.SocketType.Dgram, System.Net.Sockets.ProtocolType.Udp);
        secureHolder.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        int securePort = ((IPEndPoint)secureHolder.LocalEndPoint!).Port;
        string dll = Path.Combine(AppContext.BaseDirectory, "CoapNet.Samples.Server.dll");

        using ChildProcess sample = ChildProcess.StartDll(
            dll,
            ["--port", port.ToString(CultureInfo.InvariantCulture), "--tcp-port", "0", "--dtls-port", securePort.ToString(CultureInfo.InvariantCulture), "--tls-port", "0", "--http-port", "0", "--address", "127.0.0.1"],
            _ => { });

        (await sample.WaitForExitAsync(Liveness)).Should().Be(1, sample.Output);
        sample.Output.Should().Contain($"Cannot bind 2 endpoints: coap://127.0.0.1:{port}: ")
            .And.Contain($"; coaps://127.0.0.1:{securePort}: ", "the coaps endpoint is named coaps, not coap (UDP)")
            .And.NotContain("   at ", "a busy port is a message, not a stack trace");
        const string Run = "run on ports free now: dotnet run --project samples/CoapNet.Samples.Server -- ";
        string hint = sample.Output.Split('\n').Single(line => line.Contains(Run, StringComparison.Ordinal)).Trim();
        string[] moved = hint[(hint.IndexOf(Run, StringComparison.Ordinal) + Run.Length)..].Split(' ');
        moved.Should().ContainInOrder(["--address", "127.0.0.1"], "the hint keeps the arguments it was given")
            .And.NotContain(port.ToString(CultureInfo.InvariantCulture)).And.NotContain(securePort.ToString(CultureInfo.InvariantCulture));

        // The hint, as written, starts the server on both endpoints while the first ports are still held.
        TaskCompletionSource both = new(TaskCreationOptions.RunContinuationsAsynchronously);
        int listening = 0;
        using ChildProcess again = ChildProcess.StartDll(dll, moved, line =>
        {
            // The program's own lines, printed once it is up (the library's log says "CoAP server listening on" before).
            if ((line.Contains("sample server listening on coap://", StringComparison.Ordinal) || line.Contains("sample server listening on coaps://", StringComparison.Ordinal))
                && Interlocked.Increment(ref listening) == 2)
            {
                both.TrySetResult();
            }
        });
        await again.UntilAsync(both.Task, Liveness, "listen on coap and coaps at the ports of the hint");
        await again.SignalAsync("TERM");
        (await again.WaitForExitAsync(Liveness)).Should().Be(0, again.Output);
    }

    [Fact]
    public async Task HelpListsEveryFlagTheBenchmarkScriptsPassAndExitsWithZero()
    {
        using ChildProcess sample = ChildProcess.StartDll(Path.Combine(AppContext.BaseDirectory, "CoapNet.Samples.Server.dll"), ["--help"], _ => { });

        (await sample.WaitForExitAsync(Liveness)).Should().Be(0, sample.Output);
        foreach (string flag in (string[])["--address", "--port", "--tcp-port", "--dtls-port", "--tls-port", "--http-port", "--receive-sockets", "--psk-identity", "--psk-key", "--cert", "--key"])
        {
            sample.Output.Should().Contain(flag + " ", "benchmarks/*.sh pass it");
        }

        sample.Output.Should().NotContain("listening on", "--help runs nothing");
    }

    [Theory]
    [InlineData("--port", "70000", "--port must be a port from 0 to 65535.")]
    [InlineData("--receive-sockets", "0", "--receive-sockets must be from 1 to")]
    [InlineData("--address", "localhost", "--address: 'localhost' is not an IP address.")]
    [InlineData("--bogus", "1", "--bogus")]
    public async Task AUsageErrorSaysWhatIsWrongAndExitsWithTwo(string flag, string value, string error)
    {
        using ChildProcess sample = ChildProcess.StartDll(Path.Combine(AppContext.BaseDirectory, "CoapNet.Samples.Server.dll"), [flag, value], _ => { });

        (await sample.WaitForExitAsync(Liveness)).Should().Be(2, sample.Output);
        sample.Output.Should().Contain(error).And.Contain("Run with --help for the usage.").And.NotContain("listening on");
    }

    // The answer to a slow CON: an empty ACK, then the separate response, which the peer acknowledges.
    private static async Task<CoapMessage> ReceiveResponseAsync(RawPeer peer)
    {
        while (true)
        {
            CoapMessage message = (await peer.ReceiveAsync()).Message;
            if (message.Code.IsEmpty)
            {
                continue;
            }

            if (message.Type == CoapMessageType.Confirmable)
            {
                await peer.SendAsync([0x60, 0x00, (byte)(message.MessageId >> 8), (byte)message.MessageId]);
            }

            return message;
        }
    }

    private static bool SigintIgnored()
    {
        foreach (string line in File.ReadLines("/proc/self/status"))
        {
            if (line.StartsWith("SigIgn:", StringComparison.Ordinal))
            {
                ulong mask = ulong.Parse(line.AsSpan("SigIgn:".Length).Trim(), NumberStyles.HexNumber, CultureInfo.InvariantCulture);
                return (mask & (1UL << (2 - 1))) != 0;
            }
        }

        return false;
    }
}
