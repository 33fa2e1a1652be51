using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace CoapNet.Tests.Infrastructure;

/// <summary>
/// The suite's one way to wait for a state that other threads bring about (a pool thread's answer, a
/// counter draining). The deadline is a liveness bound, not a timing goal: it only keeps a broken build
/// from hanging, and when it passes the test fails with what it was waiting for.
/// </summary>
public static class Wait
{
    /// <summary>How long a wait lasts before the test fails, unless the caller gives its own bound.</summary>
    public static readonly TimeSpan DefaultBound = TimeSpan.FromSeconds(30);

    /// <summary>Blocks until <paramref name="condition"/> holds; throws <see cref="TimeoutException"/> naming it once <paramref name="within"/> (default <see cref="DefaultBound"/>) has passed.</summary>
    /// <param name="condition">The state to reach; asked repeatedly, from this thread.</param>
    /// <param name="what">What is awaited, in words, for the failure message; the condition's source text when omitted.</param>
    /// <param name="within">The liveness bound.</param>
    /// <param name="expression">Filled in by the compiler: the source text of <paramref name="condition"/>.</param>
    public static void Until(Func<bool> condition, string? what = null, TimeSpan? within = null, [CallerArgumentExpression(nameof(condition))] string expression = "")
    {
        TimeSpan bound = within ?? DefaultBound;
        Stopwatch waited = Stopwatch.StartNew();
        while (!condition())
        {
            if (waited.Elapsed > bound)
            {
                throw Failed(what, expression, bound);
            }

            Thread.Sleep(1);
        }
    }

    /// <summary>Waits asynchronously until <paramref name="condition"/> holds; throws <see cref="TimeoutException"/> naming it once <paramref name="within"/> (default <see cref="DefaultBound"/>) has passed.</summary>
    /// <param name="condition">The state to reach; asked repeatedly.</param>
    /// <param name="what">What is awaited, in words, for the failure message; the condition's source text when omitted.</param>
    /// <param name="within">The liveness bound.</param>
    /// <param name="expression">Filled in by the compiler: the source text of <paramref name="condition"/>.</param>
    public static async Task UntilAsync(Func<bool> condition, string? what = null, TimeSpan? within = null, [CallerArgumentExpression(nameof(condition))] string expression = "")
    {
        TimeSpan bound = within ?? DefaultBound;
        Stopwatch waited = Stopwatch.StartNew();
        while (!condition())
        {
            if (waited.Elapsed > bound)
            {
                throw Failed(what, expression, bound);
            }

            await Task.Delay(5);
        }
    }

    /// <summary>Waits until <paramref name="condition"/>, asked asynchronously (of a browser's page, say), holds; throws <see cref="TimeoutException"/> naming it once <paramref name="within"/> (default <see cref="DefaultBound"/>) has passed.</summary>
    /// <param name="condition">The state to reach; asked repeatedly, one question at a time.</param>
    /// <param name="what">What is awaited, in words, for the failure message; the condition's source text when omitted.</param>
    /// <param name="within">The liveness bound.</param>
    /// <param name="expression">Filled in by the compiler: the source text of <paramref name="condition"/>.</param>
    public static async Task UntilAsync(Func<Task<bool>> condition, string? what = null, TimeSpan? within = null, [CallerArgumentExpression(nameof(condition))] string expression = "")
    {
        TimeSpan bound = within ?? DefaultBound;
        Stopwatch waited = Stopwatch.StartNew();
        while (!await condition())
        {
            if (waited.Elapsed > bound)
            {
                throw Failed(what, expression, bound);
            }

            await Task.Delay(20);
        }
    }

    private static TimeoutException Failed(string? what, string expression, TimeSpan bound)
        => new($"Waited {bound.TotalSeconds:0.###} s for {what ?? expression}, and it never came.");
}
