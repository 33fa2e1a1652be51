using CoapNet.Blockwise;
using CoapNet.Cli;
using CoapNet.Cli.Output;

namespace CoapNet.Tests.Cli;

/// <summary>The progress bar in virtual time: what it draws, when it redraws, and when it draws nothing.</summary>
public sealed class ProgressBarTests
{
    private readonly ManualTimeProvider _time = new();
    private readonly StringWriter _error = new();

    [Fact]
    public void DrawsBytesTotalPercentageAndRateInPlaceAndEndsTheLine()
    {
        ProgressBar bar = new(Terminal(errorIsTerminal: true), "received", _time);

        _time.Advance(TimeSpan.FromSeconds(1));
        bar.Report(new CoapTransferProgress(4 * 1024 * 1024, 16 * 1024 * 1024));
        _time.Advance(TimeSpan.FromSeconds(3));
        bar.Report(new CoapTransferProgress(16 * 1024 * 1024, 16 * 1024 * 1024));
        bar.Finish();

        string[] draws = _error.ToString().Split('\r', StringSplitOptions.RemoveEmptyEntries);
        draws.Should().Equal(
            "[######------------------]  25%  4.0 MiB / 16.0 MiB  4.0 MiB/s\u001b[K",
            "[########################] 100%  16.0 MiB / 16.0 MiB  4.0 MiB/s\u001b[K",
            "[########################] 100%  16.0 MiB / 16.0 MiB  4.0 MiB/s\u001b[K" + Environment.NewLine);
    }

    [Fact]
    public void RedrawsAtMostEveryHundredMillisecondsButAlwaysTheEnd()
    {
        ProgressBar bar = new(Terminal(errorIsTerminal: true), "received", _time);

        for (int block = 1; block <= 50; block++)
        {
            _time.Advance(TimeSpan.FromMilliseconds(10));
            bar.Report(new CoapTransferProgress(block * 1024, 50 * 1024));
        }

        // The first block draws; then every 100 ms of the 490 ms that follow (blocks 11, 21, 31, 41), and the last.
        _error.ToString().Split('\r', StringSplitOptions.RemoveEmptyEntries).Should().HaveCount(6);
    }

    [Fact]
    public void WithoutATotalShowsBytesAndRate()
    {
        ProgressBar bar = new(Terminal(errorIsTerminal: true), "sent", _time);

        _time.Advance(TimeSpan.FromSeconds(2));
        bar.Report(new CoapTransferProgress(3072, null));

        _error.ToString().Should().Be("\r3.0 KiB sent  1.5 KiB/s\u001b[K");
    }

    [Fact]
    public void DrawsNothingForABodyInOneMessage()
    {
        ProgressBar bar = new(Terminal(errorIsTerminal: true), "received", _time);

        bar.Report(new CoapTransferProgress(300, 300));
        bar.Finish();

        _error.ToString().Should().BeEmpty();
    }

    [Fact]
    public void DrawsNothingWhereStandardErrorIsNoTerminal()
    {
        ProgressBar bar = new(Terminal(errorIsTerminal: false), "received", _time);

        bar.Report(new CoapTransferProgress(1024, 4096));
        bar.Report(new CoapTransferProgress(4096, 4096));
        bar.Finish();

        _error.ToString().Should().BeEmpty();
        CoapNet.Cli.Output.ProgressBar.For(Terminal(errorIsTerminal: false), verbose: false, "received").Should().BeNull();
        CoapNet.Cli.Output.ProgressBar.For(Terminal(errorIsTerminal: true), verbose: true, "received").Should().BeNull("-v prints every block instead");
    }

    private Terminal Terminal(bool errorIsTerminal) => new(TextWriter.Null, _error, outputRedirected: true, errorRedirected: !errorIsTerminal, () => Stream.Null);
}
