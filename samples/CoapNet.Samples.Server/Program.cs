// The CoapNet sample server: no configuration needed, UDP and TCP (RFC 8323) port 5683, DTLS (coaps, RFC 7252
// section 9) on UDP port 5684 and TLS (coaps+tcp, RFC 8323 section 9.1) on TCP port 5684, and on HTTP port 8683 CoAP over
// WebSockets (coap+ws, RFC 8323 section 4) with the explorer, a page that explores the server from a browser, on every
// interface (dual-stack). `--help` lists the flags (SampleArguments.cs): the ports, the address, the demo pre-shared key, the
// certificate of coaps+tcp, the UDP receive sockets. Exits with 2 for a usage error, 1 when an endpoint cannot be bound
// (every one that cannot is named, with flags that move them to ports free now) or a certificate read.
//   dotnet run --project samples/CoapNet.Samples.Server
using System.Net;
using System.Runtime.InteropServices;
using CoapNet.Channels;
using CoapNet.Multicast;
using CoapNet.Samples;
using CoapNet.Samples.Server;
using CoapNet.Server;
using CoapNet.Transports;
using CoapNet.WebSockets;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

if (SampleArguments.Parse(args, out int usage) is not { } arguments)
{
    return usage;
}

IPAddress address = arguments.Address;

// --psk-file: a fleet's keys (issue 41), read before anything is bound so a bad file stops the start with its line; the
// server re-reads the file when it changes (devices provisioned while it runs).
SampleFleet? fleet = null;
if (arguments.PskFile is { } pskFile)
{
    try
    {
        fleet = SampleFleet.Load(pskFile);
    }
    catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException)
    {
        Console.Error.WriteLine($"--psk-file: {e.Message}");
        return 2;
    }
}

// What an operator needs on the console, at Information: failed and refused handshakes (DTLS and TLS) with the peer, the
// reason and the alert, evictions, malformed input; each kind rate-limited where it is logged, and never a key. The
// endpoints' per-exchange lines (a retransmission given up, a 5.03 for a connection's full window) stay at Warning.
using ILoggerFactory logging = LoggerFactory.Create(builder => ConsoleLog(builder)
    .SetMinimumLevel(LogLevel.Information)
    .AddFilter("CoapNet.Messaging", LogLevel.Warning));

// Every endpoint from its address; sockets are bound when the server starts, all of them or none. The same settings go to
// the server made here or, with --http-port, to the one the web application hosts, so they are set in one place.
string? usageError = null, tlsError = null, tlsBanner = null;
void Configure(CoapServerOptions options)
{
    // 16 MiB uploads (PUT /upload) and 16 MiB /large bodies kept for their Block2 follow-ups.
    options.Endpoint.Blockwise = SampleResources.Blockwise;
    options.Endpoint.LoggerFactory = logging;
    options.Udp.ReceiveSockets = arguments.ReceiveSockets;
    if (arguments.Multicast)
    {
        // Group communication (RFC 7252 section 8): one UDP port for unicast and the All CoAP Nodes groups, every address.
        try
        {
            options.ListenMulticast(multicast =>
            {
                multicast.Port = arguments.UdpPort;
                multicast.Leisure = arguments.MulticastLeisure;
                if (arguments.MulticastInterface is { } name)
                {
                    multicast.Interfaces.Add(name);
                }
            });
        }
        catch (ArgumentException e)
        {
            usageError = e.Message;
            return;
        }
    }
    else
    {
        // coap also takes OSCORE (RFC 8613) with the demo context of its Appendix C.1, printed below: every route answers a
        // protected request, and /oscore/hello answers nothing else. (Not with --multicast: group requests would need Group
        // OSCORE, and the group port keeps the server's plain settings.)
        options.Listen(CoapPeer.UdpScheme, new IPEndPoint(address, arguments.UdpPort), udp => udp.Endpoint = SampleOscore.Protect(options.Endpoint));
    }

    if (arguments.TcpPort != 0)
    {
        options.Listen(CoapPeer.TcpScheme, new IPEndPoint(address, arguments.TcpPort));
    }

    // coaps: one demo pre-shared key (RFC 7252 section 9.1.3.1), for `coap-client-openssl -u ID -k KEY coaps://...`, or
    // a fleet's keys, one per device.
    if (arguments.DtlsPort != 0 && fleet is not null)
    {
        fleet.Listen(options, new IPEndPoint(address, arguments.DtlsPort));
    }
    else if (arguments.DtlsPort != 0)
    {
        SampleCertificate.ListenDtls(options, new IPEndPoint(address, arguments.DtlsPort), arguments.PskIdentity, arguments.PskKey);
    }

    // coaps+tcp: the certificate given, or a self-signed one made now (RFC 8323 section 9.1; TLS in .NET has no PSK).
    if (arguments.TlsPort != 0)
    {
        if (SampleCertificate.TryListenTls(options, new IPEndPoint(address, arguments.TlsPort), arguments.CertFile, arguments.KeyFile, out string text))
        {
            tlsBanner = text;
        }
        else
        {
            tlsError = text;
        }
    }
}

IDisposable? ticker = null;
void Map(CoapServer server)
{
    ticker = SampleResources.Map(server);
    SampleOscore.Map(server);
    fleet?.Map(server);
}

// coap+ws (RFC 8323 section 4) and the explorer page on --http-port: a Kestrel application that hosts the server (SampleWeb.cs).
await using WebApplication? web = arguments.HttpPort == 0 ? null
    : SampleWeb.Build(address, arguments.HttpPort, Configure, Map, builder => ConsoleLog(builder));
