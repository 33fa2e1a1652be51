using CoapNet.Cli.Output;
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
    private bool _progressShown;

    /// <summary>Creates the terminal over the process's own streams.</summary>
    public Terminal()
        : this(Console.Out, Console.Error, Console.IsOutputRedirected, Console.IsErrorRedirected, Console.OpenStandardOutput)
    {
    }

    /// <summary>Creates the terminal over given writers (tests): a stream is a terminal when it is not redirected.</summary>
    /// <param name="output">Standard output as text.</param>
    /// <param name="error">Standard error.</param>
    /// <param name="outputRedirected">True when standard output is a file or a pipe.</param>
    /// <param name="errorRedirected">True when standard error is a file or a pipe.</param>
    /// <param name="rawOutput">Opens standard output as bytes.</param>
    internal Terminal(TextWriter output, TextWriter error, bool outputRedirected, bool errorRedirected, Func<Stream> rawOutput)
    {
        OutputIsTerminal = !outputRedirected;
        ErrorIsTerminal = !errorRedirected;
        Output = Create(output, outputRedirected);
        Error = Create(error, errorRedirected);

        // Standard error carries log lines (a wire dump line can be long): the terminal may wrap them, Spectre must not.
        Error.Profile.Width = int.MaxValue / 2;
        RawOutput = rawOutput;
    }

    /// <summary>True when standard output is a terminal, not a file or a pipe.</summary>
    public bool OutputIsTerminal { get; }

    /// <summary>True when standard error is a terminal: only then is a progress bar drawn on it.</summary>
    public bool ErrorIsTerminal { get; }

    /// <summary>Standard output, for text and tables.</summary>
    public IAnsiConsole Output { get; }

    /// <summary>Standard error.</summary>
    public IAnsiConsole Error { get; }

    private Func<Stream> RawOutput { get; }

    /// <summary>Standard output as a stream of bytes, for a payload written as it arrives; the caller disposes it (the descriptor stays open).</summary>
    /// <returns>The stream.</returns>
    public Stream OpenRawOutput() => RawOutput();

    /// <summary>Writes one line of the wire dump to standard error; safe from any thread.</summary>
    /// <param name="direction">"-&gt;" or "&lt;-", with the peer when there is one.</param>
    /// <param name="line">The message, formatted by <see cref="WireFormat"/>.</param>
    public void WriteWire(string direction, string line)
    {
        string colour = direction.StartsWith("->", StringComparison.Ordinal) ? "blue" : "green";
        lock (_gate)
        {
            EndProgressLocked();
            Error.MarkupLine($"[{colour}]{Markup.Escape(direction)}[/] {Markup.Escape(line)}");
        }
    }

    /// <summary>Writes a warning to standard error.</summary>
    /// <param name="text">The warning.</param>
    public void WriteWarning(string text)
    {
        lock (_gate)
        {
            EndProgressLocked();
            Error.MarkupLine($"[yellow]warning:[/] {Markup.Escape(text)}");
        }
    }

    /// <summary>Writes an error to standard error.</summary>
    /// <param name="text">The error.</param>
    public void WriteError(string text)
    {
        lock (_gate)
        {
            EndProgressLocked();
            Error.MarkupLine($"[red]error:[/] {Markup.Escape(text)}");
        }
    }

    /// <summary>
    /// A library's sentence made a clause to follow "error: URI: " on one line: its line breaks made spaces, its
    /// capital dropped (unless it starts an acronym, "DTLS") and its final period too.
    /// </summary>
    /// <param name="sentence">An exception's message.</param>
    /// <returns>The clause.</returns>
    public static string AsClause(string sentence)
    {
        string clause = sentence.ReplaceLineEndings(" ").TrimEnd().TrimEnd('.');
        return clause.Length > 1 && char.IsUpper(clause[0]) && !char.IsUpper(clause[1]) ? char.ToLowerInvariant(clause[0]) + clause[1..] : clause;
    }

    /// <summary>Writes an informational line to standard error.</summary>
    /// <param name="text">The line.</param>
    public void WriteInfo(string text)
    {
        lock (_gate)
        {
            EndProgressLocked();
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
            EndProgressLocked();
            Error.MarkupLine($"[{colour}]{Markup.Escape(response.Code.ToString())}[/]{Markup.Escape(format)}");
        }
    }

    /// <summary>
    /// Draws the progress line on standard error in place (a carriage return, the line, erase to its end), when standard
    /// error is a terminal; nothing otherwise, so a log file or a pipe never gets one.
    /// </summary>
    /// <param name="line">The line, without a newline.</param>
    public void WriteProgress(string line)
    {
        if (!ErrorIsTerminal)
        {
            return;
        }

        lock (_gate)
        {
            TextWriter writer = Error.Profile.Out.Writer;
            writer.Write("\r" + line + "\u001b[K");
            writer.Flush();
            _progressShown = true;
        }
    }

    /// <summary>Ends the progress line, so what follows starts on a line of its own.</summary>
    public void EndProgress()
    {
        lock (_gate)
        {
            EndProgressLocked();
        }
    }

    /// <summary>
    /// Writes a payload to standard output: the bytes as they are (<see cref="PayloadStyle.Raw"/>), or shown for a
    /// reader (<see cref="PayloadStyle.Pretty"/>: CBOR in diagnostic notation, JSON indented, text as text, other
    /// binary as a hex dump, see <see cref="PayloadFormatter"/>), so binary never garbles the screen.
    /// </summary>
    /// <param name="payload">The payload.</param>
    /// <param name="contentFormat">Its Content-Format, or null.</param>
    /// <param name="style">Raw or pretty; <see cref="StyleFor"/> picks it from the flags and the terminal.</param>
    /// <param name="separated">True to end a raw text payload with a newline, so each of several (notifications) is a line of its own.</param>
    public void WritePayload(ReadOnlyMemory<byte> payload, ushort? contentFormat, PayloadStyle style, bool separated = false)
    {
        if (payload.IsEmpty)
        {
            return;
        }

        if (style == PayloadStyle.Raw)
        {
            lock (_gate)
            {
                using Stream raw = RawOutput();
                raw.Write(payload.Span);
                if (separated && PayloadFormatter.IsText(payload.Span, contentFormat) && payload.Span[^1] != (byte)'\n')
                {
                    raw.WriteByte((byte)'\n');
                }

                raw.Flush();
            }

            return;
        }

        string shown = PayloadFormatter.Format(payload, contentFormat, out string? warning);
        if (warning is not null)
        {
            WriteWarning(warning);
        }

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

    /// <summary>Raw when asked (--raw) or when standard output is a file or a pipe (byte-exact), pretty when asked (--pretty) or on a terminal.</summary>
    /// <param name="raw">--raw was given.</param>
    /// <param name="pretty">--pretty was given.</param>
    /// <returns>The style.</returns>
    public PayloadStyle StyleFor(bool raw, bool pretty) => raw ? PayloadStyle.Raw : pretty || OutputIsTerminal ? PayloadStyle.Pretty : PayloadStyle.Raw;

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

    private void EndProgressLocked()
    {
        if (_progressShown)
        {
            _progressShown = false;
            Error.Profile.Out.Writer.WriteLine();
            Error.Profile.Out.Writer.Flush();
        }
    }
}
