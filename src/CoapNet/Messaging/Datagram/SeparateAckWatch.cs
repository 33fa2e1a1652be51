namespace CoapNet.Messaging.Datagram;

/// <summary>
/// RFC 7252 section 5.2.2: a confirmable request whose handler has not answered within the separate-response
/// delay gets an empty ACK, so the client stops retransmitting and the response follows as a separate message.
/// This watches the unanswered confirmable requests of one endpoint and accepts the slow ones from a timer.
/// </summary>
/// <remarks>
/// The table is guarded by the message layer's lock, which that layer already holds where a request is added (its
/// deduplication entry is made) and where it is answered (its reply is recorded): a lock of its own cost two more lock
/// round trips a confirmable request, about 1 % of a UDP request's CPU (issue 39). Nothing else is called while the
/// scan holds it, and <see cref="CoapExchange.Accept"/> (which sends, and takes the lock to record the ACK) runs after
/// it is released. <see cref="CoapExchange.Accept"/> acts at most once and not after the exchange was answered, so an
/// exchange answered between the scan and the accept gets no extra ACK.
/// </remarks>
internal sealed class SeparateAckWatch : IDisposable
{
    private readonly object _gate;
    private readonly Dictionary<CoapExchange, long> _unanswered = new(ByTicket.Instance);
    private readonly TimeProvider _time;
    private readonly long _delayTicks;
    private readonly TimeSpan _delay;
    private readonly TimeSpan _slack;
    private readonly ITimer _timer;

    // True while the timer is set; guarded by _gate. Set by the first request watched after the timer went quiet.
    private bool _armed;

    /// <param name="time">The endpoint's clock.</param>
    /// <param name="delay">The separate-response delay.</param>
    /// <param name="gate">The message layer's lock, which guards the table.</param>
    public SeparateAckWatch(TimeProvider time, TimeSpan delay, object gate)
    {
        _gate = gate;
        _time = time;
        _delay = delay;
        _delayTicks = (long)(delay.TotalSeconds * time.TimestampFrequency);

        // A quarter of the delay (at least a millisecond) is the most an empty ACK is late: it goes out between 1 and 1.25
        // delays after arrival. The timer runs only while requests are watched: an idle endpoint has no timer firing, and a
        // busy one whose requests are answered at once (the usual case) sees it fire about once per delay, not per quarter:
        // every firing wakes a thread-pool worker, which costs a one-core server more than the scan (issue 25).
        _slack = TimeSpan.FromTicks(Math.Max(delay.Ticks / 4, TimeSpan.TicksPerMillisecond));
        _timer = time.CreateTimer(static state => ((SeparateAckWatch)state!).AcceptSlowExchanges(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
    }

    /// <summary>
    /// A confirmable request arrived at <paramref name="arrived"/> (<see cref="TimeProvider.GetTimestamp"/>) and goes up to
    /// its handler. The caller holds the message layer's lock, and calls <see cref="Arm"/> once it has released it when
    /// this returns true.
    /// </summary>
    public bool WatchLocked(CoapExchange exchange, long arrived)
    {
        // Marked before it is hashed in, so its hash stays the same while it is in the table.
        exchange.LowerTicket |= DeduplicationCache.Ticket.WatchedMark;
        _unanswered.Add(exchange, arrived);
        if (_armed)
        {
            return false;
        }

        _armed = true;
        return true;
    }

    /// <summary>
    /// True when <paramref name="exchange"/> was watched (<see cref="WatchLocked"/>): the mark is written under the message
    /// layer's lock before the request goes up and read when it is answered, so only a watched request's answer takes the
    /// lock to stop watching it; the exchange keeps its size (one allocated for every request) for it.
    /// </summary>
    public static bool IsWatched(CoapExchange exchange) => (exchange.LowerTicket & DeduplicationCache.Ticket.WatchedMark) != 0;

    /// <summary>Sets the timer for the request <see cref="WatchLocked"/> found it quiet for; outside the lock (the timer takes locks of its own).</summary>
    /// <remarks>A firing before this call finds the request and sets the timer again.</remarks>
    public void Arm() => _timer.Change(_delay, Timeout.InfiniteTimeSpan);

    /// <summary>The request was answered (piggybacked, separately, with an empty ACK or RST): no empty ACK is due. The caller holds the message layer's lock.</summary>
    public void ForgetLocked(CoapExchange exchange) => _unanswered.Remove(exchange);

    /// <summary>Stops the timer.</summary>
    public void Dispose() => _timer.Dispose();

    /// <summary>
    /// Exchanges by identity, hashed by their deduplication ticket (a slot and its generation: unique among the requests
    /// in the cache, and set before <see cref="WatchLocked"/>): the default, an object's identity hash, is made and stored in its
    /// header on first use, a cost on every confirmable request (issue 39).
    /// </summary>
    private sealed class ByTicket : IEqualityComparer<CoapExchange>
    {
        public static readonly ByTicket Instance = new();

        public bool Equals(CoapExchange? x, CoapExchange? y) => ReferenceEquals(x, y);

        public int GetHashCode(CoapExchange obj) => (int)obj.LowerTicket ^ (int)(obj.LowerTicket >> 32);
    }

    /// <summary>Sends an empty ACK for confirmable requests not answered within the separate-response delay (RFC 7252 section 5.2.2).</summary>
    private void AcceptSlowExchanges()
    {
        long now = _time.GetTimestamp();
        List<CoapExchange>? slow = null;
        long oldest = long.MaxValue;
        lock (_gate)
        {
            foreach (KeyValuePair<CoapExchange, long> pair in _unanswered)
            {
                if (now - pair.Value >= _delayTicks)
                {
                    (slow ??= []).Add(pair.Key);
                }
                else if (pair.Value < oldest)
                {
                    oldest = pair.Value;
                }
            }

            _armed = oldest != long.MaxValue;
        }

        if (oldest != long.MaxValue)
        {
            // Next when the oldest request still waiting is due, but not sooner than the slack: many requests a little
            // apart are taken in one firing, each at most that late.
            TimeSpan due = TimeSpan.FromSeconds((double)(oldest + _delayTicks - now) / _time.TimestampFrequency);
            _timer.Change(due > _slack ? due : _slack, Timeout.InfiniteTimeSpan);
        }

        if (slow is not null)
        {
            foreach (CoapExchange exchange in slow)
            {
                exchange.Accept();
            }
        }
    }
}
