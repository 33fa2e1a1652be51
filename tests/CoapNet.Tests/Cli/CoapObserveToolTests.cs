using System.Globalization;
using System.Runtime.CompilerServices;
using CoapNet.Messages;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Cli;

/// <summary>
/// <c>coap observe</c> run as a process against an in-process CoapServer on 127.0.0.1, over UDP and over TCP: each
/// notification printed as it arrives, --count and --duration, Ctrl+C (SIGINT) ending it cleanly, and in every case
/// the server holding no observation once the tool has exited (RFC 7641 section 3.6).
/// </summary>
public abstract class CoapObserveToolTests
{
    private readonly string _scheme;

    private protected CoapObserveToolTests(string scheme) => _scheme = scheme;

    [Fact]
    public async Task PrintsEachNotificationUntilTheCountThenDeregisters()
    {
        await using Ticking server = Ticking.Start();

        CoapToolResult result = await CoapTool.RunAsync("observe", Uri(server, "/tick"), "--count", "4", "-v");

        result.ExitCode.Should().Be(0, result.ToString());
        string[] lines = Lines(result.OutputText);
        lines.Should().HaveCount(4, "the registration's response and three notifications");
        Array.ConvertAll(lines, l => int.Parse(l, CultureInfo.InvariantCulture)).Should().BeInAscendingOrder();
        server.Server.Observations.Should().Be(0, "the tool waited for the answer to its GET with Observe=1 before it exited");
        result.ErrorLines.Should().Contain(l => l.StartsWith("-> ", StringComparison.Ordinal) && l.Contains("c:GET", StringComparison.Ordinal) && l.Contains("Observe:1,", StringComparison.Ordinal));
    }

    [Fact]
    public async Task StopsAfterTheDurationAndDeregisters()
    {
        await using Ticking server = Ticking.Start();

        CoapToolResult result = await CoapTool.RunAsync("observe", Uri(server, "/tick"), "-s", "0.5");

        result.ExitCode.Should().Be(0, result.ToString());
        Lines(result.OutputText).Should().NotBeEmpty();
        server.Server.Observations.Should().Be(0, "the tool deregistered before it exited: {0}", result);
    }

    [SkippableFact]
    public async Task CtrlCEndsTheObservationCleanlyAndTheServerHoldsNoneAfter()
    {
        Skip.If(OperatingSystem.IsWindows(), "POSIX signals");
        await using Ticking server = Ticking.Start();
        int printed = 0;
        using ChildProcess observe = ChildProcess.StartDll(CoapTool.Dll, ["observe", Uri(server, "/tick"), "-v"], line =>
        {
            if (int.TryParse(line, NumberStyles.None, CultureInfo.InvariantCulture, out _))
            {
                Interlocked.Increment(ref printed);
            }
        });
        await Wait.UntilAsync(() => Volatile.Read(ref printed) >= 3, "three notifications printed", CoapTool.Liveness);
        server.Server.Observations.Should().Be(1);

        await observe.SignalAsync("INT");

        (await observe.WaitForExitAsync(CoapTool.Liveness)).Should().Be(0, observe.Output);
        server.Server.Observations.Should().Be(0, "Ctrl+C deregisters, and the tool waits for the answer");
        observe.Output.Should().NotContain("error");
        observe.Output.Split('\n').Should().Contain(l => l.StartsWith("-> ", StringComparison.Ordinal) && l.Contains("c:GET", StringComparison.Ordinal) && l.Contains("Observe:1,", StringComparison.Ordinal), "RFC 7641 section 3.6: a GET with Observe=1");
        observe.Output.Should().Contain("deregistered: 2.05 Content");
    }

    [Fact]
    public async Task AResourceThatIsNotObservableIsPrintedOnceWithAWarning()
    {
        await using Ticking server = Ticking.Start();

        CoapToolResult result = await CoapTool.RunAsync("observe", Uri(server, "/plain"), "--count", "3");

        result.ExitCode.Should().Be(0, result.ToString());
        result.OutputText.Should().Be("just once\n");
        result.Error.Should().Contain("is not observable");
        server.Server.Observations.Should().Be(0);
    }

    [Fact]
    public async Task AnErrorAnswerEndsItWithTheErrorsExitCode()
    {
        await using Ticking server = Ticking.Start();

        CoapToolResult result = await CoapTool.RunAsync("observe", Uri(server, "/nowhere"));

        result.ExitCode.Should().Be(4, result.ToString());
        result.Error.Should().Contain("4.04 Not Found");
    }

    private static string[] Lines(string text) => text.Split('\n', StringSplitOptions.RemoveEmptyEntries);

    private string Uri(Ticking server, string path) => server.Loopback.Uri(path, _scheme).ToString();

    /// <summary>A server whose /tick counts up and notifies its observers every 50 ms, and a /plain that cannot be observed.</summary>
    private sealed class Ticking : IAsyncDisposable
    {
        private Ticking(LoopbackServer loopback) => Loopback = loopback;

        public LoopbackServer Loopback { get; }

        public CoapServer Server => Loopback.Server;

        public static Ticking Start()
        {
            StrongBox<int> ticks = new();
            LoopbackServer loopback = LoopbackServer.Start(
                s =>
                {
                    CoapRouteBuilder tick = s.MapGet("/tick", _ => CoapResponse.Content(Volatile.Read(ref ticks.Value).ToString(CultureInfo.InvariantCulture))).Observable();
                    s.MapGet("/plain", _ => CoapResponse.Content("just once"));
                    return TimeProvider.System.CreateTimer(
                        _ =>
                        {
                            Interlocked.Increment(ref ticks.Value);
                            tick.NotifyObservers();
                        },
                        null,
                        TimeSpan.FromMilliseconds(50),
                        TimeSpan.FromMilliseconds(50));
                },
                LoopbackServer.Options(tcp: true));
            return new Ticking(loopback);
        }

        public ValueTask DisposeAsync() => Loopback.DisposeAsync();
    }
}

/// <summary>coap observe over UDP.</summary>
public sealed class CoapObserveToolOverUdpTests() : CoapObserveToolTests("coap");

/// <summary>coap observe over TCP (RFC 8323 section 7).</summary>
public sealed class CoapObserveToolOverTcpTests() : CoapObserveToolTests("coap+tcp");
