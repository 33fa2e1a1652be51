using System.CommandLine;
using System.CommandLine.Parsing;
using CoapNet.Channels;
using CoapNet.Client;
using CoapNet.Messages;

namespace CoapNet.Cli;

/// <summary>
/// <c>coap get|post|put|delete|fetch|patch|ipatch URI</c>: one request, its response's payload on
/// standard output (or in the -o file), the exit code from the response class.
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
        bool carriesPayload = method != CoapCode.Get && method != CoapCode.Delete;
        Option<string?> data = new("--data", "-d") { Description = "The payload, as UTF-8 text.", HelpName = "TEXT" };
        Option<string?> file = new("--file", "-f") { Description = "Read the payload from a file; '-' reads standard input. Without -d or -f, piped standard input is the payload.", HelpName = "FILE" };
        Option<ushort?> contentFormat = FormatOption("--content-format", "-t", "The payload's Content-Format");
        Option<ushort?> accept = FormatOption("--accept", "-A", "The Content-Format to ask for (Accept option)");
        Option<string[]> query = new("--query", "-q") { Description = "A Uri-Query argument such as 'rt=temp'; repeat for several. Added after any query in the URI.", HelpName = "NAME=VALUE" };
        Option<FileInfo?> output = new("--output", "-o") { Description = "Write the payload of a 2.xx response to this file, byte for byte, instead of standard output.", HelpName = "FILE" };

        Command command = new(name, description);
        session.AddTo(command);
        if (carriesPayload)
        {
            command.Add(data);
            command.Add(file);
            command.Add(contentFormat);
        }

        command.Add(accept);
        command.Add(query);
        command.Add(output);
        if (carriesPayload)
        {
            command.Validators.Add(result =>
            {
                if (result.GetResult(data) is not null && result.GetResult(file) is not null)
                {
                    result.AddError("Give the payload with -d or with -f, not both.");
                }
            });
        }

        command.SetAction((parse, cancellationToken) =>
        {
            ReadOnlyMemory<byte> payload = default;
            if (carriesPayload && !TryReadPayload(parse.GetValue(data), parse.GetValue(file), terminal, out payload))
            {
                return Task.FromResult(ExitCodes.Usage);
            }

            return session.RunAsync(parse, terminal, async (client, uri, ct) =>
            {
                CoapMessage request = CoapMessage.CreateRequest(method, uri, parse.GetValue(session.NonConfirmable) ? CoapMessageType.NonConfirmable : CoapMessageType.Confirmable);
                foreach (string argument in parse.GetValue(query) ?? [])
                {
                    request.Options.Add(CoapOptionNumber.UriQuery, argument);
                }

                request.Accept = parse.GetValue(accept);
                if (carriesPayload)
                {
                    request.ContentFormat = parse.GetValue(contentFormat);
                    request.Payload = payload;
                }

                CoapPeer peer = await ClientSession.ResolveAsync(uri, ct).ConfigureAwait(false);
                CoapResponse response = await client.SendAsync(request, peer, ct).ConfigureAwait(false);
                return await ReportAsync(response, parse.GetValue(output), terminal, ct).ConfigureAwait(false);
            }, cancellationToken);
        });
        return command;
    }

    /// <summary>An option that takes a Content-Format by name or number; an unknown name is a usage error.</summary>
    internal static Option<ushort?> FormatOption(string name, string alias, string description) => new(name, alias)
    {
        Description = $"{description}: a name ({ContentFormats.Names}), a media type, or a number.",
        HelpName = "FORMAT",
        CustomParser = result =>
        {
            string text = result.Tokens.Count > 0 ? result.Tokens[0].Value : string.Empty;
            if (ContentFormats.TryParse(text, out ushort format))
            {
                return format;
            }

            result.AddError($"'{text}' is not a Content-Format: use a name ({ContentFormats.Names}), a media type or a number from 0 to 65535.");
            return null;
        },
    };

    /// <summary>Prints the outcome: the status line when it helps, the payload where it was asked for; the exit code from the response class.</summary>
    internal static async Task<int> ReportAsync(CoapResponse response, FileInfo? output, Terminal terminal, CancellationToken cancellationToken)
    {
        // On a terminal the status says what came back; in a script the exit code does, and an error is always said.
        if (!response.IsSuccess || terminal.OutputIsTerminal || output is not null)
        {
            terminal.WriteStatus(response);
        }

        if (!response.IsSuccess)
        {
            // RFC 7252 section 5.5.2: an error's payload is a diagnostic for a human, not the resource.
            if (!response.Payload.IsEmpty)
            {
                terminal.WriteInfo(response.GetPayloadString());
            }
        }
        else if (output is not null)
        {
            await File.WriteAllBytesAsync(output.FullName, response.Payload, cancellationToken).ConfigureAwait(false);
        }
        else
        {
            terminal.WritePayload(response.Payload, response.ContentFormat);
        }

        return ExitCodes.For(response.Code);
    }

    private static bool TryReadPayload(string? text, string? file, Terminal terminal, out ReadOnlyMemory<byte> payload)
    {
        payload = default;
        try
        {
            if (text is not null)
            {
                payload = System.Text.Encoding.UTF8.GetBytes(text);
            }
            else if (file == "-" || (file is null && Console.IsInputRedirected))
            {
                using Stream input = Console.OpenStandardInput();
                using MemoryStream buffer = new();
                input.CopyTo(buffer);
                payload = buffer.ToArray();
            }
            else if (file is not null)
            {
                payload = File.ReadAllBytes(file);
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
