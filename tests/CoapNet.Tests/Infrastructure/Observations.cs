using CoapNet.Messages;

namespace CoapNet.Tests.Infrastructure;

/// <summary>Reading an observation's <c>await foreach</c> by hand, one response at a time.</summary>
internal static class Observations
{
    /// <summary>The next response of <paramref name="observation"/>; fails when the sequence ended, or nothing came within <see cref="Wait.DefaultBound"/> (a liveness bound).</summary>
    public static async Task<CoapResponse> NextAsync(this IAsyncEnumerator<CoapResponse> observation)
    {
        (await observation.MoveNextAsync().AsTask().WaitAsync(Wait.DefaultBound)).Should().BeTrue("the observation goes on");
        return observation.Current;
    }
}
