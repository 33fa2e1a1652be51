using System.Diagnostics;

namespace CoapNet.Scenarios;

/// <summary>What the scenarios compute from samples.</summary>
internal static class Stats
{
    /// <summary>The <paramref name="p"/> percentile (nearest rank) of samples sorted ascending.</summary>
    public static long Percentile(long[] sorted, double p) => sorted[Math.Clamp((int)Math.Ceiling(p * sorted.Length) - 1, 0, sorted.Length - 1)];

    /// <summary>Stopwatch ticks in microseconds.</summary>
    public static double ToMicroseconds(long ticks) => ticks * 1_000_000.0 / Stopwatch.Frequency;
}
