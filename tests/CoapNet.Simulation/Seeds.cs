namespace CoapNet.Simulation;

/// <summary>Independent seeds derived from one, so every random source of a run follows from the run's seed alone.</summary>
public static class Seeds
{
    /// <summary>The seed of stream <paramref name="stream"/> of a run seeded with <paramref name="seed"/> (SplitMix64's finalizer over both).</summary>
    /// <param name="seed">The run's seed.</param>
    /// <param name="stream">Which of the run's random sources.</param>
    /// <returns>A non-negative seed for <see cref="Random(int)"/>, whose sequence for a given seed is the same on every .NET version.</returns>
    public static int Derive(int seed, int stream)
    {
        ulong z = ((ulong)(uint)seed << 32) + (uint)stream + 0x9E3779B97F4A7C15UL;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
        z ^= z >> 31;
        return (int)(z & int.MaxValue);
    }
}
