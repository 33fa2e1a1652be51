using System.CommandLine;
using System.Net;
using System.Net.Sockets;
using CoapNet.Channels;
using CoapNet.Messaging;
using CoapNet.Server;
using Microsoft.Extensions.Logging;

namespace CoapNet.Cli;

/// <summary>
/// <c>coap serve DIR</c>: serves a folder's files read-only until Ctrl+C or SIGTERM, then drains the
/// requests in flight and stops.
/// </summary>
internal static class ServeCommand
{
    /// <summary>The help text's description of serve's exit codes.</summary>
    public const string ExitCodesHelp = "Exit codes: 0 when stopped, 1 when it cannot listen, 2 for bad usage.";

    /// <summary>Creates the command.</summary>
    /// <param name="terminal">Where output goes.</param>
    /// <returns>The command.</returns>
    public static Command Create(Terminal terminal)
    {
        Argument<DirectoryInfo> folder = new("DIR") { Description = "The folder to serve." };
        folder.AcceptExistingOnly();
        Option<int> port = PortOption("--port", "-p", "The UDP port (0: any free port).", 5683);
        Option<int?> tcpPort = new("--tcp-port")
        {
            Description = "Also serve CoAP over TCP (RFC 8323) on this port (0: any free port). Default: UDP only.",
            HelpName = "PORT",
            Validators = { result => CheckPort(result, result.GetValueOrDefault<int?>()) },
        };
        Option<IPAddress> address = new("--address", "-a")
        {
            Description = "The address to listen on. Default: every interface ([::], dual-stack).",
            HelpName = "IP",
            DefaultValueFactory = _ => IPAddress.IPv6Any,
            CustomParser = result =>
            {
                string text = result.Tokens.Count > 0 ? result.Tokens[0].Value : string.Empty;
                if (IPAddress.TryParse(text, out IPAddress? ip))
                {
                    return ip;
                }

                result.AddError($"'{text}' is not an IP address.");
                return null;
            },
        };
        Option<bool> verbose = new("--verbose", "-v") { Description = "Print every message sent and received to standard error, libcoap-style, with the peer." };

        Command command = new("serve", "Serve a folder's files read-only, any size, block by block (RFC 7959): GET /path answers the file, GET / or a folder lists it, /.well-known/core lists the files with a Content-Format by extension. Paths out of the folder are refused (4.03). Ctrl+C stops it.")
        {
            folder, port, tcpPort, address, verbose,
        };
        command.SetAction(async (parse, cancellationToken) =>
        {
            DirectoryInfo root = parse.GetRequiredValue(folder);
            IPAddress ip = parse.GetValue(address) ?? IPAddress.IPv6Any;
            int? tcp = parse.GetValue(tcpPort);
            using ILoggerFactory? logging = parse.GetValue(verbose) ? WireLoggerProvider.CreateFactory(terminal, showPeer: true) : null;
            CoapServerOptions options = new()
            {
                Endpoint = new CoapEndpointOptions
                {
                    LoggerFactory = logging,

                    // A file being downloaded stays open between its blocks; this bounds the open files well inside the
                    // usual limit of 1024 descriptors (past it a block opens the file again instead).
                    Blockwise = new Blockwise.BlockwiseOptions { MaxStoredBodies = 256 },
                },
            };
            options.Listen(CoapPeer.UdpScheme, new IPEndPoint(ip, parse.GetValue(port)));
            if (tcp is int p)
            {
                options.Listen(CoapPeer.TcpScheme, new IPEndPoint(ip, p));
            }

            await using CoapServer server = new(options);
            int files = new FolderResources(root.FullName).Map(server);
            try
            {
                await server.StartAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (SocketException e)
            {
                terminal.WriteError($"cannot listen: {e.Message}");
                return ExitCodes.Error;
            }

            foreach (Uri uri in server.LocalUris)
            {
                terminal.WriteInfo($"Serving {root.FullName} ({files} files) on {uri.GetLeftPart(UriPartial.Authority)}");
            }

            try
            {
                await Task.Delay(Timeout.Infinite, cancellationToken).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                terminal.WriteInfo("Stopping...");
            }

            // Answer what is in flight, but do not let one slow peer hold the shell.
            using CancellationTokenSource drain = new(TimeSpan.FromSeconds(5));
            await server.StopAsync(drain.Token).ConfigureAwait(false);
            terminal.WriteInfo("Stopped.");
            return ExitCodes.Success;
        });
        return command;
    }

    private static Option<int> PortOption(string name, string alias, string description, int defaultPort) => new(name, alias)
    {
        Description = description,
        HelpName = "PORT",
        DefaultValueFactory = _ => defaultPort,
        Validators = { result => CheckPort(result, result.GetValueOrDefault<int>()) },
    };

    private static void CheckPort(System.CommandLine.Parsing.OptionResult result, int? port)
    {
        if (port is < 0 or > IPEndPoint.MaxPort)
        {
            result.AddError($"{port} is not a port (0 to {IPEndPoint.MaxPort}).");
        }
    }
}
