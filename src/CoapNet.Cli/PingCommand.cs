using System.CommandLine;
using System.Globalization;

namespace CoapNet.Cli;

/// <summary>
/// <c>coap ping URI</c>: a CoAP ping, an empty CON answered by RST over UDP (RFC 7252 section 4.3) or
/// Ping and Pong over TCP and WebSockets (RFC 8323 section 5.4); prints the round-trip time.
/// </summary>
internal static class PingCommand
{
    /// <summary>Creates the command.</summary>
    /// <param name="terminal">Where output goes.</param>
    /// <returns>The command.</returns>
    public static Command Create(Terminal terminal)
    {
        ClientSession session = new();
        Command command = new("ping", $"Check that a CoAP server is alive: an empty CON answered by RST over UDP, Ping and Pong over TCP and WebSockets. The URI's path is ignored.");
        session.AddTo(command, nonConfirmable: false);
        command.SetAction((parse, cancellationToken) => session.RunAsync(parse, terminal, null, async call =>
        {
            TimeSpan rtt = await call.Client.PingAsync(call.Uri, call.Token).ConfigureAwait(false);
            terminal.Output.Profile.Out.Writer.WriteLine($"pong from {call.Uri.GetLeftPart(UriPartial.Authority)} in {rtt.TotalMilliseconds.ToString("0.###", CultureInfo.InvariantCulture)} ms");
            terminal.Output.Profile.Out.Writer.Flush();
            return ExitCodes.Success;
        }, cancellationToken));
        return command;
    }
}
