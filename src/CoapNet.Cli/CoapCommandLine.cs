using System.CommandLine;
using System.CommandLine.Help;
using System.CommandLine.Invocation;
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
        RootCommand root = new("coap: a CoAP client and file server (RFC 7252 over UDP, RFC 8323 over TCP and WebSockets).")
        {
            RequestCommand.Create("get", CoapCode.Get, "Send GET and print the response's payload.", terminal),
            RequestCommand.Create("post", CoapCode.Post, "Send POST with a payload (-d, -f FILE, or -f - for standard input).", terminal),
            RequestCommand.Create("put", CoapCode.Put, "Send PUT with a payload (-d, -f FILE, or -f - for standard input).", terminal),
            RequestCommand.Create("delete", CoapCode.Delete, "Send DELETE.", terminal),
            RequestCommand.Create("fetch", CoapCode.Fetch, "Send FETCH with a payload that selects what to return (RFC 8132).", terminal),
            RequestCommand.Create("patch", CoapCode.Patch, "Send PATCH with a patch document (RFC 8132).", terminal),
            RequestCommand.Create("ipatch", CoapCode.IPatch, "Send iPATCH, the idempotent PATCH (RFC 8132).", terminal),
            ObserveCommand.Create(terminal),
            DiscoverCommand.Create(terminal),
            PingCommand.Create(terminal),
            ServeCommand.Create(terminal),
        };

        // Every command's help ends with its exit codes, which scripts rely on; the descriptions stay short for the command list.
        foreach (Option option in root.Options)
        {
            if (option is HelpOption help && help.Action is HelpAction action)
            {
                HelpWithExitCodes withExitCodes = new(action);
                help.Action = withExitCodes;

                // "coap" alone is someone finding out what it does: the help, not an error about a missing command.
                root.SetAction(withExitCodes.Invoke);
            }
        }

        return root;
    }

    /// <summary>Parses and runs a command line.</summary>
    /// <param name="args">The arguments.</param>
    /// <returns>The exit code (see <see cref="ExitCodes"/>).</returns>
    public static Task<int> RunAsync(string[] args)
    {
        Terminal terminal = new();
        return RunAsync(Build(terminal), terminal, args);
    }

    /// <summary>Parses and runs a command line of <paramref name="root"/>, whose commands write to <paramref name="terminal"/>.</summary>
    /// <param name="root">The command tree.</param>
    /// <param name="terminal">Where usage errors and failures go.</param>
    /// <param name="args">The arguments.</param>
    /// <returns>The exit code (see <see cref="ExitCodes"/>).</returns>
    internal static async Task<int> RunAsync(RootCommand root, Terminal terminal, string[] args)
    {
        ParseResult parse = root.Parse(args);

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

        try
        {
            // Ctrl+C cancels the command's token; observe then deregisters and waits for the server's answer, which may
            // take a retransmission: the process is given that long before it is ended anyway. Failures are ours to
            // report: System.CommandLine's own handler prints a stack trace.
            return await parse.InvokeAsync(new InvocationConfiguration
            {
                ProcessTerminationTimeout = ObserveCommand.TerminationGrace,
                EnableDefaultExceptionHandler = false,
            }).ConfigureAwait(false);
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            // What a command does not expect is still one line (and the trace with -v, for a bug report), never a crash.
            string subject = parse.CommandResult.Command.Arguments.Any(a => a.Name == "URI") && parse.GetValue<Uri>("URI") is { } uri
                ? uri.OriginalString
                : parse.CommandResult.Command.Name;
            bool verbose = parse.CommandResult.Command.Options.Any(o => o.Name == "--verbose") && parse.GetValue<bool>("--verbose");
            terminal.WriteError($"{subject}: {Terminal.AsClause(e.Message)} ({e.GetType().Name}{(verbose ? string.Empty : "; -v shows where")})");
            if (verbose)
            {
                terminal.WriteInfo(e.ToString());
            }

            return ExitCodes.Error;
        }
    }

    /// <summary>The standard help, then the exit codes of the command it is for.</summary>
    private sealed class HelpWithExitCodes(HelpAction help) : SynchronousCommandLineAction
    {
        // As the standard help: "coap get --help" shows help, not the error that URI is missing.
        public override bool ClearsParseErrors => help.ClearsParseErrors;

        public override int Invoke(ParseResult parseResult)
        {
            int result = help.Invoke(parseResult);
            TextWriter output = parseResult.InvocationConfiguration.Output;
            output.WriteLine(parseResult.CommandResult.Command.Name == "serve" ? ServeCommand.ExitCodesHelp : ExitCodes.Help);
            output.WriteLine();
            return result;
        }
    }
}
