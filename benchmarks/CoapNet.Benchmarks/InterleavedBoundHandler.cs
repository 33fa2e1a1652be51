using System.Globalization;
using CoapNet.Scenarios;
using ScenarioCommandLine = CoapNet.Scenarios.CommandLine;

namespace CoapNet.Benchmarks;

/// <summary>
/// The bound handler against the plain ones of <see cref="BoundHandlerBenchmarks"/>, timed interleaved in one process
/// (batches alternate A B B A, each side's figure the minimum and the median over its batches) so that other processes'
/// load falls on both sides alike, with the bytes each call allocates (GC.GetAllocatedBytesForCurrentThread). The binding
/// layer's cost is Bound minus PlainWithSameEncoder, which writes the same CBOR with the same contract.
/// <c>dotnet run -c Release --project benchmarks/CoapNet.Benchmarks -- interleaved-bound [--batches 60] [--batch-ms 10]</c>
/// </summary>
internal static class InterleavedBoundHandler
{
    public const string Command = "interleaved-bound";

    private const string Usage = """
        interleaved-bound [--batches 60] [--batch-ms 10]
          --batches   timed batches per side
          --batch-ms  about how long one batch runs
        """;

    public static bool IsRequested(string[] args) => args.Length > 0 && args[0] == Command;

    public static int Run(string[] args)
    {
        int batches = 60;
        double batchMilliseconds = 10;
        try
        {
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
        }
        catch (ArgumentException exception)
        {
            Console.Error.WriteLine(exception.Message);
            return 2;
        }

        BoundHandlerBenchmarks bench = new();

        // Past tiering and dynamic PGO for all three first: the first pair timed otherwise runs partly on early code.
        foreach (Action action in (Action[])[() => bench.PlainWithSameEncoder(), () => bench.Bound(), () => bench.PlainHandWritten()])
        {
            for (System.Diagnostics.Stopwatch watch = System.Diagnostics.Stopwatch.StartNew(); watch.ElapsedMilliseconds < 2000;)
            {
                action();
            }
        }

        Console.WriteLine($"# Bound handler against plain handlers, interleaved, {batches} batches per side of about {batchMilliseconds} ms; ns per call: min (median)");
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"# {DateTime.UtcNow:yyyy-MM-dd HH:mm} UTC, {Environment.ProcessorCount} cores, .NET {Environment.Version}, load {LoadAverage.Read():F2}"));
        Console.WriteLine("| pair | plain | bound | bound - plain (min) | bound - plain (median) | plain B/call | bound B/call | bound - plain B |");
        Console.WriteLine("|---|---:|---:|---:|---:|---:|---:|---:|");
        Row("same encoder (the binding layer)", () => bench.PlainWithSameEncoder(), () => bench.Bound(), batches, batchMilliseconds);
        Row("hand-written CborWriter (today)", () => bench.PlainHandWritten(), () => bench.Bound(), batches, batchMilliseconds);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"# load {LoadAverage.Read():F2} at the end"));
        return 0;
    }

    private static void Row(string name, Action plain, Action bound, int batches, double batchMilliseconds)
    {
        (InterleavedAsyncRatio.Side plainSide, InterleavedAsyncRatio.Side boundSide) = InterleavedAsyncRatio.Pair(plain, bound, batches, batchMilliseconds);
        double plainBytes = BytesPerCall(plain);
        double boundBytes = BytesPerCall(bound);
        Console.WriteLine(string.Create(
            CultureInfo.InvariantCulture,
            $"| {name} | {plainSide} | {boundSide} | {boundSide.Min - plainSide.Min:N1} | {boundSide.Median - plainSide.Median:N1} | {plainBytes:N0} | {boundBytes:N0} | {boundBytes - plainBytes:N0} |"));
    }

    private static double BytesPerCall(Action action)
    {
        const int Calls = 100_000;
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < Calls; i++)
        {
            action();
        }

        return (double)(GC.GetAllocatedBytesForCurrentThread() - before) / Calls;
    }
}
