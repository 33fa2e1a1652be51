using System.Text.RegularExpressions;
using CoapNet.Messages;
using CoapNet.Server;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Cli;

/// <summary>
/// What the tool shows in a terminal and holds back from a pipe, checked in a pseudo-terminal (tmux) without a
/// screenshot: the progress bar of a block-wise transfer, CBOR in diagnostic notation, discovery's table with "obs".
/// </summary>
public sealed class CoapToolTerminalTests : IAsyncLifetime
{
    private static readonly byte[] Big = Body(1_000_000);
    private readonly string _folder = Directory.CreateTempSubdirectory("coap-terminal-").FullName;
    private LoopbackServer? _server;

    private LoopbackServer Server => _server!;

    public Task InitializeAsync()
    {
        _server = LoopbackServer.Start(s =>
        {
            s.MapGet("/big", _ => CoapResponse.Content(new MemoryStream(Big), CoapContentFormat.OctetStream));
            s.MapGet("/cbor", _ => CoapResponse.Content(new byte[] { 0xa2, 0x61, 0x74, 0x18, 0x2a, 0x61, 0x75, 0x42, 0x0a, 0x0b }, CoapContentFormat.Cbor));
            s.MapGet("/tick", _ => CoapResponse.Content("1")).Observable().WithTitle("ticks");
        });
        return Task.CompletedTask;
    }

    public async Task DisposeAsync()
    {
        await Server.DisposeAsync();
        Directory.Delete(_folder, recursive: true);
    }

    [SkippableFact]
    public async Task ABlockwiseDownloadDrawsAProgressBarInATerminal()
    {
        string file = Path.Combine(_folder, "big.bin");

        using Tmux tmux = await Tmux.RunAsync(Tmux.Coap("get", Server.Uri("/big").ToString(), "-o", file));

        string screen = await tmux.CaptureAsync();
        tmux.ExitCode.Should().Be(0, screen);
        screen.Should().MatchRegex(@"\[#{24}\] 100%  976\.6 KiB / 976\.6 KiB  [0-9.]+ (B|KiB|MiB)/s", "the bar's last state: bytes, the total from Size2, the rate");
        screen.Should().Contain("2.05 Content (application/octet-stream)");
        (await File.ReadAllBytesAsync(file)).Should().Equal(Big);
    }

    [SkippableFact]
    public async Task NoProgressBarGoesToAPipeOrAFile()
    {
        string file = Path.Combine(_folder, "big.bin");
        string errors = Path.Combine(_folder, "stderr.txt");

        // In the same terminal, standard error redirected to a file: the bar is for a person, never for a log.
        using Tmux tmux = await Tmux.RunAsync(Tmux.Coap("get", Server.Uri("/big").ToString(), "-o", file) + " 2>" + errors + " | cat");

        tmux.ExitCode.Should().Be(0, await tmux.CaptureAsync());
        string logged = await File.ReadAllTextAsync(errors);
        logged.Should().Be("2.05 Content (application/octet-stream)\n");
        (await tmux.CaptureAsync()).Should().NotContain("%");
    }

    [SkippableFact]
    public async Task CborIsShownInDiagnosticNotationInATerminalAndAsBytesWithRaw()
    {
        using Tmux pretty = await Tmux.RunAsync(Tmux.Coap("get", Server.Uri("/cbor").ToString()));
        using Tmux raw = await Tmux.RunAsync(Tmux.Coap("get", Server.Uri("/cbor").ToString(), "--raw") + " | od -An -tx1");

        (await pretty.CaptureAsync()).Should().Contain("{\"t\": 42, \"u\": h'0a0b'}");
        Regex.Replace(await raw.CaptureAsync(), @"\s+", " ").Should().Contain("a2 61 74 18 2a 61 75 42 0a 0b");
    }

    [SkippableFact]
    public async Task DiscoveryInATerminalIsATableThatMarksObservableResources()
    {
        using Tmux tmux = await Tmux.RunAsync(Tmux.Coap("discover", Server.Uri("/").ToString()));

        string screen = await tmux.CaptureAsync();
        tmux.ExitCode.Should().Be(0, screen);
        string header = screen.Split('\n').Should().ContainSingle(l => l.Contains("resource", StringComparison.Ordinal) && l.Contains("obs", StringComparison.Ordinal)).Subject;
        string tick = screen.Split('\n').Should().ContainSingle(l => l.Contains("/tick", StringComparison.Ordinal)).Subject;
        tick.IndexOf("obs", StringComparison.Ordinal).Should().Be(header.IndexOf("obs", StringComparison.Ordinal), "the row says obs in the obs column");
    }

    private static byte[] Body(int size)
    {
        byte[] body = new byte[size];
        new Random(7641).NextBytes(body);
        return body;
    }
}
