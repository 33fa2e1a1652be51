using System.Diagnostics;
using System.Globalization;
using System.Net;
using CoapNet.Client;
using CoapNet.WebSockets;

namespace CoapNet.Scenarios;

/// <summary>
/// CoAP over WebSockets against CoAP over TCP (RFC 8323 sections 4 and 3; issue 37) on the same server process in the
/// same run: the server (<see cref="WebSocketsServer"/>, a child process) serves /hello over coap+tcp and over coap+ws;
/// this process opens N connections to each (a client each), keeps W GETs in flight on every connection for a round's
/// length, and prints requests per second with the server's CPU time per request, rounds alternating the two schemes,
/// then the medians and their ratio. Measures and prints; asserts nothing.
/// </summary>
internal static class WebSocketsScenario
{
    public const string Usage = """
        websockets [--connections 16] [--window 16] [--seconds 5] [--warmup 2] [--rounds 3] [--server-cpu N]
          --connections  connections to each endpoint, each a CoapClient of its own (a client has one per server)
          --window       GETs of /hello in flight on each connection, pipelined: each sent without waiting for the others
          --seconds      length of a round, a closed loop: each answered GET is followed by the next
          --warmup       seconds of unrecorded load on each endpoint first, so the JIT has settled (0: none)
          --rounds       recorded rounds of each scheme, alternating coap+tcp and coap+ws
          --server-cpu   run the server pinned to this core (taskset -c N); pin this process to another one
        The server is this program run again as "websockets-server": one ASP.NET Core application whose hosted CoapServer
        serves the sample server's resources over coap+tcp (its own listener) and coap+ws (Kestrel, MapCoapWebSockets),
        both on 127.0.0.1. The server's CPU per request is utime + stime from /proc/PID/stat over the round.
        Example: taskset -c 1 dotnet benchmarks/CoapNet.Scenarios/bin/Release/net10.0/CoapNet.Scenarios.dll websockets --server-cpu 0
        """;

    public static async Task<int> RunAsync(string[] args)
    {
        Settings settings = Settings.Parse(args);
        Process server = SelfProcess.Start(["websockets-server"], settings.ServerCpu);
        try
        {
            (int tcpPort, int wsPort) = await ListeningAsync(server);
            Uri tcp = new($"coap+tcp://127.0.0.1:{tcpPort}/hello");
            Uri ws = new($"coap+ws://127.0.0.1:{wsPort}/hello");
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"websockets: {tcp} and {ws}, one server process (pid {server.Id}{(settings.ServerCpu is int core ? ", core " + core.ToString(CultureInfo.InvariantCulture) : string.Empty)}); {settings.Connections} connections x {settings.Window} GETs in flight, {settings.Seconds} s rounds; {Environment.ProcessorCount} core(s) for this process, .NET {Environment.Version}, load {LoadAverage.Read():0.00}"));

