using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Security.Cryptography.X509Certificates;
using CoapNet.Client;
using CoapNet.Tls;
using CoapNet.Transports;

namespace CoapNet.Scenarios;

/// <summary>
/// CoAP over TLS (coaps+tcp, RFC 8323 section 9.1; issue 23) against a server in another process: requests per second
/// over one established connection, coaps+tcp beside the same server's plain coap+tcp, with the server's CPU time per
/// request (utime + stime from /proc/PID/stat) and this process's; and full TLS handshakes per second (a new TCP
/// connection and TLS session each, closed after). Measures and prints; asserts nothing.
/// </summary>
internal static class TlsScenario
{
    public const string Usage = """
        tls --server coaps+tcp://127.0.0.1:PORT/hello [--plain coap+tcp://127.0.0.1:PORT/hello] [--ca FILE]
            [--handshakes 500] [--handshake-concurrency 8] [--requests 50000] [--concurrency 1,16] [--rounds 3] [--server-pid PID]
          --server                 the coaps+tcp URI to GET (the sample server: --tls-port; coap-server-openssl: its port + 1)
          --plain                  the same resource over coap+tcp://, measured the same way for comparison
          --ca                     trust only the CA certificates in this PEM file; without it the server's certificate
                                   is not checked (the sample server's is self-signed and made at start)
          --handshakes             full TLS handshakes to time, --handshake-concurrency at once
          --requests, --concurrency, --rounds   GETs per round over one connection, in flight at once, rounds each
          --server-pid             the server's process, for its CPU time per request
        Pin the server to one core (taskset -c 0) and this process to the other (taskset -c 1).
        """;

