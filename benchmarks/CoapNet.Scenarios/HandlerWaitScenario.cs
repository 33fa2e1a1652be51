using System.Diagnostics;
using System.Globalization;
using System.Net;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Server;

namespace CoapNet.Scenarios;

/// <summary>
/// The thesis question on the server (issue 11 item 4): does an async handler serve more? A resource waits
/// (Thread.Sleep in the sync form, await Task.Delay in the async form, standing in for a database call); N
/// requests at several concurrencies measure the total time against the ideal (N x wait / concurrency), while
/// two probes time a fast route alongside: one written as a synchronous lambda, as most users write GET
/// /hello, and one as a ValueTask that completes at once. Measures and prints; asserts nothing.
/// </summary>
internal static class HandlerWaitScenario
{

    public const string Usage = """
        handler-wait [--requests 1000] [--concurrency 5,50,500] [--wait-ms 100] [--forms sync,async] [--probe-ms 5] [--rounds 3]
          --requests     requests to the waiting resource per round
          --concurrency  how many of them are in flight at once, one server (and set of rounds) each
          --wait-ms      how long the handler waits
          --forms        sync (Thread.Sleep) and/or async (await Task.Delay)
          --probe-ms     the pause between two requests of each fast-route probe
          --rounds       measured rounds per form and concurrency, after a warm-up of the same load
        The server runs with the options a user gets by default (MaxDegreeOfParallelism = processor count,
        MaxPendingRequests 1024); the load comes from one CoapClient with a 4 MiB socket receive buffer and NSTART
        raised to the concurrency, the two probes from one more on a socket of its own. Before the rounds, the same
        load with a 1 ms wait (at least 200 requests) runs again and again until a pass makes the JIT compile at most
        two methods: a server is measured in its steady state, not in its first seconds.
        """;

