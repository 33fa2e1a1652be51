using System.Diagnostics;
using System.Globalization;
using System.Net;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Server;

namespace CoapNet.Scenarios;

/// <summary>
/// The thesis's transmission experiment turned the right way round (SEEDS-DIGEST 3.1): N clients
/// trickle a request at 4 bytes per second while a fast client measures what that costs everyone
/// else. Also the server's memory per idle connection. Measures and prints; asserts nothing.
/// </summary>
internal static class SlowSendersScenario
{
    // Lets the server finish with the last CSMs and park every read loop before memory is read.
    private static readonly TimeSpan Settle = TimeSpan.FromSeconds(2);

    public static async Task<int> RunAsync(SlowSendersOptions options)
    {
        Console.WriteLine($"slow-senders: N = {string.Join(", ", options.Connections)}; {options.Requests} sequential GET /hello per run after {options.Warmup} warm-up; "
            + $"{options.Rounds} rounds; server MaxConnections {options.MaxConnections}; {Environment.ProcessorCount} cores, .NET {Environment.Version}, "
            + $"{(System.Runtime.GCSettings.IsServerGC ? "server" : "workstation")} GC; ulimit -n must exceed the largest N + a few (the peer process holds N sockets, this one N + the listener)");
        Console.WriteLine();
        Console.WriteLine("round  N      held  trickled B  p50 us   p99 us   max us   failed  managed B/conn  RSS B/conn  managed B/conn trickling  load1");
        List<RunResult> results = [];
        for (int round = 1; round <= options.Rounds; round++)
        {
            foreach (int n in options.Connections)
            {
                double load = await LoadAverage.WaitForQuietAsync(options.MaxLoad, options.MaxWaitSeconds);
                RunResult result = await RunOnceAsync(n, options) with { Round = round, Load = load };
                results.Add(result);
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"{round,-6} {n,-6} {result.Held,-5} {result.Trickled,-10} {result.P50,-8:0} {result.P99,-8:0} {result.Max,-8:0} {result.Failed,-7} {Show(result.ManagedPerConnection),-15} {Show(result.RssPerConnection),-11} {Show(result.TricklingPerConnection),-25} {load:0.00}"));
            }
        }

        PrintSummary(options, results);
        return 0;
    }

    private static async Task<RunResult> RunOnceAsync(int n, SlowSendersOptions options)
    {
        await using CoapServer server = new(new CoapServerOptions
        {
            Connections = new CoapConnectionOptions { MaxConnections = options.MaxConnections },
        }.Listen("coap+tcp", new IPEndPoint(IPAddress.Loopback, 0)));
        server.MapGet("/hello", _ => CoapResponse.Content("Hello, CoAP!"));
        await server.StartAsync();
        int port = server.LocalEndPoints[0].Port;
        Uri hello = new($"coap+tcp://127.0.0.1:{port}/hello");

        await using CoapClient client = new();
        long[] latencies = new long[options.Requests];
        _ = await MeasureAsync(client, hello, new long[options.Warmup]);

        // Before: the server with the fast client's connection open and warm.
        (long managedBefore, long rssBefore) = Memory.Collect();
        using SlowSenderProcess? peers = n == 0 ? null : await SlowSenderProcess.StartAsync(port, n, options.RunSeconds);
        int held = peers?.Open ?? 0;
        await Task.Delay(Settle);
        (long managedIdle, long rssIdle) = Memory.Collect();

        if (peers is not null)
        {
            // Every slow connection now has the first bytes of a frame it will not finish within the run.
            await peers.StartTrickleAsync();
            await Task.Delay(Settle);
        }

        int failed = await MeasureAsync(client, hello, latencies);
        (long managedTrickling, _) = Memory.Collect();
        int trickled = peers is null ? 0 : await peers.StopAsync();
        Array.Sort(latencies);
        return new RunResult
        {
            N = n,
            Held = held,
            Trickled = trickled,
            P50 = Stats.ToMicroseconds(Stats.Percentile(latencies, 0.50)),
            P99 = Stats.ToMicroseconds(Stats.Percentile(latencies, 0.99)),
            Max = Stats.ToMicroseconds(latencies[^1]),
            Failed = failed,
            ManagedPerConnection = held == 0 ? null : (double)(managedIdle - managedBefore) / held,
            RssPerConnection = held == 0 ? null : (double)(rssIdle - rssBefore) / held,
            TricklingPerConnection = held == 0 ? null : (double)(managedTrickling - managedBefore) / held,
        };
    }

    /// <summary>Sequential GETs; each latency (Stopwatch ticks) goes into <paramref name="latencies"/>.</summary>
    /// <returns>How many did not come back 2.05 (counted, not asserted: a benchmark measures).</returns>
    private static async Task<int> MeasureAsync(CoapClient client, Uri uri, long[] latencies)
    {
        int failed = 0;
        for (int i = 0; i < latencies.Length; i++)
        {
            long start = Stopwatch.GetTimestamp();
            try
            {
                CoapResponse response = await client.GetAsync(uri);
                if (response.Code != CoapCode.Content)
                {
                    failed++;
                }
            }
            catch (CoapException)
            {
                failed++;
            }

            latencies[i] = Stopwatch.GetTimestamp() - start;
        }

        return failed;
    }

    private static void PrintSummary(SlowSendersOptions options, List<RunResult> results)
    {
        Console.WriteLine();
        Console.WriteLine($"Medians over {options.Rounds} rounds (p99 ratio: against N = 0 of the same rounds):");
        Console.WriteLine();
        Console.WriteLine("| slow connections N | held | bytes each trickled | fast client p50 | p99 | p99 / p99 at N = 0 | max | failed | server managed heap per idle connection | RSS per idle connection | managed heap per trickling connection | 1-min load at run starts |");
        Console.WriteLine("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
        double? baseP99 = results.Any(r => r.N == 0) ? Median(results.Where(r => r.N == 0).Select(r => r.P99)) : null;
        foreach (int n in options.Connections.Distinct())
        {
            List<RunResult> runs = [.. results.Where(r => r.N == n)];
            double p99 = Median(runs.Select(r => r.P99));
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"| {n:N0} | {Median(runs.Select(r => (double)r.Held)):N0} | {Median(runs.Select(r => (double)r.Trickled)):N0} | {Median(runs.Select(r => r.P50)):N0} us | {p99:N0} us | {(baseP99 is double b ? (p99 / b).ToString("0.00", CultureInfo.InvariantCulture) + "x" : "n/a")} | "
                + $"{Median(runs.Select(r => r.Max)):N0} us | {runs.Sum(r => r.Failed)} | {ShowMedian(runs.Select(r => r.ManagedPerConnection))} | {ShowMedian(runs.Select(r => r.RssPerConnection))} | "
                + $"{ShowMedian(runs.Select(r => r.TricklingPerConnection))} | {string.Join(" ", runs.Select(r => r.Load.ToString("0.00", CultureInfo.InvariantCulture)))} |"));
        }
    }

    private static double Median(IEnumerable<double> values)
    {
        double[] sorted = [.. values.Order()];
        return sorted.Length == 0 ? double.NaN : sorted.Length % 2 == 1 ? sorted[sorted.Length / 2] : (sorted[(sorted.Length / 2) - 1] + sorted[sorted.Length / 2]) / 2;
    }

    private static string ShowMedian(IEnumerable<double?> values)
    {
        double[] present = [.. values.Where(v => v.HasValue).Select(v => v!.Value)];
        return present.Length == 0 ? "n/a" : Show(Median(present));
    }

    private static string Show(double? bytes) => bytes is double b ? b.ToString("N0", CultureInfo.InvariantCulture) + " B" : "n/a";

    private sealed record RunResult
    {
        public int Round { get; init; }

        public int N { get; init; }

        public int Held { get; init; }

        public int Trickled { get; init; }

        public double P50 { get; init; }

        public double P99 { get; init; }

        public double Max { get; init; }

        public int Failed { get; init; }

        public double? ManagedPerConnection { get; init; }

        public double? RssPerConnection { get; init; }

        public double? TricklingPerConnection { get; init; }

        public double Load { get; init; }
    }
}
