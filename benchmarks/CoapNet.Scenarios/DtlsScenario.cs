using System.Diagnostics;
using System.Globalization;
using System.Net;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Messaging;
using CoapNet.Transports;

namespace CoapNet.Scenarios;

/// <summary>
/// Secure CoAP (issue 23) against a server in another process: full DTLS handshakes per second (each a new client
/// socket and session, closed with close_notify), requests per second over one established session against the same
/// server's plain coap:// port, and the server's resident memory per idle session (its VmRSS before and after
/// holding sessions open). Measures and prints; asserts nothing.
/// </summary>
internal static class DtlsScenario
{
    public const string Usage = """
        dtls --server coaps://127.0.0.1:PORT/hello [--plain coap://127.0.0.1:PORT/hello] [--identity coapnet] [--key sample-secret]
             [--handshakes 1000] [--handshake-concurrency 8] [--requests 100000] [--concurrency 1,16] [--rounds 3]
             [--idle-sessions 0] [--server-pid PID]
          --server                 the coaps URI to GET (the sample server: --dtls-port; coap-server-openssl: its port + 1); a coap:// one measures the plain port alone
          --plain                  the same resource over coap://, measured the same way for comparison
          --identity, --key        the pre-shared key (libcoap's -u and -k)
          --handshakes             full handshakes to time, --handshake-concurrency at once
          --requests, --concurrency, --rounds   GETs per round over one session, in flight at once, rounds each
          --idle-sessions, --server-pid         hold that many sessions open (each after one CoAP ping) and read the server's VmRSS before and after
        Pin the server to one core (taskset -c 0) and this process to the other (taskset -c 1).
        """;

