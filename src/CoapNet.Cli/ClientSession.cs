using System.CommandLine;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using CoapNet.Channels;
using CoapNet.Client;
using CoapNet.Messaging;
using Microsoft.Extensions.Logging;

namespace CoapNet.Cli;

/// <summary>
/// What every client command shares: the URI argument, -v, --non and --timeout, a client built from
/// them, and one mapping from what went wrong to an exit code.
/// </summary>
internal sealed class ClientSession
{
    /// <summary>The URI argument: an absolute coap:// or coap+tcp:// URI, checked while parsing so a bad one is a usage error.</summary>
    public Argument<Uri> UriArgument { get; } = new("URI")
    {
        Description = "The resource, coap://host[:port]/path[?query] or coap+tcp://host[:port]/path[?query].",
        CustomParser = result =>
        {
            string text = result.Tokens.Count > 0 ? result.Tokens[0].Value : string.Empty;
            if (!Uri.TryCreate(text, UriKind.Absolute, out Uri? uri) || uri.Scheme is not (CoapPeer.UdpScheme or CoapPeer.TcpScheme or CoapPeer.TlsScheme) || uri.Host.Length == 0)
            {
                result.AddError($"'{text}' is not a coap://, coap+tcp:// or coaps+tcp:// URI.");
                return null;
            }

            return uri;
        },
    };

    /// <summary>--cert, --key, --ca: the certificates of coaps+tcp.</summary>
    public TlsCredentials Tls { get; } = new();

    /// <summary>-v: print every message in and out.</summary>
    public Option<bool> Verbose { get; } = new("--verbose", "-v")
    {
        Description = "Print every message sent and received to standard error, libcoap-style (v:1 t:CON c:GET i:7d34 {token} [ options ]).",
    };

    /// <summary>--non: send the request non-confirmable.</summary>
    public Option<bool> NonConfirmable { get; } = new("--non")
    {
        Description = "Send the request as NON instead of CON (UDP only; RFC 7252 section 2.2).",
    };

    /// <summary>--timeout: the longest the whole command may wait, in seconds.</summary>
    public Option<double?> Timeout { get; } = new("--timeout")
    {
        Description = "Give up after this many seconds (decimals allowed) and exit with 3. Default: the protocol's own limits (93 s over UDP).",
        HelpName = "SECONDS",
        Validators =
        {
            result =>
            {
                if (result.GetValueOrDefault<double?>() is double seconds && (!(seconds > 0) || seconds > int.MaxValue / 1000))
                {
                    result.AddError("--timeout must be a positive number of seconds.");
                }
            },
        },
    };

    /// <summary>Adds the URI argument and the shared options to a command.</summary>
    /// <param name="command">The command.</param>
    /// <param name="nonConfirmable">Whether --non applies (not to ping).</param>
    public void AddTo(Command command, bool nonConfirmable = true)
    {
        command.Add(UriArgument);
        command.Add(Verbose);
        if (nonConfirmable)
        {
            command.Add(NonConfirmable);
        }

        command.Add(Timeout);
        Tls.AddTo(command);
    }

    /// <summary>
    /// Runs <paramref name="operation"/> with a client configured from the parsed options, under the
    /// timeout, and turns each failure into its exit code and a one-line explanation.
    /// </summary>
    /// <param name="parse">The parse result.</param>
    /// <param name="terminal">Where messages go.</param>
    /// <param name="operation">What to do with the client and the URI; returns the exit code.</param>
    /// <param name="cancellationToken">Canceled on Ctrl+C.</param>
    /// <returns>The exit code.</returns>
    public async Task<int> RunAsync(ParseResult parse, Terminal terminal, Func<CoapClient, Uri, CancellationToken, Task<int>> operation, CancellationToken cancellationToken)
    {
        Uri uri = parse.GetRequiredValue(UriArgument);
        double? seconds = parse.GetValue(Timeout);
        using ILoggerFactory? logging = parse.GetValue(Verbose) ? WireLoggerProvider.CreateFactory(terminal, showPeer: false) : null;
        using CancellationTokenSource deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        if (seconds is double s)
        {
            deadline.CancelAfter(TimeSpan.FromSeconds(s));
        }

        try
        {
            await using CoapClient client = new(new CoapClientOptions
            {
                Endpoint = new CoapEndpointOptions { LoggerFactory = logging },
                UseNonConfirmable = parse.GetValue(NonConfirmable),
                Tls = Tls.Read(parse),
            });
            return await operation(client, uri, deadline.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (deadline.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
        {
            terminal.WriteError($"no answer from {uri.GetLeftPart(UriPartial.Authority)} within {seconds!.Value.ToString(CultureInfo.InvariantCulture)} s.");
            return ExitCodes.NoAnswer;
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            // Ctrl+C: the user gave up, which is neither an answer nor its absence.
            terminal.WriteError("canceled.");
            return ExitCodes.Error;
        }
        catch (CoapTimeoutException e)
        {
            terminal.WriteError(e.Message);
            return ExitCodes.NoAnswer;
        }
        catch (CoapConnectionException e)
        {
            // Over TCP, a server that cannot be reached is the same thing as one that does not answer.
            terminal.WriteError(e.Message);
            return ExitCodes.NoAnswer;
        }
        catch (CoapResetException e)
        {
            terminal.WriteError(e.Message);
            return ExitCodes.Error;
        }
        catch (SocketException e)
        {
            terminal.WriteError($"{uri.Host}: {e.Message}");
            return ExitCodes.Error;
        }
        catch (Exception e) when (e is CoapException or ArgumentException or IOException or FormatException or UnauthorizedAccessException)
        {
            terminal.WriteError(e.Message);
            return ExitCodes.Error;
        }
    }

    /// <summary>The peer a URI names: its scheme and the first address its host resolves to.</summary>
    /// <param name="uri">A coap:// or coap+tcp:// URI.</param>
    /// <param name="cancellationToken">Cancels the name lookup.</param>
    /// <returns>The peer.</returns>
    /// <exception cref="SocketException">The host name does not resolve.</exception>
    public static async Task<CoapPeer> ResolveAsync(Uri uri, CancellationToken cancellationToken)
    {
        IPAddress address = IPAddress.TryParse(uri.DnsSafeHost, out IPAddress? literal)
            ? literal
            : (await Dns.GetHostAddressesAsync(uri.DnsSafeHost, cancellationToken).ConfigureAwait(false)) is [IPAddress first, ..] ? first
            : throw new SocketException((int)SocketError.HostNotFound);
        int port = uri.IsDefaultPort || uri.Port < 0 ? Messages.CoapMessage.GetDefaultPort(uri.Scheme) : uri.Port;
        // coaps+tcp: the host goes with the peer, for TLS's SNI and the check of the server's certificate.
        return uri.Scheme == CoapPeer.TlsScheme ? CoapPeer.Tls(new IPEndPoint(address, port), uri.DnsSafeHost) : new CoapPeer(uri.Scheme, new IPEndPoint(address, port));
    }
}
