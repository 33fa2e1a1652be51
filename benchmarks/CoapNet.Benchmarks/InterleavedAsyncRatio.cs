using System.Diagnostics;
using System.Globalization;
using CoapNet.Scenarios;
using ScenarioCommandLine = CoapNet.Scenarios.CommandLine;

namespace CoapNet.Benchmarks;

/// <summary>
/// The async/sync ratio of the thesis matrix's stream rows, timed interleaved in one process: batches of the
/// synchronous and the asynchronous method alternate (A B B A), so drift and other processes' load fall on
/// both sides alike, and each side's figure is the minimum (and the median) over its batches.
/// </summary>
/// <remarks>
/// BenchmarkDotNet times each case in its own process, minutes apart. On the 2-vCPU guest the results were
/// taken on, two such cases of the very same code differed by up to 40%, which hides a 1.25x bound per cell.
/// This runs the same <see cref="ThesisMatrixBenchmarks"/> methods on the same instance, so the only
/// difference between the two sides is the entry point. It measures and prints; it asserts nothing.
/// <c>dotnet run -c Release --project benchmarks/CoapNet.Benchmarks -- interleaved-async [--batches 60] [--batch-ms 10]</c>
/// </remarks>
internal static class InterleavedAsyncRatio
{
    public const string Command = "interleaved-async";

    private const string Usage = """
        interleaved-async [--batches 60] [--batch-ms 10]
          --batches   timed batches per side and cell
          --batch-ms  about how long one batch runs
        """;

    private static readonly int[] Cells = [0, 1024, 4096, 65536, 131072];

    public static int Run(string[] args)
    {
        int batches = 60;
        double batchMilliseconds = 10;
        ScenarioCommandLine.Parse(args, Usage, [], (name, value) =>
        {
            switch (name)
            {
                case "--batches":
                    batches = ScenarioCommandLine.ParseCount(name, value, 1);
                    return true;
                case "--batch-ms":
                    batchMilliseconds = ScenarioCommandLine.ParseCount(name, value, 1);
                    return true;
                default:
                    return false;
            }
        });

        Console.WriteLine($"# Interleaved async/sync, {batches} batches per side of about {batchMilliseconds} ms each; ns per call (min, median); ratio = async / sync");
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"# {DateTime.UtcNow:yyyy-MM-dd HH:mm} UTC, {Environment.ProcessorCount} cores, .NET {Environment.Version}, load {LoadAverage.Read():F2}"));
        Console.WriteLine("| options | payload B | DeserializeStream | DeserializeAsync | read ratio (min) | read ratio (median) | SerializeStream | SerializeAsync | write ratio (min) | write ratio (median) |");
        Console.WriteLine("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        double worstRead = 0;
        double worstWrite = 0;
        foreach (int options in Cells)
        {
            foreach (int payload in Cells)
            {
                ThesisMatrixBenchmarks cell = new() { AmountOfOptions = options, LengthOfPayload = payload };
                cell.Setup();
                try
                {
                    (Side readSync, Side readAsync) = Pair(
                        () => cell.DeserializeStream(),
                        () => Complete(cell.DeserializeAsync()),
                        batches,
                        batchMilliseconds);
                    (Side writeSync, Side writeAsync) = Pair(
                        cell.SerializeStream,
                        () => Complete(cell.SerializeAsync()),
                        batches,
                        batchMilliseconds);
                    double read = readAsync.Min / readSync.Min;
                    double write = writeAsync.Min / writeSync.Min;
                    worstRead = Math.Max(worstRead, read);
                    worstWrite = Math.Max(worstWrite, write);
                    Console.WriteLine(string.Create(
                        CultureInfo.InvariantCulture,
                        $"| {options:N0} | {payload:N0} | {readSync} | {readAsync} | {read:F2}x | {readAsync.Median / readSync.Median:F2}x | {writeSync} | {writeAsync} | {write:F2}x | {writeAsync.Median / writeSync.Median:F2}x |"));
                }
                finally
                {
                    cell.Cleanup();
                }
            }
        }

        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"# worst ratio of minimums: read {worstRead:F2}x, write {worstWrite:F2}x; load {LoadAverage.Read():F2}"));
        return 0;
    }

    /// <summary>True when the arguments ask for this harness instead of BenchmarkDotNet.</summary>
    public static bool IsRequested(string[] args) => args.Length > 0 && args[0] == Command;

    private static void Complete<T>(ValueTask<T> task) => task.GetAwaiter().GetResult();

    private static void Complete(ValueTask task) => task.GetAwaiter().GetResult();

    /// <summary>Times <paramref name="batches"/> batches of each action, alternating A B B A, after a warmup that also sizes the batch.</summary>
    internal static (Side Sync, Side Async) Pair(Action sync, Action async, int batches, double batchMilliseconds)
    {
        // Warm both paths past tiering (tier-0, then tier-1 after 30 calls plus a 100 ms background delay)
        // before sizing the batch, so neither the JIT nor tier-0 code is timed.
        Warm(sync);
        Warm(async);
        long calls = CallsPerBatch(sync, batchMilliseconds);

        double[] syncTimes = new double[batches];
        double[] asyncTimes = new double[batches];
        for (int i = 0; i < batches; i++)
        {
            if (i % 2 == 0)
            {
                syncTimes[i] = Time(sync, calls);
                asyncTimes[i] = Time(async, calls);
            }
            else
            {
                asyncTimes[i] = Time(async, calls);
                syncTimes[i] = Time(sync, calls);
            }
        }

        return (new Side(syncTimes), new Side(asyncTimes));
    }

    private static void Warm(Action action)
    {
        long start = Stopwatch.GetTimestamp();
        int calls = 0;
        while (calls < 100 || Stopwatch.GetElapsedTime(start).TotalMilliseconds < 300)
        {
            action();
            calls++;
        }
    }

    private static long CallsPerBatch(Action action, double batchMilliseconds)
    {
        long calls = 1;
        while (true)
        {
            double nanoseconds = Time(action, calls) * calls;
            if (nanoseconds >= batchMilliseconds * 1e6 / 4 || calls >= 1L << 30)
            {
                return Math.Max(1, (long)(calls * (batchMilliseconds * 1e6 / Math.Max(nanoseconds, 1))));
            }

            calls *= 2;
        }
    }

    /// <summary>Nanoseconds per call over <paramref name="calls"/> calls.</summary>
    private static double Time(Action action, long calls)
    {
        long start = Stopwatch.GetTimestamp();
        for (long i = 0; i < calls; i++)
        {
            action();
        }

        return Stopwatch.GetElapsedTime(start).TotalNanoseconds / calls;
    }

    /// <summary>One side's batch times, in ns per call.</summary>
    internal readonly struct Side
    {
        public Side(double[] times)
        {
            Array.Sort(times);
            Min = times[0];
            Median = times[times.Length / 2];
        }

        public double Min { get; }

        public double Median { get; }

        public override string ToString() => string.Create(CultureInfo.InvariantCulture, $"{Min:N1} ({Median:N1})");
    }
}
