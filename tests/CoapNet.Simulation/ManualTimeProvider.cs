namespace CoapNet.Simulation;

/// <summary>
/// A <see cref="TimeProvider"/> whose clock moves only when a test calls <see cref="Advance"/>: the
/// timers it creates fire synchronously, on the thread that advances, in due-time order (ties in
/// the order they were scheduled). Timers created or changed by a callback during an advance take
/// part in the same advance when they fall due within it.
/// </summary>
/// <remarks>
/// Thread-safe for creating, changing and disposing timers from any thread; advance from one thread
/// at a time. A timer due now (dueTime zero) fires at the next <see cref="Advance"/>, even of zero.
/// Kept instead of <c>FakeTimeProvider</c> (Microsoft.Extensions.TimeProvider.Testing) because the
/// messaging tests assert that every retransmission, response and lifetime timer is disposed when
/// its exchange ends (<see cref="ActiveTimerCount"/>), and FakeTimeProvider exposes no way to count
/// armed timers; the rest of its behaviour (ordered, synchronous firing within an advance) matches.
/// </remarks>
public sealed class ManualTimeProvider : TimeProvider
{
    // A callback that re-arms itself with due time zero would spin forever; no sane test needs more.
    private const int MaxFiresPerAdvance = 1_000_000;

    private readonly object _gate = new();
    private readonly List<ManualTimer> _timers = [];
    private readonly DateTimeOffset _start;
    private TimeSpan _elapsed;
    private long _sequence;

