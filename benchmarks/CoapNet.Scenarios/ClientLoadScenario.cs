using System.Diagnostics;
using System.Globalization;
using CoapNet.Client;
using CoapNet.Messaging;

namespace CoapNet.Scenarios;

/// <summary>
/// The client's own cost per request: one <see cref="CoapClient"/> sends CON GETs to a server in another process
/// (udp-echo, which answers each with a piggybacked 2.05 and does nothing else, so the server's share is the
/// least it can be), with a given number in flight. Prints requests per second, this process's CPU time per
/// request and the bytes it allocated per request. Measures and prints; asserts nothing.
/// </summary>
/// <remarks>
/// A gateway that polls devices is a client first; and the handler-wait scenario, whose load comes from a client in
/// the server's process on the same 2 cores, is as fast as the client is cheap.
/// </remarks>
internal static class ClientLoadScenario
{
    public const string Usage = """
        client-load --server coap://127.0.0.1:PORT/hello [--requests 200000] [--warmup 20000] [--concurrency 1,50,500] [--rounds 3]
          --server       the URI to GET; answered by a server in another process, best udp-echo
                         (cc -O2 -o /tmp/udp-echo benchmarks/tools/udp-echo.c; taskset -c 1 /tmp/udp-echo 47001 &)
          --requests     requests per round
          --warmup       requests before the rounds of each concurrency, outside the measurement
          --concurrency  requests in flight (and the client's NSTART), one set of rounds each
          --rounds       measured rounds per concurrency
        Pin this process to the other core (taskset -c 0) so that the server's cost is not in its CPU time.
        """;

    public static async Task<int> RunAsync(string[] args)
    {
        Settings settings = Settings.Parse(args);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"client-load: CON GET {settings.Server}, {settings.Requests} requests per round after {settings.Warmup} to warm up; {Environment.ProcessorCount} core(s) this process may run on, .NET {Environment.Version}"));
        Console.WriteLine();
        Console.WriteLine("| concurrency | round | req/s | CPU per request | bytes per request | failed | thread-pool threads |");
        Console.WriteLine("|---:|---:|---:|---:|---:|---:|---:|");
        foreach (int concurrency in settings.Concurrency)
        {
            await using CoapClient client = new(new CoapClientOptions
            {
                // The answers to many requests in flight come back together: more than the 1 MiB default holds.
                Udp = { SocketReceiveBufferSize = 4 * 1024 * 1024 },
                Endpoint = new CoapEndpointOptions { TransmissionParameters = new CoapTransmissionParameters { NStart = concurrency } },
            });
            await HandlerWaitScenario.RunLoadAsync(client, settings.Server, settings.Warmup, concurrency);
            for (int round = 1; round <= settings.Rounds; round++)
            {
                TimeSpan cpuBefore = Environment.CpuUsage.TotalTime;
                long allocatedBefore = GC.GetTotalAllocatedBytes(precise: true);
                long start = Stopwatch.GetTimestamp();
                int failed = await HandlerWaitScenario.RunLoadAsync(client, settings.Server, settings.Requests, concurrency);
                double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
                double cpu = (Environment.CpuUsage.TotalTime - cpuBefore).TotalSeconds;
                long allocated = GC.GetTotalAllocatedBytes(precise: true) - allocatedBefore;
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"| {concurrency} | {round} | {settings.Requests / seconds:N0} | {cpu * 1e6 / settings.Requests:0.0} µs | {(double)allocated / settings.Requests:0} B | {failed} | {ThreadPool.ThreadCount} |"));
            }
        }

        return 0;
    }

    private sealed class Settings
    {
        public Uri Server { get; private set; } = null!;

        public int Requests { get; private set; } = 200_000;

        public int Warmup { get; private set; } = 20_000;

        public IReadOnlyList<int> Concurrency { get; private set; } = [1, 50, 500];

        public int Rounds { get; private set; } = 3;

        public static Settings Parse(string[] args)
        {
            Settings settings = new();
            CommandLine.Parse(args, Usage, [], (name, value) =>
            {
                switch (name)
                {
                    case "--server":
                        settings.Server = Uri.TryCreate(value, UriKind.Absolute, out Uri? uri) && uri.Scheme == "coap"
                            ? uri
                            : throw new ArgumentException($"--server takes a coap:// URI, not '{value}'.");
                        return true;
                    case "--requests":
                        settings.Requests = CommandLine.ParseCount(name, value, 1);
                        return true;
                    case "--warmup":
                        settings.Warmup = CommandLine.ParseCount(name, value, 0);
                        return true;
                    case "--concurrency":
                        settings.Concurrency = CommandLine.ParseCounts(name, value, 1);
                        return true;
                    case "--rounds":
                        settings.Rounds = CommandLine.ParseCount(name, value, 1);
                        return true;
                    default:
                        return false;
                }
            });

            return settings.Server is not null ? settings : throw new ArgumentException($"--server is required.\n{Usage}");
        }
    }
}
