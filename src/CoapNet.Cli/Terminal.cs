using System.Text;
using System.Text.Unicode;
using CoapNet.Messages;
using Spectre.Console;

namespace CoapNet.Cli;

/// <summary>
/// The tool's two output streams. Standard output carries only what a script wants, the payload (as
/// raw bytes when redirected, so <c>coap get URI &gt; file</c> is byte-exact); standard error carries
/// status lines, the wire dump and errors. Each stream gets colours only when it is a terminal, never
/// ANSI escapes in a file or a pipe; NO_COLOR turns them off on a terminal too.
/// </summary>
internal sealed class Terminal
{
    private readonly object _gate = new();

    /// <summary>Creates the terminal over the process's own streams.</summary>
    public Terminal()
        : this(Console.Out, Console.Error, Console.IsOutputRedirected, Console.IsErrorRedirected, Console.OpenStandardOutput)
    {
    }

    private Terminal(TextWriter output, TextWriter error, bool outputRedirected, bool errorRedirected, Func<Stream> rawOutput)
    {
        OutputIsTerminal = !outputRedirected;
        Output = Create(output, outputRedirected);
        Error = Create(error, errorRedirected);

        // Standard error carries log lines (a wire dump line can be long): the terminal may wrap them, Spectre must not.
        Error.Profile.Width = int.MaxValue / 2;
        RawOutput = rawOutput;
    }

    /// <summary>True when standard output is a terminal, not a file or a pipe.</summary>
    public bool OutputIsTerminal { get; }

    /// <summary>Standard output, for text and tables.</summary>
    public IAnsiConsole Output { get; }

    /// <summary>Standard error.</summary>
    public IAnsiConsole Error { get; }

    private Func<Stream> RawOutput { get; }

    /// <summary>Writes one line of the wire dump to standard error; safe from any thread.</summary>
    /// <param name="direction">"-&gt;" or "&lt;-", with the peer when there is one.</param>
    /// <param name="line">The message, formatted by <see cref="WireFormat"/>.</param>
    public void WriteWire(string direction, string line)
    {
        string colour = direction.StartsWith("->", StringComparison.Ordinal) ? "blue" : "green";
        lock (_gate)
        {
            Error.MarkupLine($"[{colour}]{Markup.Escape(direction)}[/] {Markup.Escape(line)}");
        }
    }

    /// <summary>Writes a warning to standard error.</summary>
    /// <param name="text">The warning.</param>
    public void WriteWarning(string text)
    {
        lock (_gate)
        {
            Error.MarkupLine($"[yellow]warning:[/] {Markup.Escape(text)}");
        }
    }

    /// <summary>Writes an error to standard error.</summary>
    /// <param name="text">The error.</param>
    public void WriteError(string text)
    {
        lock (_gate)
        {
            Error.MarkupLine($"[red]error:[/] {Markup.Escape(text)}");
        }
    }

    /// <summary>Writes an informational line to standard error.</summary>
    /// <param name="text">The line.</param>
    public void WriteInfo(string text)
    {
        lock (_gate)
        {
            Error.MarkupLine(Markup.Escape(text));
        }
    }

    /// <summary>Writes a response's status line ("2.05 Content (application/json)") to standard error, green for 2.xx, red otherwise.</summary>
    /// <param name="response">The response.</param>
    public void WriteStatus(CoapResponse response)
    {
        string colour = response.IsSuccess ? "green" : "red";
        string format = response.ContentFormat is ushort ct ? $" ({ContentFormats.Describe(ct)})" : string.Empty;
        lock (_gate)
        {
            Error.MarkupLine($"[{colour}]{Markup.Escape(response.Code.ToString())}[/]{Markup.Escape(format)}");
        }
    }

    /// <summary>
    /// Writes a payload to standard output: the bytes as they are when it is redirected; on a terminal,
    /// text as text and anything else as a hex dump, so binary never garbles the screen.
    /// </summary>
    /// <param name="payload">The payload.</param>
    /// <param name="contentFormat">Its Content-Format, or null.</param>
    public void WritePayload(ReadOnlyMemory<byte> payload, ushort? contentFormat)
    {
        if (payload.IsEmpty)
        {
            return;
        }

        if (!OutputIsTerminal)
        {
            using Stream raw = RawOutput();
            raw.Write(payload.Span);
            raw.Flush();
            return;
        }

        bool text = (ContentFormats.IsText(contentFormat) || contentFormat is null) && Utf8.IsValid(payload.Span);
        string shown = text ? Encoding.UTF8.GetString(payload.Span) : HexDump(payload.Span);
        lock (_gate)
        {
            Output.Profile.Out.Writer.Write(shown);
            if (!shown.EndsWith('\n'))
            {
                Output.Profile.Out.Writer.WriteLine();
            }

            Output.Profile.Out.Writer.Flush();
        }
    }

    private static IAnsiConsole Create(TextWriter writer, bool redirected)
    {
        bool colours = !redirected && string.IsNullOrEmpty(Environment.GetEnvironmentVariable("NO_COLOR"));
        return AnsiConsole.Create(new AnsiConsoleSettings
        {
            Out = new AnsiConsoleOutput(writer),
            Ansi = colours ? AnsiSupport.Detect : AnsiSupport.No,
            ColorSystem = colours ? ColorSystemSupport.Detect : ColorSystemSupport.NoColors,
            Interactive = redirected ? InteractionSupport.No : InteractionSupport.Detect,
        });
    }

    // 16 bytes a line: offset, hex, and the printable ASCII beside it.
    private static string HexDump(ReadOnlySpan<byte> bytes)
    {
        StringBuilder dump = new();
        for (int offset = 0; offset < bytes.Length; offset += 16)
        {
            ReadOnlySpan<byte> row = bytes.Slice(offset, Math.Min(16, bytes.Length - offset));
            dump.Append(offset.ToString("x8", System.Globalization.CultureInfo.InvariantCulture)).Append("  ");
            for (int i = 0; i < 16; i++)
            {
                dump.Append(i < row.Length ? row[i].ToString("x2", System.Globalization.CultureInfo.InvariantCulture) + " " : "   ");
            }

            dump.Append(' ');
            foreach (byte b in row)
            {
                dump.Append(b is >= 0x20 and < 0x7f ? (char)b : '.');
            }

            dump.Append('\n');
        }

        return dump.ToString();
    }
}
