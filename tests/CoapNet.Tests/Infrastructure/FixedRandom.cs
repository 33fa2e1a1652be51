namespace CoapNet.Tests.Infrastructure;

/// <summary>A random source that always draws the same value, so a retransmission policy's jitter is known.</summary>
/// <param name="value">What every draw returns, from 0 to 1.</param>
public sealed class FixedRandom(double value) : Random
{
    /// <inheritdoc/>
    public override double NextDouble() => value;

    /// <inheritdoc/>
    public override int Next(int minValue, int maxValue) => minValue;

    /// <inheritdoc/>
    protected override double Sample() => value;
}