            CoapClient[] tcpClients = Clients(settings.Connections);
            CoapClient[] wsClients = Clients(settings.Connections);
            try
            {
                if (settings.Warmup > 0)
                {
                    await RoundAsync(tcpClients, tcp, settings.Window, settings.Warmup, server.Id);
                    await RoundAsync(wsClients, ws, settings.Window, settings.Warmup, server.Id);
                }

                Console.WriteLine();
                Console.WriteLine("| scheme | round | req/s | server CPU per request | client CPU per request | failed |");
                Console.WriteLine("|---|---:|---:|---:|---:|---:|");
                List<Measured> tcpRounds = [], wsRounds = [];
                for (int round = 1; round <= settings.Rounds; round++)
                {
                    tcpRounds.Add(Print("coap+tcp", round, await RoundAsync(tcpClients, tcp, settings.Window, settings.Seconds, server.Id)));
                    wsRounds.Add(Print("coap+ws", round, await RoundAsync(wsClients, ws, settings.Window, settings.Seconds, server.Id)));
                }

                double tcpRate = Median(tcpRounds, m => m.PerSecond), wsRate = Median(wsRounds, m => m.PerSecond);
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"| coap+tcp | median | {tcpRate:N0} | {Median(tcpRounds, m => m.ServerMicroseconds):0.0} µs | {Median(tcpRounds, m => m.ClientMicroseconds):0.0} µs | |"));
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"| coap+ws | median | {wsRate:N0} | {Median(wsRounds, m => m.ServerMicroseconds):0.0} µs | {Median(wsRounds, m => m.ClientMicroseconds):0.0} µs | |"));
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"| coap+ws / coap+tcp | median | {wsRate / tcpRate:0.00}x | {Median(wsRounds, m => m.ServerMicroseconds) / Median(tcpRounds, m => m.ServerMicroseconds):0.00}x | | |"));
            }
            finally
            {
                foreach (CoapClient client in tcpClients.Concat(wsClients))
                {
                    await client.DisposeAsync();
                }
            }
        }
        finally
        {
            SelfProcess.End(server);
        }

        return 0;
    }

    /// <summary>The ports the server prints once it listens: "listening TCP-PORT WS-PORT".</summary>
    private static async Task<(int Tcp, int Ws)> ListeningAsync(Process server)
    {
        using CancellationTokenSource timeout = new(TimeSpan.FromMinutes(1));
        string? line = await server.StandardOutput.ReadLineAsync(timeout.Token);
        string[] words = line?.Split(' ') ?? [];
        return words is ["listening", string tcp, string ws]
            ? (int.Parse(tcp, CultureInfo.InvariantCulture), int.Parse(ws, CultureInfo.InvariantCulture))
            : throw new InvalidOperationException($"The websockets-server process answered '{line}' instead of 'listening TCP-PORT WS-PORT'.");
    }

    /// <summary>Clients that speak coap+ws besides the built-in schemes: each opens its own connection to a server.</summary>
    private static CoapClient[] Clients(int count)
    {
        CoapClient[] clients = new CoapClient[count];
        for (int i = 0; i < count; i++)
        {
            CoapClientOptions options = new() { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) };
            options.Transports.Add(new CoapWebSocketTransportFactory(secure: false));
            clients[i] = new CoapClient(options);
        }

        return clients;
    }

    /// <summary>
    /// One closed-loop round: on every client's connection <paramref name="window"/> GETs in flight, each answered one
    /// followed by the next, for <paramref name="seconds"/>; those in flight at the end are waited for and counted.
    /// </summary>
    private static async Task<Measured> RoundAsync(CoapClient[] clients, Uri uri, int window, double seconds, int serverPid)
    {
        long serverBefore = ProcessCpu.Ticks(serverPid);
        TimeSpan clientBefore = Environment.CpuUsage.TotalTime;
        long start = Stopwatch.GetTimestamp();
        int stop = 0;
        long answered = 0, failed = 0;
        List<Task> workers = new(clients.Length * window);
        foreach (CoapClient client in clients)
        {
            for (int w = 0; w < window; w++)
            {
                workers.Add(Task.Run(async () =>
                {
                    long ok = 0, bad = 0;
                    while (Volatile.Read(ref stop) == 0)
                    {
                        if (await HandlerWaitScenario.TryGetAsync(client, uri))
                        {
                            ok++;
                        }
                        else
                        {
                            bad++;
                        }
                    }

                    Interlocked.Add(ref answered, ok);
                    Interlocked.Add(ref failed, bad);
                }));
            }
        }

        await Task.Delay(TimeSpan.FromSeconds(seconds));
        Volatile.Write(ref stop, 1);
        await Task.WhenAll(workers);
        TimeSpan elapsed = Stopwatch.GetElapsedTime(start);
        long serverTicks = ProcessCpu.Ticks(serverPid) - serverBefore;
        long count = Math.Max(answered, 1);
        return new Measured(
            answered / elapsed.TotalSeconds,
            serverTicks * ProcessCpu.MicrosecondsPerTick / count,
            (Environment.CpuUsage.TotalTime - clientBefore).TotalMicroseconds / count,
            failed);
    }

    private static Measured Print(string scheme, int round, Measured measured)
    {
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"| {scheme} | {round} | {measured.PerSecond:N0} | {measured.ServerMicroseconds:0.0} µs | {measured.ClientMicroseconds:0.0} µs | {measured.Failed} |"));
        return measured;
    }

    private static double Median(List<Measured> rounds, Func<Measured, double> value)
    {
        double[] values = rounds.Select(value).Order().ToArray();
        return values.Length % 2 == 1 ? values[values.Length / 2] : (values[(values.Length / 2) - 1] + values[values.Length / 2]) / 2;
    }

    /// <summary>A round: GETs answered 2.05 per second, CPU microseconds per such GET of the server and of this process, and the GETs that failed.</summary>
    private sealed record Measured(double PerSecond, double ServerMicroseconds, double ClientMicroseconds, long Failed);

    private sealed class Settings
    {
        public int Connections { get; private set; } = 16;

        public int Window { get; private set; } = 16;

        public int Seconds { get; private set; } = 5;

        public int Warmup { get; private set; } = 2;

        public int Rounds { get; private set; } = 3;

        public int? ServerCpu { get; private set; }

        public static Settings Parse(string[] args)
        {
            Settings settings = new();
            CommandLine.Parse(args, Usage, [], (name, value) =>
            {
                switch (name)
                {
                    case "--connections":
                        settings.Connections = CommandLine.ParseCount(name, value, 1);
                        return true;
                    case "--window":
                        settings.Window = CommandLine.ParseCount(name, value, 1);
                        return true;
                    case "--seconds":
                        settings.Seconds = CommandLine.ParseCount(name, value, 1);
                        return true;
                    case "--warmup":
                        settings.Warmup = CommandLine.ParseCount(name, value, 0);
                        return true;
                    case "--rounds":
                        settings.Rounds = CommandLine.ParseCount(name, value, 1);
                        return true;
                    case "--server-cpu":
                        settings.ServerCpu = CommandLine.ParseCount(name, value, 0);
                        return true;
                    default:
                        return false;
                }
            });
            return settings;
        }
    }
}
