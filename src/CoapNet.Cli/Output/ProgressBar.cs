using System.Globalization;
using CoapNet.Blockwise;

namespace CoapNet.Cli.Output;

/// <summary>
/// The progress of a block-wise transfer (RFC 7959) on a terminal's standard error: bytes so far, the total when the
/// server or the file told it (Size2, Size1, section 4), a bar and a percentage with it, and the rate. Drawn only for a
/// transfer of more than one block, redrawn at most every 100 ms and once at the end; nothing is drawn where standard
/// error is not a terminal (<see cref="Terminal.WriteProgress"/>).
/// </summary>
internal sealed class ProgressBar : IProgress<CoapTransferProgress>
{
    private const int BarWidth = 24;
    private static readonly TimeSpan RedrawInterval = TimeSpan.FromMilliseconds(100);

    private readonly Terminal _terminal;
    private readonly string _verb;
    private readonly TimeProvider _time;
    private readonly long _started;
    private readonly object _gate = new();
    private long _lastDrawn = long.MinValue;
    private bool _drawing;
    private CoapTransferProgress _last;

    /// <summary>Creates a bar that draws on <paramref name="terminal"/>.</summary>
    /// <param name="terminal">Where it is drawn (standard error).</param>
    /// <param name="verb">"received" or "sent".</param>
    /// <param name="time">The clock for the rate and the redraw interval.</param>
    public ProgressBar(Terminal terminal, string verb, TimeProvider time)
    {
        _terminal = terminal;
        _verb = verb;
        _time = time;
        _started = time.GetTimestamp();
    }

    /// <summary>A bar for a transfer, or null when none would be drawn (standard error is no terminal, or -v prints every block).</summary>
    /// <param name="terminal">Where it would be drawn.</param>
    /// <param name="verbose">True when -v dumps the messages, which a bar would interleave with.</param>
    /// <param name="verb">"received" or "sent".</param>
    /// <returns>The bar, or null.</returns>
    public static ProgressBar? For(Terminal terminal, bool verbose, string verb)
        => terminal.ErrorIsTerminal && !verbose ? new ProgressBar(terminal, verb, TimeProvider.System) : null;

    /// <inheritdoc/>
    public void Report(CoapTransferProgress value)
    {
        string? line;
        lock (_gate)
        {
            _last = value;

            // A body in one message reports itself complete at once: no bar for it, only for several blocks.
            _drawing |= value.TotalBytes != value.BytesTransferred;
            long now = _time.GetTimestamp();
            bool complete = value.TotalBytes == value.BytesTransferred;
            if (!_drawing || (!complete && _lastDrawn != long.MinValue && _time.GetElapsedTime(_lastDrawn, now) < RedrawInterval))
            {
                return;
            }

            _lastDrawn = now;
            line = Render(value, _time.GetElapsedTime(_started, now));
        }

        _terminal.WriteProgress(line);
    }

    /// <summary>Draws the final state and ends the line, when a bar was drawn.</summary>
    public void Finish()
    {
        string line;
        lock (_gate)
        {
            if (!_drawing)
            {
                return;
            }

            line = Render(_last, _time.GetElapsedTime(_started));
        }

        _terminal.WriteProgress(line);
        _terminal.EndProgress();
    }

    /// <summary>"[##########--------------]  42%  6.7 MiB / 16.0 MiB  1.2 MiB/s", or "6.7 MiB received  1.2 MiB/s" without a total.</summary>
    internal string Render(CoapTransferProgress value, TimeSpan elapsed)
    {
        string rate = elapsed > TimeSpan.Zero ? Size(value.BytesTransferred / elapsed.TotalSeconds) + "/s" : string.Empty;
        if (value.TotalBytes is not long total || total <= 0)
        {
            return $"{Size(value.BytesTransferred)} {_verb}  {rate}".TrimEnd();
        }

        double fraction = Math.Clamp((double)value.BytesTransferred / total, 0, 1);
        int filled = (int)Math.Round(fraction * BarWidth);
        string bar = "[" + new string('#', filled) + new string('-', BarWidth - filled) + "]";
        string percent = ((int)Math.Floor(fraction * 100)).ToString(CultureInfo.InvariantCulture).PadLeft(3) + "%";
        return $"{bar} {percent}  {Size(value.BytesTransferred)} / {Size(total)}  {rate}".TrimEnd();
    }

    /// <summary>Bytes in B, KiB or MiB with one decimal.</summary>
    internal static string Size(double bytes) => bytes switch
    {
        < 1024 => ((long)bytes).ToString(CultureInfo.InvariantCulture) + " B",
        < 1024 * 1024 => (bytes / 1024).ToString("0.0", CultureInfo.InvariantCulture) + " KiB",
        _ => (bytes / (1024 * 1024)).ToString("0.0", CultureInfo.InvariantCulture) + " MiB",
    };
}