    public static async Task<int> RunAsync(string[] args)
    {
        Settings settings = Settings.Parse(args);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"dtls: {settings.Server} (plain: {settings.Plain?.ToString() ?? "none"}), PSK identity '{settings.Identity}'; {Environment.ProcessorCount} core(s) for this process, .NET {Environment.Version}"));
        IPEndPoint server = new(IPAddress.Parse(settings.Server.Host), settings.Server.Port);

        if (settings.Handshakes > 0)
        {
            // Warm up the JIT and BouncyCastle's tables with a few, then time the rest.
            await HandshakesAsync(settings, server, 20);
            long start = Stopwatch.GetTimestamp();
            int failed = await HandshakesAsync(settings, server, settings.Handshakes);
            double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"handshakes: {settings.Handshakes} full PSK handshakes, {settings.HandshakeConcurrency} at once: {settings.Handshakes / seconds:N0}/s ({failed} failed)"));
        }

        Console.WriteLine();
        Console.WriteLine("| scheme | concurrency | round | req/s | failed |");
        Console.WriteLine("|---|---:|---:|---:|---:|");
        foreach (Uri target in settings.Plain is null ? new[] { settings.Server } : [settings.Server, settings.Plain])
        {
            foreach (int concurrency in settings.Concurrency)
            {
                await using CoapClient client = new(new CoapClientOptions
                {
                    LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0),
                    Udp = { SocketReceiveBufferSize = 4 * 1024 * 1024 },
                    Endpoint = new CoapEndpointOptions { TransmissionParameters = new CoapTransmissionParameters { NStart = concurrency } },
                }.UseDtls(Credentials(settings)));
                await HandlerWaitScenario.RunLoadAsync(client, target, Math.Min(settings.Requests, 20_000), concurrency);
                for (int round = 1; round <= settings.Rounds; round++)
                {
                    long start = Stopwatch.GetTimestamp();
                    int failed = await HandlerWaitScenario.RunLoadAsync(client, target, settings.Requests, concurrency);
                    double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
                    Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"| {target.Scheme} | {concurrency} | {round} | {settings.Requests / seconds:N0} | {failed} |"));
                }
            }
        }

        if (settings.IdleSessions > 0 && settings.ServerPid is int pid)
        {
            long before = ResidentKilobytes(pid);
            List<DtlsClientTransport> held = [];
            try
            {
                for (int i = 0; i < settings.IdleSessions; i++)
                {
                    DtlsClientTransport transport = new(new UdpTransport(new IPEndPoint(IPAddress.Loopback, 0)), Credentials(settings));
                    held.Add(transport);
                    transport.Start(new Ignore());
                    CoapNet.Channels.CoapSecurityContext session = await transport.ConnectAsync(server);

                    // One CoAP ping (an empty CON, RFC 7252 section 4.3) in the session: a device that spoke once, then went quiet.
                    transport.Send([0x40, 0x00, (byte)(i >> 8), (byte)i], server, session);

                    // Every 1,000 sessions the server's VmRSS: the slope between two counts leaves out what does not
                    // grow with sessions (the GC's allocation budget, the handshakes' garbage not yet collected).
                    if ((i + 1) % 1000 == 0 && i + 1 < settings.IdleSessions)
                    {
                        await Task.Delay(2000);
                        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"idle sessions: {i + 1} held open; server VmRSS {ResidentKilobytes(pid):N0} kB"));
                    }
                }

                await Task.Delay(2000);
                long after = ResidentKilobytes(pid);
                Console.WriteLine();
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"idle sessions: {settings.IdleSessions} held open; server VmRSS {before:N0} kB -> {after:N0} kB: {(after - before) * 1024.0 / settings.IdleSessions:N0} B per session"));
            }
            finally
            {
                foreach (DtlsClientTransport transport in held)
                {
                    await transport.DisposeAsync();
                }
            }
        }

        return 0;
    }

    private static DtlsClientOptions Credentials(Settings settings)
        => new() { PskIdentity = settings.Identity, PskKey = System.Text.Encoding.UTF8.GetBytes(settings.Key) };

    private static Task<int> HandshakesAsync(Settings settings, IPEndPoint server, int count)
        => DtlsHandshakeScenario.HandshakesAsync(server, () => Credentials(settings), count, settings.HandshakeConcurrency);

    private static long ResidentKilobytes(int pid)
    {
        foreach (string line in File.ReadLines($"/proc/{pid}/status"))
        {
            if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
            {
                return long.Parse(line.AsSpan(6).Trim().TrimEnd("kB").Trim(), CultureInfo.InvariantCulture);
            }
        }

        throw new InvalidOperationException($"No VmRSS for process {pid}.");
    }

    private sealed class Ignore : CoapNet.Transports.IDatagramReceiver
    {
        public void OnDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote)
        {
        }
    }

    private sealed class Settings
    {
        public Uri Server { get; private set; } = null!;

        public Uri? Plain { get; private set; }

        public string Identity { get; private set; } = "coapnet";

        public string Key { get; private set; } = "sample-secret";

        public int Handshakes { get; private set; } = 1000;

        public int HandshakeConcurrency { get; private set; } = 8;

        public int Requests { get; private set; } = 100_000;

        public IReadOnlyList<int> Concurrency { get; private set; } = [1, 16];

        public int Rounds { get; private set; } = 3;

        public int IdleSessions { get; private set; }

        public int? ServerPid { get; private set; }

        public static Settings Parse(string[] args)
        {
            Settings settings = new();
            CommandLine.Parse(args, Usage, [], (name, value) =>
            {
                switch (name)
                {
                    case "--server":
                        settings.Server = new Uri(value!);
                        return true;
                    case "--plain":
                        settings.Plain = new Uri(value!);
                        return true;
                    case "--identity":
                        settings.Identity = value!;
                        return true;
                    case "--key":
                        settings.Key = value!;
                        return true;
                    case "--handshakes":
                        settings.Handshakes = CommandLine.ParseCount(name, value, 0);
                        return true;
                    case "--handshake-concurrency":
                        settings.HandshakeConcurrency = CommandLine.ParseCount(name, value, 1);
                        return true;
                    case "--requests":
                        settings.Requests = CommandLine.ParseCount(name, value, 1);
                        return true;
                    case "--concurrency":
                        settings.Concurrency = CommandLine.ParseCounts(name, value, 1);
                        return true;
                    case "--rounds":
                        settings.Rounds = CommandLine.ParseCount(name, value, 1);
                        return true;
                    case "--idle-sessions":
                        settings.IdleSessions = CommandLine.ParseCount(name, value, 0);
                        return true;
                    case "--server-pid":
                        settings.ServerPid = CommandLine.ParseCount(name, value, 1);
                        return true;
                    default:
                        return false;
                }
            });
            // A coap:// --server (with --handshakes 0) measures the plain port alone, for the server's CPU per request.
            return settings.Server is not null && settings.Server.Scheme is "coaps" or "coap"
                ? settings
                : throw new ArgumentException($"--server takes a coaps:// (or, with --handshakes 0, a coap://) URI.\n{Usage}");
        }
    }
}
