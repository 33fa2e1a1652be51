using System.CommandLine;
using CoapNet.Cli.Output;
using CoapNet.Cli.Requests;
using CoapNet.Messages;

namespace CoapNet.Cli;

/// <summary>
/// <c>coap get|post|put|delete|fetch|patch|ipatch URI</c>: one request, its response's payload on standard output (or
/// in the -o file), the exit code from the response class. A body to send is streamed from its file (or standard input
/// with <c>-f -</c>) block by block, and a body received is written block by block as it arrives (RFC 7959), so neither
/// is held whole; a terminal shows a progress bar for either when it takes several blocks.
/// </summary>
internal static class RequestCommand
{
    /// <summary>Creates the command for one method.</summary>
    /// <param name="name">The command name, such as "get".</param>
    /// <param name="method">The request method.</param>
    /// <param name="description">What the method does, for the help text.</param>
    /// <param name="terminal">Where output goes.</param>
    /// <returns>The command.</returns>
    public static Command Create(string name, CoapCode method, string description, Terminal terminal)
    {
        ClientSession session = new();
        RequestOptions shape = new();
        bool carriesPayload = method != CoapCode.Get && method != CoapCode.Delete;
        Option<string?> data = new("--data", "-d", "-e") { Description = "The payload, as UTF-8 text (-e as in libcoap).", HelpName = "TEXT" };
        Option<string?> file = new("--file", "-f") { Description = "Read the payload from a file, sent in blocks as the server takes them; '-' reads standard input (which is read only then).", HelpName = "FILE" };
        Option<ushort?> contentFormat = RequestOptions.FormatOption("--content-format", "-t", "The payload's Content-Format");
        Option<FileInfo?> output = new("--output", "-o") { Description = "Write the payload of a 2.xx response to this file, byte for byte, instead of standard output.", HelpName = "FILE" };

        Command command = new(name, description);
        session.AddTo(command);
        if (carriesPayload)
        {
            command.Add(data);
            command.Add(file);
            command.Add(contentFormat);
            RequestOptions.NotBoth(command, data, file, "Give the payload with -d or with -f, not both.");
        }

        shape.AddTo(command);
        command.Add(output);
        command.SetAction((parse, cancellationToken) =>
        {
            Stream? body = null;
            if (carriesPayload && !TryOpenPayload(parse.GetValue(data), parse.GetValue(file), terminal, out body))
            {
                return Task.FromResult(ExitCodes.Usage);
            }

            Uri uri = parse.GetValue(session.UriArgument)!;
            if (!carriesPayload && GroupRequest.IsGroup(uri))
            {
                // RFC 7252 section 8: a GET or DELETE to a group, every member's answer listed.
                CoapMessage group = shape.Build(parse, method, uri, CoapMessageType.NonConfirmable);
                return GroupRequest.RunAsync(group, uri, parse.GetValue(session.Timeout), terminal, response => terminal.Output.Profile.Out.Writer.WriteLine("  " + response.GetPayloadString()), cancellationToken);
            }

            return session.RunAsync(parse, terminal, options => shape.Configure(parse, options), async call =>
            {
                await using Stream? disposing = body;
                CoapMessage request = shape.Build(parse, method, call.Uri, session.RequestType(parse));
                if (carriesPayload)
                {
                    request.ContentFormat = parse.GetValue(contentFormat);
                }

                PayloadStyle style = shape.Style(parse, terminal);
                bool verbose = session.IsVerbose(parse);
                if (body is not null)
                {
                    ProgressBar? sending = ProgressBar.For(terminal, verbose, "sent");
                    CoapResponse answer = await call.Client.UploadAsync(request, call.Peer, body, sending, call.Token).ConfigureAwait(false);
                    sending?.Finish();
                    return await ReportAsync(method, answer, parse.GetValue(output), style, terminal, call.Token).ConfigureAwait(false);
                }

                ProgressBar? receiving = ProgressBar.For(terminal, verbose, "received");
                FileInfo? target = parse.GetValue(output);
                (CoapResponse response, bool written) = await DownloadAsync(call, request, target, style, terminal, receiving).ConfigureAwait(false);
                receiving?.Finish();
                return written ? Report(method, response, terminal, toFile: target is not null) : await ReportAsync(method, response, null, style, terminal, call.Token).ConfigureAwait(false);
            }, cancellationToken);
        });
        return command;
    }

