using System.Globalization;

namespace CoapNet.Scenarios;

/// <summary>The machine's 1-minute load average, for waiting until a shared machine is quiet enough to measure.</summary>
internal static class LoadAverage
{
    private static readonly TimeSpan Poll = TimeSpan.FromSeconds(5);

    /// <summary>Waits until the 1-minute load is below <paramref name="maxLoad"/>, at most <paramref name="maxWaitSeconds"/>.</summary>
    /// <returns>The load when the wait ended (NaN where /proc/loadavg does not exist).</returns>
    public static async Task<double> WaitForQuietAsync(double maxLoad, int maxWaitSeconds)
    {
        DateTime giveUp = DateTime.UtcNow.AddSeconds(maxWaitSeconds);
        double load = Read();
        while (load >= maxLoad && DateTime.UtcNow < giveUp)
        {
            await Task.Delay(Poll);
            load = Read();
        }

        return load;
    }

    /// <summary>The 1-minute load average now (NaN where /proc/loadavg does not exist).</summary>
    public static double Read()
    {
        const string path = "/proc/loadavg";
        return File.Exists(path)
            ? double.Parse(File.ReadAllText(path).Split(' ')[0], CultureInfo.InvariantCulture)
            : double.NaN;
    }
}
