namespace CoapNet.Messaging;

/// <summary>
/// Lets at most a number of log lines through per second and counts the rest, so a storm of bad input
/// costs a bounded number of lines (and their formatting) instead of one per datagram or per connection. Safe
/// from many threads (a datagram receive loop, every connection's read loop): at a window's turn a racing
/// caller may count into the old or the new window, so the counts are approximate, never unbounded. Public so that a
/// transport or stage in a package of its own logs what peers cause as the built-in ones do.
/// </summary>
/// <param name="time">The clock whose seconds are counted.</param>
/// <param name="perSecond">The most lines a second.</param>
public sealed class LogRateLimiter(TimeProvider time, int perSecond)
{
    private readonly long _window = time.TimestampFrequency;
    private long _windowStart;
    private bool _started;
    private int _inWindow;
    private long _suppressed;

    /// <summary>True when a line may be written now; <paramref name="suppressedBefore"/> is how many were held back since the last one that was.</summary>
    /// <param name="suppressedBefore">How many lines were held back before this one; 0 when it may not be written.</param>
    /// <returns>Whether a line may be written now.</returns>
    public bool TryAcquire(out long suppressedBefore)
    {
        long now = time.GetTimestamp();
        if (!_started || now - _windowStart >= _window)
        {
            _started = true;
            _windowStart = now;
            _inWindow = 0;
        }

        if (Interlocked.Increment(ref _inWindow) <= perSecond)
        {
            suppressedBefore = Interlocked.Exchange(ref _suppressed, 0);
            return true;
        }

        Interlocked.Increment(ref _suppressed);
        suppressedBefore = 0;
        return false;
    }
}