    public static async Task<int> RunAsync(string[] args)
    {
        Settings settings = Settings.Parse(args);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"tls: {settings.Server} (plain: {settings.Plain?.ToString() ?? "none"}), {(settings.Roots is null ? "server certificate not checked" : "server certificate checked against --ca")}; {Environment.ProcessorCount} core(s) for this process, .NET {Environment.Version}, load {LoadAverage.Read():0.00}"));

        if (settings.Handshakes > 0)
        {
            // A few to warm up the JIT and the TLS library, then the timed ones.
            await HandshakesAsync(settings, 20);
            Measured handshakes = await MeasureAsync(settings, settings.Handshakes, () => HandshakesAsync(settings, settings.Handshakes));
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"handshakes: {settings.Handshakes} full TLS handshakes, {settings.HandshakeConcurrency} at once: {handshakes.PerSecond:N0}/s, server CPU {handshakes.ServerCpu} per handshake ({handshakes.Failed} failed)"));
        }

        Console.WriteLine();
        Console.WriteLine("| scheme | concurrency | round | req/s | server CPU per request | client CPU per request | failed |");
        Console.WriteLine("|---|---:|---:|---:|---:|---:|---:|");
        List<Uri> targets = [settings.Server];
        if (settings.Plain is not null)
        {
            targets.Add(settings.Plain);
        }

        foreach (Uri target in targets)
        {
            foreach (int concurrency in settings.Concurrency)
            {
                await RoundsAsync(settings, target, concurrency);
            }
        }

        return 0;
    }

    // One client, so one connection (and one TLS session), established and warm before the rounds.
    private static async Task RoundsAsync(Settings settings, Uri target, int concurrency)
    {
        await using CoapClient client = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0), Tls = ClientOptions(settings) });
        await HandlerWaitScenario.RunLoadAsync(client, target, Math.Min(settings.Requests, 20_000), concurrency);
        for (int round = 1; round <= settings.Rounds; round++)
        {
            Measured measured = await MeasureAsync(settings, settings.Requests, () => HandlerWaitScenario.RunLoadAsync(client, target, settings.Requests, concurrency));
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"| {target.Scheme} | {concurrency} | {round} | {measured.PerSecond:N0} | {measured.ServerCpu} | {measured.ClientCpu} | {measured.Failed} |"));
        }
    }

    private static async Task<Measured> MeasureAsync(Settings settings, int count, Func<Task<int>> run)
    {
        long serverBefore = ServerTicks(settings);
        TimeSpan clientBefore = Environment.CpuUsage.TotalTime;
        long start = Stopwatch.GetTimestamp();
        int failed = await run();
        TimeSpan elapsed = Stopwatch.GetElapsedTime(start);
        long serverTicks = ServerTicks(settings) - serverBefore;
        return new Measured(
            count / elapsed.TotalSeconds,
            serverBefore < 0 ? "-" : string.Create(CultureInfo.InvariantCulture, $"{serverTicks * ProcessCpu.MicrosecondsPerTick / count:0.0} µs"),
            string.Create(CultureInfo.InvariantCulture, $"{(Environment.CpuUsage.TotalTime - clientBefore).TotalMicroseconds / count:0.0} µs"),
            failed);
    }

    private static TlsClientOptions ClientOptions(Settings settings)
        => settings.Roots is null
            ? new TlsClientOptions { CertificateValidator = static (_, _, _) => true }
            : new TlsClientOptions { TrustedRoots = settings.Roots };

    private static async Task<int> HandshakesAsync(Settings settings, int count)
    {
        TlsConnectionFactory factory = new(new TcpConnectionFactory(), ClientOptions(settings));
        IPEndPoint server = new(IPAddress.Parse(settings.Server.Host), settings.Server.Port);
        int failed = 0;
        await Parallel.ForEachAsync(Enumerable.Range(0, count), new ParallelOptions { MaxDegreeOfParallelism = settings.HandshakeConcurrency }, async (_, cancellationToken) =>
        {
            try
            {
                await using TransportConnection connection = await factory.ConnectAsync(server, cancellationToken);
            }
            catch (Exception e) when (e is IOException or TimeoutException or System.Net.Sockets.SocketException or System.Security.Authentication.AuthenticationException)
            {
                Interlocked.Increment(ref failed);
            }
        });
        return failed;
    }

    /// <summary>The server's utime + stime in clock ticks, or -1 without --server-pid.</summary>
    private static long ServerTicks(Settings settings) => settings.ServerPid is int pid ? ProcessCpu.Ticks(pid) : -1;

    /// <summary>A timed run: items per second, CPU time per item of the server (clock ticks are 10 ms, USER_HZ 100) and of this process.</summary>
    private sealed record Measured(double PerSecond, string ServerCpu, string ClientCpu, int Failed);

    // Read once from a table of what was given, each with its default: a scenario with this many counts reads them in one place.
    private sealed class Settings
    {
        private static readonly string[] Names = ["--server", "--plain", "--ca", "--handshakes", "--handshake-concurrency", "--requests", "--concurrency", "--rounds", "--server-pid"];

        private Settings(Dictionary<string, string> given)
        {
            Server = new Uri(given.GetValueOrDefault("--server") ?? throw new ArgumentException($"--server is required.\n{Usage}"));
            Plain = given.TryGetValue("--plain", out string? plain) ? new Uri(plain) : null;
            if (given.TryGetValue("--ca", out string? ca))
            {
                Roots = [];
                Roots.ImportFromPemFile(ca);
            }

            Handshakes = Count(given, "--handshakes", 500, 0);
            HandshakeConcurrency = Count(given, "--handshake-concurrency", 8, 1);
            Requests = Count(given, "--requests", 50_000, 1);
            Concurrency = given.TryGetValue("--concurrency", out string? concurrency) ? CommandLine.ParseCounts("--concurrency", concurrency, 1) : [1, 16];
            Rounds = Count(given, "--rounds", 3, 1);
            ServerPid = given.ContainsKey("--server-pid") ? Count(given, "--server-pid", 0, 1) : null;
        }

        public Uri Server { get; }

        public Uri? Plain { get; }

        public X509Certificate2Collection? Roots { get; }

        public int Handshakes { get; }

        public int HandshakeConcurrency { get; }

        public int Requests { get; }

        public IReadOnlyList<int> Concurrency { get; }

        public int Rounds { get; }

        public int? ServerPid { get; }

        public static Settings Parse(string[] args)
        {
            Dictionary<string, string> given = [];
            CommandLine.Parse(args, Usage, [], (name, value) => Array.IndexOf(Names, name) >= 0 && given.TryAdd(name, value!));
            Settings settings = new(given);
            return settings.Server.Scheme == "coaps+tcp" ? settings : throw new ArgumentException($"--server takes a coaps+tcp:// URI.\n{Usage}");
        }

        private static int Count(Dictionary<string, string> given, string name, int fallback, int min)
            => given.TryGetValue(name, out string? value) ? CommandLine.ParseCount(name, value, min) : fallback;
    }
}
