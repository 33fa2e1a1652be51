// The CoapNet sample server: no configuration needed, UDP and TCP (RFC 8323) port 5683, DTLS (coaps, RFC 7252
// section 9) on UDP port 5684 and TLS (coaps+tcp, RFC 8323 section 9.1) on TCP port 5684, on every interface
// (dual-stack). Options: --port N (UDP), --tcp-port N (0 turns TCP off), --dtls-port N (0 turns coaps off),
// --psk-identity ID and --psk-key KEY (the demo pre-shared key coaps clients use; printed at start), --tls-port N
// (0 turns coaps+tcp off), --cert FILE --key FILE (the PEM certificate and key of coaps+tcp; without them a
// self-signed one is made at start, and its SHA-256 fingerprint printed), --address A (for example --address
// 127.0.0.1), --receive-sockets N (UDP sockets sharing the port with SO_REUSEPORT on Linux, one receive thread
// each; default 1). Exits with 2 for an unknown argument, 1 when an endpoint cannot be bound or a certificate read.
//   dotnet run --project samples/CoapNet.Samples.Server
using System.Globalization;
using System.Net;
using System.Runtime.InteropServices;
using CoapNet.Channels;
using CoapNet.Samples.Server;
using CoapNet.Server;
using CoapNet.Transports;
using Microsoft.Extensions.Logging;

int port = 5683;
int tcpPort = 5683;
int dtlsPort = 5684;
string pskIdentity = "coapnet";
string pskKey = "sample-secret";
int tlsPort = 5684;
Dictionary<string, string> tlsFiles = [];
IPAddress address = IPAddress.IPv6Any;
int receiveSockets = 1;
for (int i = 0; i < args.Length; i++)
{
    switch (args[i])
    {
        case "--port" when i + 1 < args.Length && int.TryParse(args[i + 1], NumberStyles.None, CultureInfo.InvariantCulture, out int p) && p <= IPEndPoint.MaxPort:
            port = p;
            i++;
            break;
        case "--tcp-port" when i + 1 < args.Length && int.TryParse(args[i + 1], NumberStyles.None, CultureInfo.InvariantCulture, out int t) && t <= IPEndPoint.MaxPort:
            tcpPort = t;
            i++;
            break;
        case "--receive-sockets" when i + 1 < args.Length && int.TryParse(args[i + 1], NumberStyles.None, CultureInfo.InvariantCulture, out int r)
            && r is >= 1 and <= UdpTransportOptions.MaxReceiveSockets:
            receiveSockets = r;
            i++;
            break;
        case "--dtls-port" when i + 1 < args.Length && int.TryParse(args[i + 1], NumberStyles.None, CultureInfo.InvariantCulture, out int d) && d <= IPEndPoint.MaxPort:
            dtlsPort = d;
            i++;
            break;
        case "--psk-identity" when i + 1 < args.Length && args[i + 1].Length > 0:
            pskIdentity = args[++i];
            break;
        case "--psk-key" when i + 1 < args.Length && args[i + 1].Length > 0:
            pskKey = args[++i];
            break;
        case "--tls-port" when i + 1 < args.Length && ushort.TryParse(args[i + 1], NumberStyles.None, CultureInfo.InvariantCulture, out ushort s):
            tlsPort = s;
            i++;
            break;
        case "--cert" or "--key" when i + 1 < args.Length && args[i + 1].Length > 0:
            tlsFiles[args[i]] = args[++i];
            break;
        case "--address" when i + 1 < args.Length && IPAddress.TryParse(args[i + 1], out IPAddress? a):
            address = a;
            i++;
            break;
        default:
            Console.Error.WriteLine($"Unknown or invalid argument '{args[i]}'. Usage: [--port N] [--tcp-port N] [--dtls-port N] [--psk-identity ID] [--psk-key KEY] [--tls-port N] [--cert FILE --key FILE] [--address IP] [--receive-sockets N]");
            return 2;
    }
}

string? certFile = tlsFiles.GetValueOrDefault("--cert");
string? keyFile = tlsFiles.GetValueOrDefault("--key");
if ((certFile is null) != (keyFile is null))
{
    Console.Error.WriteLine("--cert FILE and --key FILE go together: the PEM certificate of coaps+tcp and its private key.");
    return 2;
}

