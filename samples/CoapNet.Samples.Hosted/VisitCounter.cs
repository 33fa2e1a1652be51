namespace CoapNet.Samples.Hosted;

/// <summary>A singleton: counts every greeting the server has given.</summary>
public sealed class VisitCounter
{
    private int _visits;

    /// <summary>Counts one more visit.</summary>
    /// <returns>The number of visits so far.</returns>
    public int Next() => Interlocked.Increment(ref _visits);
}
