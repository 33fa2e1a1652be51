using System.Globalization;
using CoapNet.Scenarios;

namespace CoapNet.Benchmarks;

/// <summary>
/// The bound handler against the plain ones of <see cref="BoundHandlerBenchmarks"/>, timed interleaved in one process
/// (batches alternate A B B A, each side's figure the minimum and the median over its batches) so that other processes'
/// load falls on both sides alike, with the bytes each call allocates (GC.GetAllocatedBytesForCurrentThread). The binding
/// layer's cost is Bound minus PlainWithSameEncoder, which writes the same CBOR with the same contract.
/// <c>dotnet run -c Release --project benchmarks/CoapNet.Benchmarks -- interleaved-bound</c>
/// </summary>
internal static class InterleavedBoundHandler
{
    public const string Command = "interleaved-bound";

    // 100 batches of about 10 ms per side: the interleaved-async harness's batch length, with more batches for a stable minimum.
    private const int Batches = 100;
    private const double BatchMilliseconds = 10;

    public static bool IsRequested(string[] args) => args.Length > 0 && args[0] == Command;

    public static int Run()
    {
        BoundHandlerBenchmarks bench = new();

        // Past tiering and dynamic PGO for all three first: the first pair timed otherwise runs partly on early code.
        foreach (Action action in (Action[])[() => bench.PlainWithSameEncoder(), () => bench.Bound(), () => bench.PlainHandWritten()])
        {
            for (System.Diagnostics.Stopwatch watch = System.Diagnostics.Stopwatch.StartNew(); watch.ElapsedMilliseconds < 2000;)
            {
                action();
            }
        }

        Console.WriteLine($"# Bound handler against plain handlers, interleaved, {Batches} batches per side of about {BatchMilliseconds} ms; ns per call: min (median)");
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"# {DateTime.UtcNow:yyyy-MM-dd HH:mm} UTC, {Environment.ProcessorCount} cores, .NET {Environment.Version}, load {LoadAverage.Read():F2}"));
        Console.WriteLine("| pair | plain | bound | bound - plain (min) | bound - plain (median) | plain B/call | bound B/call | bound - plain B |");
        Console.WriteLine("|---|---:|---:|---:|---:|---:|---:|---:|");
        Row("same encoder (the binding layer)", () => bench.PlainWithSameEncoder(), () => bench.Bound());
        Row("hand-written CborWriter (today)", () => bench.PlainHandWritten(), () => bench.Bound());
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"# load {LoadAverage.Read():F2} at the end"));
        return 0;
    }

    private static void Row(string name, Action plain, Action bound)
    {
        (InterleavedAsyncRatio.Side plainSide, InterleavedAsyncRatio.Side boundSide) = InterleavedAsyncRatio.Pair(plain, bound, Batches, BatchMilliseconds);
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