    public static async Task<int> RunAsync(string[] args)
    {
        Settings settings = Settings.Parse(args);
        CoapServerOptions defaults = new();
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"handler-wait: {settings.Requests} requests per round, {settings.Rounds} rounds after a warm-up, handler waits {settings.WaitMs} ms; {Environment.ProcessorCount} cores, .NET {Environment.Version}, "
            + $"{(System.Runtime.GCSettings.IsServerGC ? "server" : "workstation")} GC; server MaxDegreeOfParallelism {defaults.MaxDegreeOfParallelism} (the default: processor count), "
            + $"MaxPendingRequests {defaults.MaxPendingRequests}, SeparateResponseDelay {defaults.Endpoint.SeparateResponseDelay?.TotalSeconds:0.###} s; probes every {settings.ProbeMs} ms"));
        Console.WriteLine();
        Console.WriteLine("| form | concurrency | round | total | ideal | total / ideal | process CPU | failed | fast route (sync lambda) p50 / p99 / max, n | fast route (ValueTask) p50 / p99 / max, n | 1-min load |");
        Console.WriteLine("|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|");
        List<string> medians = [];
        foreach (string form in settings.Forms)
        {
            foreach (int concurrency in settings.Concurrency)
            {
                double ideal = settings.Requests * settings.WaitMs / 1000.0 / concurrency;
                double[] ratios = new double[settings.Rounds];
                List<long> syncProbe = [], asyncProbe = [];
                int round = 0;
                string warmUp = string.Empty;
                await RunRoundsAsync(form, concurrency, settings, (passes, methods) => warmUp = string.Create(CultureInfo.InvariantCulture, $"; warm-up {passes} passes, {methods} methods compiled"), result =>
                {
                    double load = LoadAverage.Read();
                    ratios[round++] = result.Seconds / ideal;
                    syncProbe.AddRange(result.SyncProbe);
                    asyncProbe.AddRange(result.AsyncProbe);
                    Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                        $"| {form} | {concurrency} | {round} | {result.Seconds:0.000} s | {ideal:0.000} s | {result.Seconds / ideal:0.00}x | {result.Cpu:0.000} s | {result.Failed} | {Show(result.SyncProbe)} | {Show(result.AsyncProbe)} | {load:0.00} |"));
                });
                Array.Sort(ratios);
                long[] syncAll = [.. syncProbe], asyncAll = [.. asyncProbe];
                Array.Sort(syncAll);
                Array.Sort(asyncAll);
                medians.Add(string.Create(CultureInfo.InvariantCulture,
                    $"{form} {concurrency}: median {ratios[(ratios.Length - 1) / 2]:0.00}x the ideal (best {ratios[0]:0.00}x, worst {ratios[^1]:0.00}x); fast route over all rounds {Show(syncAll)} (sync lambda), {Show(asyncAll)} (ValueTask){warmUp}"));
            }
        }

        Console.WriteLine();
        Console.WriteLine("Each form and concurrency over its rounds (fast route: p50 / p99 / max, n):");
        foreach (string median in medians)
        {
            Console.WriteLine(median);
        }

        return 0;
    }

    /// <summary>One server and its clients for <paramref name="form"/> at <paramref name="concurrency"/>: the warm-up, then each round's result to <paramref name="report"/>.</summary>
    private static async Task RunRoundsAsync(string form, int concurrency, Settings settings, Action<int, long> warmedUp, Action<RunResult> report)
    {
        // The handlers wait 1 ms during the warm-up (the same code, in a fraction of the time), then the full wait.
        TimeSpan wait = TimeSpan.FromMilliseconds(1);
        await using CoapServer server = new(new CoapServerOptions().Listen("coap", new IPEndPoint(IPAddress.Loopback, 0)));
        server.MapGet("/wait/sync", _ =>
        {
            Thread.Sleep(wait);
            return CoapResponse.Content("waited");
        });
        server.MapGet("/wait/async", async (_, cancellationToken) =>
        {
            await Task.Delay(wait, cancellationToken);
            return CoapResponse.Content("waited");
        });
        server.MapGet("/fast", _ => CoapResponse.Content("fast"));
        server.MapGet("/fast-async", (_, _) => ValueTask.FromResult(CoapResponse.Content("fast")));
        await server.StartAsync();
        string origin = $"coap://127.0.0.1:{server.LocalEndPoints[0].Port}";
        Uri waiting = new($"{origin}/wait/{form}");
        Uri fast = new($"{origin}/fast");
        Uri fastAsync = new($"{origin}/fast-async");

        // One client for the whole load, as a gateway would use: the answers to a run's requests come back within a
        // millisecond of each other, so its socket gets a 4 MiB receive buffer (capped by net.core.rmem_max; the
        // default 208 KiB drops some of 500 at once, each costing an ACK_TIMEOUT), and NSTART (RFC 7252 section 4.7)
        // is raised to the concurrency. One client is one receive thread; ten of them (one per 50 requests, as before
        // clients could size their buffers) kept this 2-core process switching between threads (perf: a fifth of
        // its samples in the scheduler), 1.14-1.26x the ideal at concurrency 500 against 1.11-1.12x with one.
        await using CoapClient load = new(new CoapClientOptions
        {
            Udp = { SocketReceiveBufferSize = 4 * 1024 * 1024 },
            Endpoint = new CoapEndpointOptions { TransmissionParameters = new CoapTransmissionParameters { NStart = concurrency } },
        });

        // Both probes share a client of their own (one more socket and receive thread), apart from the load's.
        await using CoapClient probes = new();
        (int passes, long methods) = await WarmUpAsync(load, probes, waiting, fast, fastAsync, concurrency);
        warmedUp(passes, methods);
        wait = TimeSpan.FromMilliseconds(settings.WaitMs);
        for (int round = 0; round < settings.Rounds; round++)
        {
            report(await MeasureAsync(load, probes, waiting, fast, fastAsync, concurrency, settings));
        }
    }

    /// <summary>
    /// The same load with a wait of 1 ms (at least 200 requests, so that its methods are called often enough for the
    /// JIT's optimized tier) and both probes, again and again until one pass compiles at most two methods (at most 40):
    /// without it, a round of 0.2 s runs on code the JIT is still replacing, on the same 2 cores, and a wait for
    /// the JIT to go quiet is not enough, since a method is promoted only after it has been called 30 times.
    /// </summary>
    /// <returns>The passes run and the methods compiled during them.</returns>
    private static async Task<(int Passes, long Methods)> WarmUpAsync(CoapClient load, CoapClient probes, Uri waiting, Uri fast, Uri fastAsync, int concurrency)
    {
        long first = System.Runtime.JitInfo.GetCompiledMethodCount();
        for (int pass = 1; ; pass++)
        {
            long before = System.Runtime.JitInfo.GetCompiledMethodCount();
            Task loadDone = RunLoadAsync(load, waiting, Math.Max(200, concurrency * 2), concurrency);
            await Task.WhenAll(loadDone, Probe(probes, fast, loadDone, 1), Probe(probes, fastAsync, loadDone, 1));

            // The tiering's call-counting delay (100 ms) starts over with each new method: give it time to promote.
            await Task.Delay(200);
            long compiled = System.Runtime.JitInfo.GetCompiledMethodCount() - before;
            if ((pass > 1 && compiled <= 2) || pass == 40)
            {
                return (pass, System.Runtime.JitInfo.GetCompiledMethodCount() - first);
            }
        }
    }

    private static async Task<RunResult> MeasureAsync(CoapClient load, CoapClient probes, Uri waiting, Uri fast, Uri fastAsync, int concurrency, Settings settings)
    {
        TimeSpan cpuBefore = Environment.CpuUsage.TotalTime;
        long start = Stopwatch.GetTimestamp();
        Task<int> loadDone = RunLoadAsync(load, waiting, settings.Requests, concurrency);
        Task<long[]> syncLatencies = Probe(probes, fast, loadDone, settings.ProbeMs);
        Task<long[]> asyncLatencies = Probe(probes, fastAsync, loadDone, settings.ProbeMs);
        int failed = await loadDone;
        double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
        double cpu = (Environment.CpuUsage.TotalTime - cpuBefore).TotalSeconds;
        return new RunResult(seconds, cpu, failed, await syncLatencies, await asyncLatencies);
    }

    /// <summary>Sends <paramref name="requests"/> GETs from <paramref name="client"/> with <paramref name="concurrency"/> in flight; returns how many did not come back 2.05.</summary>
    public static async Task<int> RunLoadAsync(CoapClient client, Uri uri, int requests, int concurrency)
    {
        int next = -1;
        int failed = 0;
        Task[] workers = new Task[concurrency];
        for (int w = 0; w < workers.Length; w++)
        {
            workers[w] = Task.Run(async () =>
            {
                while (Interlocked.Increment(ref next) < requests)
                {
                    if (!await TryGetAsync(client, uri))
                    {
                        Interlocked.Increment(ref failed);
                    }
                }
            });
        }

        await Task.WhenAll(workers);
        return failed;
    }

    /// <summary>Sequential GETs, <paramref name="pauseMs"/> apart, until <paramref name="until"/> completes (at least one); each latency in Stopwatch ticks, sorted.</summary>
    private static async Task<long[]> Probe(CoapClient client, Uri uri, Task until, int pauseMs)
    {
        List<long> latencies = [];
        do
        {
            long start = Stopwatch.GetTimestamp();
            if (await TryGetAsync(client, uri))
            {
                latencies.Add(Stopwatch.GetTimestamp() - start);
            }

            if (pauseMs > 0 && !until.IsCompleted)
            {
                await Task.Delay(pauseMs);
            }
        }
        while (!until.IsCompleted);
        long[] sorted = [.. latencies];
        Array.Sort(sorted);
        return sorted;
    }

    /// <summary>One GET of <paramref name="uri"/>: true when it was answered 2.05, false when it failed or got another answer.</summary>
    internal static async Task<bool> TryGetAsync(CoapClient client, Uri uri)
    {
        try
        {
            return (await client.GetAsync(uri)).Code == CoapCode.Content;
        }
        catch (CoapException)
        {
            return false;
        }
    }

    private static string Show(long[] sorted) => sorted.Length == 0
        ? "none answered"
        : string.Create(CultureInfo.InvariantCulture,
            $"{Stats.ToMicroseconds(Stats.Percentile(sorted, 0.50)) / 1000:0.00} / {Stats.ToMicroseconds(Stats.Percentile(sorted, 0.99)) / 1000:0.00} / {Stats.ToMicroseconds(sorted[^1]) / 1000:0.00} ms, {sorted.Length}");

    /// <param name="Cpu">The CPU time the process (server, clients and probes) used during the run, in seconds.</param>
    private sealed record RunResult(double Seconds, double Cpu, int Failed, long[] SyncProbe, long[] AsyncProbe);

    private sealed class Settings
    {
        public int Requests { get; private set; } = 1000;

        public IReadOnlyList<int> Concurrency { get; private set; } = [5, 50, 500];

        public int WaitMs { get; private set; } = 100;

        public IReadOnlyList<string> Forms { get; private set; } = ["sync", "async"];

        public int ProbeMs { get; private set; } = 5;

        public int Rounds { get; private set; } = 3;

        public static Settings Parse(string[] args)
        {
            Settings settings = new();
            CommandLine.Parse(args, Usage, [], (name, value) =>
            {
                switch (name)
                {
                    case "--requests":
                        settings.Requests = CommandLine.ParseCount(name, value, 1);
                        return true;
                    case "--concurrency":
                        settings.Concurrency = CommandLine.ParseCounts(name, value, 1);
                        return true;
                    case "--wait-ms":
                        settings.WaitMs = CommandLine.ParseCount(name, value, 0);
                        return true;
                    case "--forms":
                        string[] forms = value!.Split(',');
                        settings.Forms = forms.All(f => f is "sync" or "async") ? forms : throw new ArgumentException($"--forms takes sync and/or async, not '{value}'.");
                        return true;
                    case "--probe-ms":
                        settings.ProbeMs = CommandLine.ParseCount(name, value, 0);
                        return true;
                    case "--rounds":
                        settings.Rounds = CommandLine.ParseCount(name, value, 1);
                        return true;
                    default:
                        return false;
                }
            });

            return settings;
        }
    }
}
