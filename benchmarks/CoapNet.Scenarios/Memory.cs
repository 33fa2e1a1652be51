namespace CoapNet.Scenarios;

/// <summary>This process's memory: the managed heap after a full collection, and the resident set.</summary>
internal static class Memory
{
    /// <summary>Collects fully (finalizers too), then reads the live managed heap and the RSS, in bytes.</summary>
    public static (long Managed, long Rss) Collect()
    {
        // Finalizers may free the last references to objects of connections that closed earlier.
        GC.Collect();
        GC.WaitForPendingFinalizers();
        long managed = GC.GetTotalMemory(forceFullCollection: true);
        return (managed, Rss());
    }

    /// <summary>The live managed heap after a blocking, compacting full collection (the GC's own count, without fragmentation).</summary>
    public static long LiveHeap()
    {
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        GC.WaitForPendingFinalizers();
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        GCMemoryInfo info = GC.GetGCMemoryInfo(GCKind.FullBlocking);
        return info.HeapSizeBytes - info.FragmentedBytes;
    }

    /// <summary>VmRSS, as the shell script samples it for the other servers; Environment.WorkingSet elsewhere.</summary>
    public static long Rss() => Status("VmRSS:");

    /// <summary>The peak resident set (VmHWM) since the process started or <see cref="ResetPeakRss"/>; the working set off Linux.</summary>
    public static long PeakRss() => Status("VmHWM:");

    /// <summary>Linux: writing 5 to clear_refs resets VmHWM to the current resident set; elsewhere nothing happens.</summary>
    public static void ResetPeakRss()
    {
        try
        {
            File.WriteAllText("/proc/self/clear_refs", "5");
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // Not Linux, or not allowed: the peak is then the process's peak so far.
        }
    }

    private static long Status(string key)
    {
        const string status = "/proc/self/status";
        if (File.Exists(status))
        {
            foreach (string line in File.ReadLines(status))
            {
                if (line.StartsWith(key, StringComparison.Ordinal))
                {
                    return long.Parse(line.AsSpan(key.Length).Trim().TrimEnd("kB").Trim(), System.Globalization.CultureInfo.InvariantCulture) * 1024;
                }
            }
        }

        return Environment.WorkingSet;
    }
}