// What an operator needs on the console, at Information: failed and refused handshakes (DTLS and TLS) with the peer, the
// reason and the alert, evictions, malformed input; each kind rate-limited where it is logged, and never a key. The
// endpoints' per-exchange lines (a retransmission given up, a 5.03 for a connection's full window) stay at Warning.
using ILoggerFactory logging = LoggerFactory.Create(builder => builder
    .AddSimpleConsole(console =>
    {
        console.SingleLine = true;
        console.TimestampFormat = "HH:mm:ss ";
    })
    .SetMinimumLevel(LogLevel.Information)
    .AddFilter("CoapNet.Messaging", LogLevel.Warning));

// Every endpoint from its address; sockets are bound when the server starts, all of them or none.
CoapServerOptions options = new()
{
    // 16 MiB uploads (PUT /upload) and 16 MiB /large bodies kept for their Block2 follow-ups.
    Endpoint = { Blockwise = SampleResources.Blockwise, LoggerFactory = logging },
    Udp = { ReceiveSockets = receiveSockets },
};
options.Listen(CoapPeer.UdpScheme, new IPEndPoint(address, port));
if (tcpPort != 0)
{
    options.Listen(CoapPeer.TcpScheme, new IPEndPoint(address, tcpPort));
}

// coaps: one demo pre-shared key (RFC 7252 section 9.1.3.1), for `coap-client-openssl -u ID -k KEY coaps://...`.
if (dtlsPort != 0)
{
    SampleCertificate.ListenDtls(options, new IPEndPoint(address, dtlsPort), pskIdentity, pskKey);
}

// coaps+tcp: the certificate given, or a self-signed one made now (RFC 8323 section 9.1; TLS in .NET has no PSK).
string? tlsBanner = null;
if (tlsPort != 0)
{
    if (!SampleCertificate.TryListenTls(options, new IPEndPoint(address, tlsPort), certFile, keyFile, out string text))
    {
        Console.Error.WriteLine(text);
        return 1;
    }

    tlsBanner = text;
}

await using CoapServer server = new(options);
using IDisposable ticker = SampleResources.Map(server);
try
{
    await server.StartAsync();
}
catch (CoapBindException e)
{
    // A port in use (another CoAP server, often) is the usual reason: every endpoint that failed, and the option of each.
    List<string> flags = [];
    foreach (CoapBindException failure in e.Failures)
    {
        flags.Add(failure.Scheme switch
        {
            CoapPeer.TcpScheme => "--tcp-port N (0 turns coap+tcp off)",
            CoapPeer.DtlsScheme => "--dtls-port N (0 turns coaps off)",
            CoapPeer.TlsScheme => "--tls-port N (0 turns coaps+tcp off)",
            _ => "--port N",
        });
    }

    Console.Error.WriteLine($"{e.Message} Choose other ports with {string.Join(", ", flags)}, or stop what holds them.");
    return 1;
}

foreach (Uri uri in server.LocalUris)
{
    Console.WriteLine($"CoapNet sample server listening on {uri.GetLeftPart(UriPartial.Authority)}");
}

Console.WriteLine("Resources: " + string.Join(", ", server.Routes));
if (dtlsPort != 0)
{
    Console.WriteLine($"coaps pre-shared key: identity '{pskIdentity}', key '{pskKey}' (demo only; set yours with --psk-identity and --psk-key)");
}

if (tlsBanner is not null)
{
    Console.WriteLine(tlsBanner);
}

Console.WriteLine("Try: coap-client-notls coap://127.0.0.1/.well-known/core   or   coap-client-notls coap+tcp://127.0.0.1/hello   (Ctrl+C stops)");

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

try
{
    await Task.Delay(Timeout.Infinite, stop.Token);
}
catch (OperationCanceledException)
{
    Console.WriteLine("Stopping...");
}

using CancellationTokenSource drain = new(TimeSpan.FromSeconds(5));
await server.StopAsync(drain.Token);
Console.WriteLine("Stopped.");
return 0;
