using System.CommandLine;
using CoapNet.Channels;
using CoapNet.LinkFormat;
using CoapNet.Messages;
using Spectre.Console;

namespace CoapNet.Cli;

/// <summary>
/// <c>coap discover URI</c>: GET /.well-known/core (RFC 6690), shown as a table on a terminal (with a column for
/// "obs", the observable ones) and as one link a line, attributes and all, when redirected, so <c>grep</c> and
/// <c>cut</c> work on it.
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
        command.SetAction((parse, cancellationToken) =>
        {
            Uri uri = parse.GetValue(session.UriArgument)!;
            if (GroupRequest.IsGroup(uri))
            {
                // RFC 7252 section 8 with RFC 6690 section 4.1: each member that has a match answers, with its own links.
                CoapMessage group = CoapMessage.CreateRequest(CoapCode.Get, new UriBuilder(uri) { Path = "/.well-known/core", Query = string.Empty }.Uri, CoapMessageType.NonConfirmable);
                if (parse.GetValue(filter) is string groupQuery)
                {
                    group.Options.Add(CoapOptionNumber.UriQuery, groupQuery);
                }

                return GroupRequest.RunAsync(group, uri, parse.GetValue(session.Timeout), terminal, response => ShowGroupMember(response, terminal), cancellationToken);
            }

            return Unicast(parse, cancellationToken);
        });
        return command;

        Task<int> Unicast(ParseResult parse, CancellationToken cancellationToken) => session.RunAsync(parse, terminal, null, async call =>
        {
            Uri wellKnown = new UriBuilder(call.Uri) { Path = "/.well-known/core", Query = string.Empty }.Uri;
            CoapMessage request = CoapMessage.CreateRequest(CoapCode.Get, wellKnown, session.RequestType(parse));
            if (parse.GetValue(filter) is string query)
            {
                request.Options.Add(CoapOptionNumber.UriQuery, query);
            }

            CoapResponse response = await call.Client.SendAsync(request, call.Peer, call.Token).ConfigureAwait(false);
            if (!response.IsSuccess)
            {
                return await RequestCommand.ReportAsync(CoapCode.Get, response, null, Output.PayloadStyle.Raw, terminal, call.Token).ConfigureAwait(false);
            }

            if (!CoapLinkFormat.TryParse(response.GetPayloadString(), out IReadOnlyList<CoapLink>? links, out string? error))
            {
                terminal.WriteError($"the server's /.well-known/core is not link format: {error}");
                return ExitCodes.Error;
            }

            Show(links, terminal);
            return ExitCodes.Success;
        }, cancellationToken);
    }

    /// <summary>One member's links, one a line, or what it answered instead.</summary>
    private static void ShowGroupMember(CoapMessage response, Terminal terminal)
    {
        TextWriter output = terminal.Output.Profile.Out.Writer;
        if (response.Code.IsSuccess && CoapLinkFormat.TryParse(response.GetPayloadString(), out IReadOnlyList<CoapLink>? links, out _))
        {
            foreach (CoapLink link in links)
            {
                output.WriteLine("  " + link);
            }

            return;
        }

        output.WriteLine("  " + response.GetPayloadString());
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

        // "obs": the resource can be observed (RFC 7641 section 6), so `coap observe` is worth trying on it.
        Table table = new Table().AddColumns("resource", "ct", "rt", "if", "obs", "sz", "title");
        foreach (CoapLink link in links)
        {
            table.AddRow(
                Markup.Escape(link.Target),
                Markup.Escape(string.Join(" ", link.ContentFormats.Select(ContentFormats.Describe))),
                Markup.Escape(string.Join(" ", link.ResourceTypes)),
                Markup.Escape(string.Join(" ", link.InterfaceDescriptions)),
                link.IsObservable ? "obs" : string.Empty,
                link.Size is uint size ? size.ToString(System.Globalization.CultureInfo.InvariantCulture) : string.Empty,
                Markup.Escape(link.Title ?? string.Empty));
        }

        terminal.Output.Write(table);
    }
}
