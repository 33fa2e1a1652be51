using System.Globalization;

namespace CoapNet.Scenarios;

/// <summary>Another process's CPU time, as Linux keeps it in /proc, for a server's CPU cost per request.</summary>
internal static class ProcessCpu
{
    /// <summary>Microseconds in one clock tick of /proc/PID/stat (USER_HZ, 100 on Linux).</summary>
    public const double MicrosecondsPerTick = 10_000.0;

    /// <summary>The utime + stime of all the threads of process <paramref name="pid"/>, in clock ticks (fields 14 and 15 of /proc/PID/stat).</summary>
    public static long Ticks(int pid)
    {
        // The command name (field 2) is in parentheses and may hold spaces: count fields after its closing one.
        string stat = File.ReadAllText($"/proc/{pid}/stat");
        string[] fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
        return long.Parse(fields[11], CultureInfo.InvariantCulture) + long.Parse(fields[12], CultureInfo.InvariantCulture);
    }
}
