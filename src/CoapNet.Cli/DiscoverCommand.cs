using System.CommandLine;
using CoapNet.Channels;
using CoapNet.LinkFormat;
using CoapNet.Messages;
using Spectre.Console;

namespace CoapNet.Cli;

/// <summary>
/// <c>coap discover URI</c>: GET /.well-known/core (RFC 6690), shown as a table on a terminal and as
/// one link a line when redirected, so <c>grep</c> and <c>cut</c> work on it.
/// </summary>
internal static class DiscoverCommand
{
    /// <summary>Creates the command.</summary>
    /// <param name="terminal">Where output goes.</param>
    /// <returns>The command.</returns>
    public static Command Create(Terminal terminal)
    {
        ClientSession session = new();
        Option<string?> filter = new("--query", "-q") { Description = "A filter such as 'rt=temperature' or 'href=/sensors*' (RFC 6690 section 4.1).", HelpName = "NAME=VALUE" };
        Command command = new("discover", $"List the server's resources (GET /.well-known/core, RFC 6690). The URI's path is ignored.");
        session.AddTo(command);
        command.Add(filter);
        command.SetAction((parse, cancellationToken) => session.RunAsync(parse, terminal, async (client, uri, ct) =>
        {
            Uri wellKnown = new UriBuilder(uri) { Path = "/.well-known/core", Query = string.Empty }.Uri;
            CoapMessage request = CoapMessage.CreateRequest(CoapCode.Get, wellKnown, parse.GetValue(session.NonConfirmable) ? CoapMessageType.NonConfirmable : CoapMessageType.Confirmable);
            if (parse.GetValue(filter) is string query)
            {
                request.Options.Add(CoapOptionNumber.UriQuery, query);
            }

            CoapPeer peer = await ClientSession.ResolveAsync(uri, ct).ConfigureAwait(false);
            CoapResponse response = await client.SendAsync(request, peer, ct).ConfigureAwait(false);
            if (!response.IsSuccess)
            {
                return await RequestCommand.ReportAsync(response, null, terminal, ct).ConfigureAwait(false);
            }

            if (!CoapLinkFormat.TryParse(response.GetPayloadString(), out IReadOnlyList<CoapLink>? links, out string? error))
            {
                terminal.WriteError($"the server's /.well-known/core is not link format: {error}");
                return ExitCodes.Error;
            }

            Show(links, terminal);
            return ExitCodes.Success;
        }, cancellationToken));
        return command;
    }

    private static void Show(IReadOnlyList<CoapLink> links, Terminal terminal)
    {
        if (!terminal.OutputIsTerminal)
        {
            foreach (CoapLink link in links)
            {
                terminal.Output.Profile.Out.Writer.WriteLine(link.ToString());
            }

            terminal.Output.Profile.Out.Writer.Flush();
            return;
        }

        Table table = new Table().AddColumns("resource", "ct", "rt", "if", "title");
        foreach (CoapLink link in links)
        {
            table.AddRow(
                Markup.Escape(link.Target),
                Markup.Escape(string.Join(" ", link.ContentFormats.Select(ContentFormats.Describe))),
                Markup.Escape(string.Join(" ", link.ResourceTypes)),
                Markup.Escape(string.Join(" ", link.InterfaceDescriptions)),
                Markup.Escape(link.Title ?? string.Empty));
        }

        terminal.Output.Write(table);
    }
}
