namespace CoapNet.Server;

/// <summary>
/// Whether one handler may run on the thread that received its request (inline) instead of being handed to another
/// thread (a synchronous handler's lane, an async handler's dispatch block): only once it has shown it returns quickly.
/// A handler starts off the receiving thread; after <see cref="FirstStreak"/> calls in a row that each returned within
/// <see cref="QuickLimit"/> it runs inline, at most the server's MaxDegreeOfParallelism calls at once and only while
/// none of its calls waits on its lane (a later request must not overtake an earlier one). An inline call that took
/// longer sends the handler back to its lane, and it must then show twice as many quick calls (up to
/// <see cref="MaxStreak"/>) before it runs inline again, so a handler that blocks now and then (a cache miss that
/// reaches a database) holds up the receiving thread more and more rarely.
/// </summary>
/// <remarks>
/// What inline saves is the hand-off: a wake-up of another thread and the receiving thread's own sleep, several
/// microseconds each on an idle server (issue 25). What it risks is the receiving thread held up by a handler that
/// blocks: the transport hands a stalled socket to a new thread (<see cref="Transports.UdpTransport"/>), a stream
/// connection a stalled read loop's frames to a new read loop (<c>StreamConnection</c>), and this
/// gate keeps the handler from stalling it again. A call's time includes any pause of the whole process (a GC, the
/// machine's other load), so a quick handler may be sent back now and then: that costs only its next calls' hand-offs.
/// The counters are updated without a lock from any thread; a lost update only moves a decision by a call.
/// </remarks>
internal sealed class InlineGate
{
    /// <summary>Quick calls in a row a handler shows before it first runs inline.</summary>
    internal const int FirstStreak = 16;

    /// <summary>The most quick calls in a row ever asked of a handler that was sent back.</summary>
    internal const int MaxStreak = 1024;

    /// <summary>How long a call may take and still count as quick: 1 ms.</summary>
    internal static readonly TimeSpan QuickLimit = TimeSpan.FromMilliseconds(1);

    private int _required = FirstStreak;
    private int _streak;
    private int _inline;
    private int _waiting;

    /// <summary>True once the handler has shown enough quick calls to run inline.</summary>
    public bool Trusted => Volatile.Read(ref _streak) >= Volatile.Read(ref _required);

    /// <summary>
    /// Takes an inline slot: true when the handler is trusted, fewer than <paramref name="parallelism"/> of its calls run
    /// inline and none waits on its lane; the caller then runs it and calls <see cref="ExitInline"/>.
    /// </summary>
    public bool TryEnterInline(int parallelism)
    {
        if (!Trusted || Volatile.Read(ref _waiting) != 0)
        {
            return false;
        }

        if (Interlocked.Increment(ref _inline) > parallelism)
        {
            Interlocked.Decrement(ref _inline);
            return false;
        }

        return true;
    }

    /// <summary>An inline call returned, within <see cref="QuickLimit"/> or not (<paramref name="quick"/>).</summary>
    public void ExitInline(bool quick)
    {
        Interlocked.Decrement(ref _inline);
        if (!quick)
        {
            Volatile.Write(ref _required, Math.Min(Volatile.Read(ref _required) * 2, MaxStreak));
            Volatile.Write(ref _streak, 0);
        }
    }

    /// <summary>A call ran off the receiving thread (on its lane or the dispatch block), within <see cref="QuickLimit"/> or not.</summary>
    public void Record(bool quick)
    {
        if (!quick)
        {
            Volatile.Write(ref _streak, 0);
        }
        else if (Volatile.Read(ref _streak) < MaxStreak)
        {
            Volatile.Write(ref _streak, Volatile.Read(ref _streak) + 1);
        }
    }

    /// <summary>A call was queued on the handler's lane; inline calls wait until it has run (<see cref="Dequeued"/>).</summary>
    public void Queued() => Interlocked.Increment(ref _waiting);

    /// <summary>A queued call left the lane's queue to run.</summary>
    public void Dequeued() => Interlocked.Decrement(ref _waiting);
}