CoapServer server;
if (web is null)
{
    CoapServerOptions options = new();
    Configure(options);
    server = new CoapServer(options);
    Map(server);
}
else
{
    server = web.Services.GetRequiredService<CoapServer>();
}

// The web application's container disposes the server it hosts; the one made here is disposed here.
await using CoapServer? owned = web is null ? server : null;
using IDisposable? stopTicker = ticker;
if (usageError is not null)
{
    Console.Error.WriteLine(usageError);
    return 2;
}

if (tlsError is not null)
{
    Console.Error.WriteLine(tlsError);
    return 1;
}

try
{
    await (web is null ? server.StartAsync() : web.StartAsync());
}
catch (CoapBindException e)
{
    // A port in use (another CoAP server, often) is the usual reason: every endpoint that failed by its scheme (the
    // exception's message), then the command line that moves each of them to a port free now, as it can be pasted.
    Dictionary<string, int> moves = [];
    foreach (CoapBindException failure in e.Failures)
    {
        moves[failure.Scheme switch
        {
            CoapPeer.TcpScheme => "--tcp-port",
            CoapPeer.DtlsScheme => "--dtls-port",
            CoapPeer.TlsScheme => "--tls-port",
            _ => "--port",
        }] = FreePort.Find(failure.EndPoint.Address, taken: moves.Values);
    }

    Console.Error.WriteLine(e.Message);
    Console.Error.WriteLine($"Stop what holds them, or run on ports free now: dotnet run --project samples/CoapNet.Samples.Server -- {SampleArguments.Moved(args, moves)}");
    Console.Error.WriteLine("(--tcp-port, --dtls-port, --tls-port and --http-port 0 turn coap+tcp, coaps, coaps+tcp and coap+ws off.)");
    return 1;
}
catch (IOException e) when (web is not null)
{
    // Kestrel could not bind the HTTP port (its message names the address).
    Dictionary<string, int> moves = new() { ["--http-port"] = FreePort.Find(address) };
    Console.Error.WriteLine(e.Message);
    Console.Error.WriteLine($"Stop what holds it, or run on a port free now: dotnet run --project samples/CoapNet.Samples.Server -- {SampleArguments.Moved(args, moves)}");
    Console.Error.WriteLine("(--http-port 0 turns coap+ws and the explorer off.)");
    return 1;
}

// Ctrl+C and SIGTERM are handled from here on, before the lines that say it listens: whoever acts on them may stop it.
using CancellationTokenSource stop = new();
Console.CancelKeyPress += (_, e) =>
{
    e.Cancel = true;
    stop.Cancel();
};

// SIGTERM (docker stop, systemd) stops as gracefully as Ctrl+C: cancel the default termination so
// the requests in flight are answered. (A ProcessExit handler cannot: the process exits when it returns.)
using PosixSignalRegistration terminate = PosixSignalRegistration.Create(PosixSignal.SIGTERM, context =>
{
    context.Cancel = true;
    stop.Cancel();
});

foreach (Uri uri in server.LocalUris)
{
    // coap+ws and coaps+ws are Kestrel's, printed below from its address (the sample serves no HTTPS: coaps+ws is idle).
    if (uri.Scheme is not (CoapWebSocketTransportFactory.PlainScheme or CoapWebSocketTransportFactory.SecureScheme))
    {
        Console.WriteLine($"CoapNet sample server listening on {uri.GetLeftPart(UriPartial.Authority)}");
    }
}

if (web is not null)
{
    // A browser cannot open [::]: the page is named at the loopback address when the server listens on every interface.
    IPAddress shown = address.Equals(IPAddress.IPv6Any) || address.Equals(IPAddress.Any) ? IPAddress.Loopback : address;
    string authority = new IPEndPoint(shown, arguments.HttpPort).ToString();
    Console.WriteLine($"CoapNet sample server listening on {CoapWebSocketTransportFactory.PlainScheme}://{authority}");
    Console.WriteLine($"explorer: http://{authority}/");
}

Console.WriteLine("Resources: " + string.Join(", ", server.Routes));
if (arguments.DtlsPort != 0 && fleet is not null)
{
    Console.WriteLine(fleet.Describe());
}
else if (arguments.DtlsPort != 0)
{
    Console.WriteLine($"coaps pre-shared key: identity '{arguments.PskIdentity}', key '{arguments.PskKey}' (demo only; set yours with --psk-identity and --psk-key)");
}

if (!arguments.Multicast)
{
    Console.WriteLine(SampleOscore.Banner);
}

if (tlsBanner is not null)
{
    Console.WriteLine(tlsBanner);
}

Console.WriteLine("Try: coap-client-notls coap://127.0.0.1/.well-known/core   or   coap-client-notls coap+tcp://127.0.0.1/hello   (Ctrl+C stops)");

try
{
    await Task.Delay(Timeout.Infinite, stop.Token);
}
catch (OperationCanceledException)
{
    Console.WriteLine("Stopping...");
}

using CancellationTokenSource drain = new(TimeSpan.FromSeconds(5));
await (web is null ? server.StopAsync(drain.Token) : web.StopAsync(drain.Token));
Console.WriteLine("Stopped.");
return 0;

// One line per entry, with the time: the server's log and the web host's alike.
static ILoggingBuilder ConsoleLog(ILoggingBuilder builder) => builder.AddSimpleConsole(console =>
{
    console.SingleLine = true;
    console.TimestampFormat = "HH:mm:ss ";
});
