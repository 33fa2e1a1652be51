namespace CoapNet.Tests.Infrastructure;

/// <summary>
/// The synchronization context of a single-threaded UI whose only thread is blocked in a synchronous
/// call: whatever is posted to it never runs. A library that posts to the caller's context from a
/// blocking call deadlocks under it; one that does not, completes. <see cref="PostCount"/> tells which.
/// </summary>
public sealed class BlockedThreadSynchronizationContext : SynchronizationContext
{
    private int _postCount;

    /// <summary>How many callbacks were posted or sent to this context.</summary>
    public int PostCount => Volatile.Read(ref _postCount);

    /// <inheritdoc/>
    public override void Post(SendOrPostCallback d, object? state) => Interlocked.Increment(ref _postCount);

    /// <inheritdoc/>
    public override void Send(SendOrPostCallback d, object? state) => Interlocked.Increment(ref _postCount);

    /// <inheritdoc/>
    public override SynchronizationContext CreateCopy() => this;
}