    /// <summary>Creates a clock that starts at 2026-01-01T00:00:00Z.</summary>
    public ManualTimeProvider()
        : this(new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero))
    {
    }

    /// <summary>Creates a clock that starts at <paramref name="start"/>.</summary>
    /// <param name="start">The initial UTC time.</param>
    public ManualTimeProvider(DateTimeOffset start) => _start = start;

    /// <summary>The virtual time elapsed since the clock was created.</summary>
    public TimeSpan Elapsed
    {
        get
        {
            lock (_gate)
            {
                return _elapsed;
            }
        }
    }

    /// <summary>How many timers are armed (created or changed with a finite due time, not yet fired or disposed).</summary>
    public int ActiveTimerCount
    {
        get
        {
            lock (_gate)
            {
                int count = 0;
                foreach (ManualTimer timer in _timers)
                {
                    if (timer.Armed)
                    {
                        count++;
                    }
                }

                return count;
            }
        }
    }

    /// <summary>One timestamp tick is one <see cref="TimeSpan"/> tick (100 ns).</summary>
    public override long TimestampFrequency => TimeSpan.TicksPerSecond;

    /// <summary>The virtual clock is UTC.</summary>
    public override TimeZoneInfo LocalTimeZone => TimeZoneInfo.Utc;

    /// <inheritdoc/>
    public override DateTimeOffset GetUtcNow() => _start + Elapsed;

    /// <inheritdoc/>
    public override long GetTimestamp() => Elapsed.Ticks;

    /// <inheritdoc/>
    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
    {
        ArgumentNullException.ThrowIfNull(callback);
        ManualTimer timer = new(this, callback, state);
        lock (_gate)
        {
            _timers.Add(timer);
            Schedule(timer, dueTime, period);
        }

        return timer;
    }

    /// <summary>
    /// Moves the clock forward by <paramref name="delta"/>, firing every timer that falls due on the
    /// way, each at its own due time (the clock reads that time inside the callback).
    /// </summary>
    /// <param name="delta">How far to move; zero fires only the timers already due.</param>
    public void Advance(TimeSpan delta)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(delta, TimeSpan.Zero);
        AdvanceTo(Elapsed + delta);
    }

    /// <summary>When the next armed timer is due (elapsed since the clock's creation), or null when none is armed.</summary>
    public TimeSpan? NextDue
    {
        get
        {
            lock (_gate)
            {
                TimeSpan? next = null;
                foreach (ManualTimer timer in _timers)
                {
                    if (timer.Armed && (next is null || timer.DueAt < next))
                    {
                        next = timer.DueAt;
                    }
                }

                return next;
            }
        }
    }

    /// <summary>
    /// Moves the clock to the next armed timer's due time and fires every timer due then (the clock of a discrete-event
    /// simulation: nothing happens between two timers, so the time in between is skipped).
    /// </summary>
    /// <returns>False when no timer was armed; the clock did not move.</returns>
    public bool AdvanceToNext()
    {
        if (NextDue is not TimeSpan next)
        {
            return false;
        }

        AdvanceTo(next);
        return true;
    }

    /// <summary>Moves the clock forward to <paramref name="elapsed"/> since its creation, firing timers on the way.</summary>
    /// <param name="elapsed">The target; earlier than now only fires the timers already due.</param>
    public void AdvanceTo(TimeSpan elapsed)
    {
        for (int fired = 0; ; fired++)
        {
            if (fired >= MaxFiresPerAdvance)
            {
                throw new InvalidOperationException($"More than {MaxFiresPerAdvance} timer callbacks in one advance: a timer re-arms itself with no delay.");
            }

            ManualTimer? due = null;
            lock (_gate)
            {
                foreach (ManualTimer timer in _timers)
                {
                    if (timer.Armed && timer.DueAt <= elapsed
                        && (due is null || timer.DueAt < due.DueAt || (timer.DueAt == due.DueAt && timer.Sequence < due.Sequence)))
                    {
                        due = timer;
                    }
                }

                if (due is null)
                {
                    if (elapsed > _elapsed)
                    {
                        _elapsed = elapsed;
                    }

                    return;
                }

                if (due.DueAt > _elapsed)
                {
                    _elapsed = due.DueAt;
                }

                // A periodic timer is re-armed before its callback runs, as System.Threading.Timer would.
                if (due.Period > TimeSpan.Zero)
                {
                    due.DueAt += due.Period;
                    due.Sequence = ++_sequence;
                }
                else
                {
                    due.Armed = false;
                }
            }

            due.Callback(due.State);
        }
    }

    private static void ValidateSpan(TimeSpan span, string name)
    {
        if (span < TimeSpan.Zero && span != Timeout.InfiniteTimeSpan)
        {
            throw new ArgumentOutOfRangeException(name, span, "A timer interval is zero or more, or Timeout.InfiniteTimeSpan.");
        }
    }

    // Caller holds the lock.
    private void Schedule(ManualTimer timer, TimeSpan dueTime, TimeSpan period)
    {
        ValidateSpan(dueTime, nameof(dueTime));
        ValidateSpan(period, nameof(period));
        timer.Armed = dueTime != Timeout.InfiniteTimeSpan;
        timer.DueAt = timer.Armed ? _elapsed + dueTime : TimeSpan.MaxValue;
        timer.Period = period;
        timer.Sequence = ++_sequence;
    }

    private bool Change(ManualTimer timer, TimeSpan dueTime, TimeSpan period)
    {
        lock (_gate)
        {
            if (timer.Disposed)
            {
                return false;
            }

            Schedule(timer, dueTime, period);
            return true;
        }
    }

    private void Remove(ManualTimer timer)
    {
        lock (_gate)
        {
            timer.Disposed = true;
            timer.Armed = false;
            _timers.Remove(timer);
        }
    }

    private sealed class ManualTimer(ManualTimeProvider owner, TimerCallback callback, object? state) : ITimer
    {
        public TimerCallback Callback { get; } = callback;

        public object? State { get; } = state;

        // The fields below are guarded by the owner's lock.
        public bool Armed { get; set; }

        public bool Disposed { get; set; }

        public TimeSpan DueAt { get; set; }

        public TimeSpan Period { get; set; }

        public long Sequence { get; set; }

        public bool Change(TimeSpan dueTime, TimeSpan period) => owner.Change(this, dueTime, period);

        public void Dispose() => owner.Remove(this);

        public ValueTask DisposeAsync()
        {
            owner.Remove(this);
            return ValueTask.CompletedTask;
        }
    }
}
