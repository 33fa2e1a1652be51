using System.CommandLine;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Security.Authentication;
using CoapNet.Channels;
using CoapNet.Cli.Requests;
using CoapNet.Cli.Transports;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Oscore;
using CoapNet.Transports;
using CoapNet.WebSockets;
using Microsoft.Extensions.Logging;

namespace CoapNet.Cli;

/// <summary>
/// What every client command shares: the URI argument, -v, -N/--non, --timeout/-B, the pre-shared key of coaps
/// (-u, -k) and the OSCORE context (--oscore), a client built from them for the one server the command talks to, and one mapping from what went wrong
/// to an exit code.
/// </summary>
internal sealed class ClientSession
{
    /// <summary>The schemes the tool speaks: the library's transports and CoAP over WebSockets, each found by its scheme.</summary>
    private static readonly CoapTransportRegistry Schemes = AddWebSockets(CoapTransportRegistry.CreateDefault());

    /// <summary>
    /// The URI argument: an absolute URI of a scheme the library's transports speak, read by the library's endpoint parser
    /// (<see cref="CoapAddress"/>) while parsing, so a bad one is a usage error that says what is wrong (a port out of range,
    /// an unknown scheme).
    /// </summary>
    public Argument<Uri> UriArgument { get; } = new("URI")
    {
        Description = "The resource, coap://host[:port]/path[?query], coap+tcp://..., coaps+tcp://..., coap+ws://..., coaps+ws://... or coaps://... (with -u and -k).",
        CustomParser = result =>
        {
            string text = result.Tokens.Count > 0 ? result.Tokens[0].Value : string.Empty;
            int schemeEnd = text.IndexOf("://", StringComparison.Ordinal);
            if (schemeEnd <= 0 || Schemes.Find(text[..schemeEnd]) is null)
            {
                result.AddError($"'{text}' is not a {string.Join(", ", Schemes.Schemes.Select(scheme => scheme + "://"))} URI.");
                return null;
            }

            if (!CoapAddress.TryParse(text, Schemes, out CoapAddress? address, out string? error))
            {
                result.AddError(error);
                return null;
            }

            if (address.Port == 0)
            {
                result.AddError($"'{text}' has the port 0, which no server listens on.");
                return null;
            }

            if (!Uri.TryCreate(text, UriKind.Absolute, out Uri? uri))
            {
                result.AddError($"'{text}' is not a URI.");
                return null;
            }

            return uri;
        },
    };

    /// <summary>--cert, --key, --ca: the certificates of coaps+tcp and coaps+ws.</summary>
    public TlsCredentials Tls { get; } = new();

    /// <summary>--oscore: the OSCORE context of the requests.</summary>
    public OscoreCredentials Oscore { get; } = new();

    /// <summary>-v: print every message in and out, and every retransmission.</summary>
    public Option<bool> Verbose { get; } = new("--verbose", "-v")
    {
        Description = "Print every message sent and received, and every retransmission, to standard error, libcoap-style (v:1 t:CON c:GET i:7d34 {token} [ options ]).",
    };

    /// <summary>-N, --non: send the request non-confirmable.</summary>
    public Option<bool> NonConfirmable { get; } = new("--non", "-N")
    {
        Description = "Send the request as NON instead of CON (UDP only; RFC 7252 section 2.2).",
    };

    /// <summary>--timeout, -B: the longest the command may wait for its answer, in seconds.</summary>
    public Option<double?> Timeout { get; } = Seconds("--timeout", "-B", "Give up after this many seconds (decimals allowed) and exit with 3. Default: the protocol's own limits (93 s over UDP).");

    /// <summary>-u: the PSK identity for coaps://.</summary>
    public Option<string?> PskIdentity { get; } = new("--psk-identity", "-u") { Description = "coaps:// only: the pre-shared key identity (RFC 4279) to present, as text.", HelpName = "IDENTITY" };

    /// <summary>-k: the pre-shared key for coaps://.</summary>
    public Option<byte[]?> PskKey { get; } = new("--psk-key", "-k")
    {
        Description = "coaps:// only: the pre-shared key of -u, as text or 0x-prefixed hex.",
        HelpName = "KEY",
        CustomParser = result =>
        {
            string text = result.Tokens.Count > 0 ? result.Tokens[0].Value : string.Empty;
            if (text.Length > 0 && OptionValues.TryParseTextOrHex(text, out byte[] key) && key.Length > 0)
            {
                return key;
            }

            result.AddError("-k takes a non-empty key, as text or as 0x-prefixed hex.");
            return null;
        },
    };

    /// <summary>An option that takes a positive number of seconds, decimals allowed; anything else is a usage error.</summary>
    /// <param name="name">The long name.</param>
    /// <param name="alias">The letter.</param>
    /// <param name="description">What it is for.</param>
    /// <returns>The option.</returns>
    public static Option<double?> Seconds(string name, string alias, string description) => new(name, alias)
    {
        Description = description,
        HelpName = "SECONDS",
        Validators =
        {
            result =>
            {
                if (result.GetValueOrDefault<double?>() is double seconds && (!(seconds > 0) || seconds > int.MaxValue / 1000))
                {
                    result.AddError($"{name} must be a positive number of seconds.");
                }
            },
        },
    };

    /// <summary>Adds the URI argument and the shared options to a command.</summary>
    /// <param name="command">The command.</param>
    /// <param name="nonConfirmable">Whether -N applies (not to ping).</param>
    public void AddTo(Command command, bool nonConfirmable = true)
    {
        command.Add(UriArgument);
        command.Add(Verbose);
        if (nonConfirmable)
        {
            command.Add(NonConfirmable);
        }

        command.Add(Timeout);
        command.Add(PskIdentity);
        command.Add(PskKey);
        command.Validators.Add(result =>
        {
            // The URI's own errors are its parser's to report; this checks only that coaps and -u/-k go together.
            if (result.GetResult(UriArgument) is not { Tokens: [var token, ..] } || !Uri.TryCreate(token.Value, UriKind.Absolute, out Uri? uri))
            {
                return;
            }

            bool secure = uri.Scheme == CoapPeer.DtlsScheme;
            bool identity = result.GetResult(PskIdentity) is not null, key = result.GetResult(PskKey) is not null;
            if (secure && !(identity && key))
            {
                result.AddError("A coaps:// URI needs a pre-shared key: give -u IDENTITY and -k KEY.");
            }
            else if (!secure && (identity || key))
            {
                result.AddError("-u and -k are for coaps:// URIs.");
            }
        });
        Tls.AddTo(command);
        Oscore.AddTo(command);
    }

    /// <summary>True when -v was given.</summary>
    /// <param name="parse">The parse result.</param>
    /// <returns>Whether messages are dumped.</returns>
    public bool IsVerbose(ParseResult parse) => parse.GetValue(Verbose);

    /// <summary>CON, or NON with -N.</summary>
    /// <param name="parse">The parse result.</param>
    /// <returns>The request type.</returns>
    public CoapMessageType RequestType(ParseResult parse) => parse.GetValue(NonConfirmable) ? CoapMessageType.NonConfirmable : CoapMessageType.Confirmable;

    /// <summary>
    /// Runs <paramref name="operation"/> with a client for the URI's server, configured from the parsed options, under the
    /// timeout, and turns each failure into its exit code and a one-line explanation. The URI's scheme finds its transport
    /// through the library (<see cref="CoapClientOptions.Transports"/>, with coap+ws and coaps+ws added from NetCoap.WebSockets);
    /// each datagram scheme's socket is connected to the server, so an ICMP port unreachable ends the command at once
    /// (<see cref="ConnectedUdpTransportFactory"/>).
    /// </summary>
    /// <param name="parse">The parse result.</param>
    /// <param name="terminal">Where messages go.</param>
    /// <param name="configure">Adjusts the client's options (the block size), or null.</param>
    /// <param name="operation">What to do with the client and the server; returns the exit code.</param>
    /// <param name="cancellationToken">Canceled on Ctrl+C.</param>
    /// <returns>The exit code.</returns>
    public async Task<int> RunAsync(ParseResult parse, Terminal terminal, Action<CoapClientOptions>? configure, Func<ClientCall, Task<int>> operation, CancellationToken cancellationToken)
    {
        Uri uri = parse.GetRequiredValue(UriArgument);
        double? seconds = parse.GetValue(Timeout);
        using ILoggerFactory? logging = parse.GetValue(Verbose) ? WireLoggerProvider.CreateFactory(terminal, showPeer: false) : null;

        // Ctrl+C and an ICMP port unreachable end everything; -B ends the requests, and bounds a handshake by its own
        // timeout instead, so a handshake that runs out of time says so as itself.
        using CancellationTokenSource reachable = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        using CancellationTokenSource deadline = CancellationTokenSource.CreateLinkedTokenSource(reachable.Token);
        if (seconds is double s)
        {
            deadline.CancelAfter(TimeSpan.FromSeconds(s));
        }

        int unreachable = 0;
        try
        {
            void OnPortUnreachable(IPEndPoint remote)
            {
                if (Interlocked.Exchange(ref unreachable, 1) == 0)
                {
                    terminal.WriteError($"{remote}: port unreachable (ICMP): nothing listens on that port.");
                    reachable.Cancel();
                }
            }

            CoapClientOptions options = new()
            {
                Endpoint = new CoapEndpointOptions { LoggerFactory = logging },
                UseNonConfirmable = parse.GetValue(NonConfirmable),
                Tls = Tls.Read(parse),
            };
            configure?.Invoke(options);
            AddWebSockets(options.Transports);

            // The library finds each scheme's transport; the tool's datagram sockets are connected to the one server.
            CoapAddress address = CoapAddress.Parse(uri.GetLeftPart(UriPartial.Authority), options.Transports);
            IPEndPoint server = new(await ResolveHostAsync(address, deadline.Token).ConfigureAwait(false), address.Port);
            ConnectedUdpTransportFactory.ConnectAll(options.Transports, server, OnPortUnreachable);
            if (Oscore.Read(parse, server) is { } oscore)
            {
                options.Endpoint.UseOscore(oscore);
            }

            if (parse.GetValue(PskIdentity) is { } identity)
            {
                DtlsClientOptions secure = new() { PskIdentity = identity, PskKey = parse.GetValue(PskKey) };
                if (seconds is double bound && TimeSpan.FromSeconds(bound) < secure.HandshakeTimeout)
                {
                    secure.HandshakeTimeout = TimeSpan.FromSeconds(bound);
                }

                options.UseDtls(secure);
            }

            await using CoapClient client = new(options);

            // The peer as the library reaches it, in its session when its transport makes them: the handshake comes
            // first, so its failure is told as what it is (the server's alert, a likely wrong key, no answer) and not as
            // a request that got no answer; the requests then join the session it made.
            CoapPeer peer = await client.ResolvePeerAsync(uri, reachable.Token).ConfigureAwait(false);
            return await operation(new ClientCall(client, peer, uri, deadline)).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (Volatile.Read(ref unreachable) != 0)
        {
            // Said when it happened (OnPortUnreachable); the server is not there, which is no answer.
            return ExitCodes.NoAnswer;
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
        catch (CoapConnectionException e) when (e.Cause?.GetBaseException() is AuthenticationException)
        {
            // A TLS handshake that failed (coaps+tcp, coaps+ws: a certificate the trust does not cover): the server is
            // there, so not "no answer"; the message ends with what TLS said.
            terminal.WriteError(e.Message);
            return ExitCodes.Error;
        }
        catch (CoapConnectionException e)
        {
            // Over TCP and WebSockets, a server that cannot be reached is the same thing as one that does not answer.
            terminal.WriteError(e.Message);
            return ExitCodes.NoAnswer;
        }
        catch (CoapResetException e)
        {
            terminal.WriteError(e.Message);
            return ExitCodes.Error;
        }
        catch (AuthenticationException e)
        {
            // The server refused the handshake, or took part and never finished it: it is there, so not "no answer".
            terminal.WriteError($"{uri.OriginalString}: {Terminal.AsClause(e.Message)}");
            return ExitCodes.Error;
        }
        catch (TimeoutException e)
        {
            // A DTLS handshake that got no answer (the requests' own timeouts are CoapTimeoutException).
            terminal.WriteError($"{uri.OriginalString}: {Terminal.AsClause(e.Message)}");
            return ExitCodes.NoAnswer;
        }
        catch (SocketException e)
        {
            terminal.WriteError($"{uri.Host}: {e.Message}");
            return ExitCodes.Error;
        }
        catch (Exception e) when (e is CoapException or ArgumentException or IOException or FormatException or UnauthorizedAccessException or InvalidDataException)
        {
            terminal.WriteError(e.Message);
            return ExitCodes.Error;
        }
    }

    /// <summary>
    /// Registers coap+ws and coaps+ws (RFC 8323 section 4) by their schemes, as any application adds them: a WebSocket to
    /// /.well-known/coap on the URI's authority, coaps+ws trusting and presenting certificates as coaps+tcp does (--ca,
    /// --cert, --key through <see cref="CoapClientOptions.Tls"/>).
    /// </summary>
    /// <param name="transports">The registry.</param>
    /// <returns><paramref name="transports"/>.</returns>
    private static CoapTransportRegistry AddWebSockets(CoapTransportRegistry transports)
    {
        transports.Add(new CoapWebSocketTransportFactory(secure: false));
        transports.Add(new CoapWebSocketTransportFactory(secure: true));
        return transports;
    }

    /// <summary>The address of the URI's host: itself when it is one, else the one its name resolves to (<see cref="Pick"/>).</summary>
    /// <param name="address">The URI's address.</param>
    /// <param name="cancellationToken">Cancels the name lookup.</param>
    /// <returns>The address.</returns>
    /// <exception cref="SocketException">The host name does not resolve.</exception>
    private static async Task<IPAddress> ResolveHostAsync(CoapAddress address, CancellationToken cancellationToken)
        => address.IPAddress ?? Pick(await Dns.GetHostAddressesAsync(address.Host, cancellationToken).ConfigureAwait(false));

    /// <summary>
    /// The first IPv4 address of a name, else its first: the one the client picks too when it resolves the name itself
    /// over a socket of that family (ping), so both name the same server.
    /// </summary>
    private static IPAddress Pick(IPAddress[] addresses)
    {
        foreach (IPAddress address in addresses)
        {
            if (address.AddressFamily == AddressFamily.InterNetwork)
            {
                return address;
            }
        }

        return addresses is [IPAddress first, ..] ? first : throw new SocketException((int)SocketError.HostNotFound);
    }
}

/// <summary>One command's client, the server it talks to, the URI it was given, and its deadline.</summary>
/// <param name="Client">The client.</param>
/// <param name="Peer">The server.</param>
/// <param name="Uri">The URI.</param>
/// <param name="Deadline">Canceled by Ctrl+C, --timeout or an ICMP port unreachable.</param>
internal sealed record ClientCall(CoapClient Client, CoapPeer Peer, Uri Uri, CancellationTokenSource Deadline)
{
    /// <summary>The token every request of the command is sent with.</summary>
    public CancellationToken Token => Deadline.Token;
}