    /// <summary>
    /// Prints the outcome: the status line when it helps, the payload where it was asked for; the exit code from the
    /// response class. The payload of a 2.xx response goes to <paramref name="output"/> when given.
    /// </summary>
    internal static async Task<int> ReportAsync(CoapCode method, CoapResponse response, FileInfo? output, PayloadStyle style, Terminal terminal, CancellationToken cancellationToken)
    {
        if (response.IsSuccess && output is not null)
        {
            await File.WriteAllBytesAsync(output.FullName, response.Payload, cancellationToken).ConfigureAwait(false);
            return Report(method, response, terminal, toFile: true);
        }

        int exit = Report(method, response, terminal, toFile: false);
        if (response.IsSuccess)
        {
            terminal.WritePayload(response.Payload, response.ContentFormat, style);
        }

        return exit;
    }

    /// <summary>
    /// The status line on standard error when it tells something the exit code does not: on a terminal, when the
    /// payload went to a file, for every answer to a method that changes something (PUT, POST, DELETE, PATCH, iPATCH:
    /// its code says what happened), and for an error, whose diagnostic payload follows it (RFC 7252 section 5.5.2).
    /// Where the server put what a POST created (Location-Path and Location-Query, section 5.10.7) follows the status.
    /// </summary>
    private static int Report(CoapCode method, CoapResponse response, Terminal terminal, bool toFile)
    {
        bool changes = method != CoapCode.Get && method != CoapCode.Fetch;
        if (!response.IsSuccess || changes || terminal.OutputIsTerminal || toFile)
        {
            terminal.WriteStatus(response);
        }

        if (response.Options.Contains(CoapOptionNumber.LocationPath) || response.Options.Contains(CoapOptionNumber.LocationQuery))
        {
            string query = response.Message.LocationQuery;
            terminal.WriteInfo("Location: " + response.Message.LocationPath + (query.Length > 0 ? "?" + query : string.Empty));
        }

        if (!response.IsSuccess && !response.Payload.IsEmpty)
        {
            // RFC 7252 section 5.5.2: an error's payload is a diagnostic for a human, not the resource.
            terminal.WriteInfo(response.GetPayloadString());
        }

        return ExitCodes.For(response.Code);
    }

    /// <summary>
    /// Sends a request whose answer's body is written as it arrives: into a file beside -o (renamed over it when the
    /// transfer succeeds, deleted when it does not, so a failed download never leaves half a file), or to standard
    /// output as raw bytes. A payload shown for reading needs all of it first, and is returned in the response.
    /// </summary>
    /// <returns>The response, and whether its payload went where it belongs already.</returns>
    private static async Task<(CoapResponse Response, bool Written)> DownloadAsync(ClientCall call, CoapMessage request, FileInfo? output, PayloadStyle style, Terminal terminal, ProgressBar? progress)
    {
        if (output is not null)
        {
            string partial = Path.Combine(output.DirectoryName ?? ".", "." + output.Name + "." + Guid.NewGuid().ToString("N")[..8] + ".part");
            bool kept = false;
            try
            {
                CoapResponse response;
                await using (FileStream file = new(partial, FileMode.CreateNew, FileAccess.Write, FileShare.None, 64 * 1024, FileOptions.Asynchronous))
                {
                    response = await call.Client.DownloadAsync(request, call.Peer, file, progress, call.Token).ConfigureAwait(false);
                }

                if (response.IsSuccess)
                {
                    File.Move(partial, output.FullName, overwrite: true);
                    kept = true;
                }

                return (response, response.IsSuccess);
            }
            finally
            {
                if (!kept)
                {
                    File.Delete(partial);
                }
            }
        }

        if (style == PayloadStyle.Raw)
        {
            // Blocks are written as they arrive, gathered into 64 KiB writes rather than a system call per block.
            await using BufferedStream raw = new(terminal.OpenRawOutput(), 64 * 1024);
            CoapResponse response = await call.Client.DownloadAsync(request, call.Peer, raw, progress, call.Token).ConfigureAwait(false);
            return (response, response.IsSuccess);
        }

        using MemoryStream whole = new();
        CoapResponse shown = await call.Client.DownloadAsync(request, call.Peer, whole, progress, call.Token).ConfigureAwait(false);
        if (shown.IsSuccess)
        {
            shown.Message.Payload = whole.ToArray();
        }

        return (shown, false);
    }

    /// <summary>The body to send: -d's text, -f's file, or standard input for -f -; none when neither is given (standard input is then never read).</summary>
    private static bool TryOpenPayload(string? text, string? file, Terminal terminal, out Stream? body)
    {
        body = null;
        try
        {
            if (text is not null)
            {
                body = new MemoryStream(System.Text.Encoding.UTF8.GetBytes(text), writable: false);
            }
            else if (file == "-")
            {
                body = Console.OpenStandardInput();
            }
            else if (file is not null)
            {
                body = new FileStream(file, FileMode.Open, FileAccess.Read, FileShare.Read, 64 * 1024);
            }

            return true;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            terminal.WriteError($"cannot read the payload: {e.Message}");
            return false;
        }
    }
}
