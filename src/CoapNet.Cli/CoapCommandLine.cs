using System.CommandLine;
using CoapNet.Messages;

namespace CoapNet.Cli;

/// <summary>The <c>coap</c> command tree and how a parse becomes an exit code.</summary>
internal static class CoapCommandLine
{
    /// <summary>Builds the root command with every subcommand.</summary>
    /// <param name="terminal">Where output goes.</param>
    /// <returns>The root command.</returns>
    public static RootCommand Build(Terminal terminal)
    {
        RootCommand root = new($"coap: a CoAP client and file server (RFC 7252 over UDP, RFC 8323 over TCP).\n\n{ExitCodes.Help}")
        {
            RequestCommand.Create("get", CoapCode.Get, "Send GET and print the response's payload.", terminal),
            RequestCommand.Create("post", CoapCode.Post, "Send POST with a payload (-d, -f or standard input).", terminal),
            RequestCommand.Create("put", CoapCode.Put, "Send PUT with a payload (-d, -f or standard input).", terminal),
            RequestCommand.Create("delete", CoapCode.Delete, "Send DELETE.", terminal),
            RequestCommand.Create("fetch", CoapCode.Fetch, "Send FETCH with a payload that selects what to return (RFC 8132).", terminal),
            RequestCommand.Create("patch", CoapCode.Patch, "Send PATCH with a patch document (RFC 8132).", terminal),
            RequestCommand.Create("ipatch", CoapCode.IPatch, "Send iPATCH, the idempotent PATCH (RFC 8132).", terminal),
            DiscoverCommand.Create(terminal),
            PingCommand.Create(terminal),
            ServeCommand.Create(terminal),
        };
        return root;
    }

    /// <summary>Parses and runs a command line.</summary>
    /// <param name="args">The arguments.</param>
    /// <returns>The exit code (see <see cref="ExitCodes"/>).</returns>
    public static async Task<int> RunAsync(string[] args)
    {
        Terminal terminal = new();
        ParseResult parse = Build(terminal).Parse(args);

        // System.CommandLine answers a parse error with 1; scripts are promised 2 for bad usage.
        if (parse.Errors.Count > 0)
        {
            foreach (System.CommandLine.Parsing.ParseError error in parse.Errors)
            {
                terminal.WriteError(error.Message);
            }

            terminal.WriteInfo("Run 'coap --help' (or 'coap COMMAND --help') for usage.");
            return ExitCodes.Usage;
        }

        return await parse.InvokeAsync().ConfigureAwait(false);
    }
}
