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

    // VmRSS, as the shell script samples it for the other servers; Environment.WorkingSet elsewhere.
    private static long Rss()
    {
        const string status = "/proc/self/status";
        if (File.Exists(status))
        {
            foreach (string line in File.ReadLines(status))
            {
                if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
                {
                    return long.Parse(line.AsSpan(6).Trim().TrimEnd("kB").Trim(), System.Globalization.CultureInfo.InvariantCulture) * 1024;
                }
            }
        }

        return Environment.WorkingSet;
    }
}
