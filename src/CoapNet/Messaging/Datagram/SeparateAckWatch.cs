namespace CoapNet.Messaging.Datagram;

/// <summary>
/// RFC 7252 section 5.2.2: a confirmable request whose handler has not answered within the separate-response
/// delay gets an empty ACK, so the client stops retransmitting and the response follows as a separate message.
/// This watches the unanswered confirmable requests of one endpoint and accepts the slow ones from a timer.
/// </summary>
/// <remarks>
/// Its own lock, a leaf: it guards only the table, nothing else is taken or called while it is held, and
/// <see cref="CoapExchange.Accept"/> (which sends) runs after it is released. Nothing needs it atomic with the
/// message layer's state: <see cref="CoapExchange.Accept"/> acts at most once and not after the exchange was
/// answered, so an exchange answered between the scan and the accept gets no extra ACK, as before the split.
/// </remarks>
internal sealed class SeparateAckWatch : IDisposable
{
    private readonly object _gate = new();
    private readonly Dictionary<CoapExchange, long> _unanswered = [];
    private readonly TimeProvider _time;
    private readonly long _delayTicks;
    private readonly ITimer _timer;

    public SeparateAckWatch(TimeProvider time, TimeSpan delay)
    {
        _time = time;
        _delayTicks = (long)(delay.TotalSeconds * time.TimestampFrequency);

        // A quarter of the delay (at least a millisecond): an empty ACK goes out between 1 and 1.25 delays after arrival.
        TimeSpan tick = TimeSpan.FromTicks(Math.Max(delay.Ticks / 4, TimeSpan.TicksPerMillisecond));
        _timer = time.CreateTimer(static state => ((SeparateAckWatch)state!).AcceptSlowExchanges(), this, tick, tick);
    }

    /// <summary>A confirmable request arrived and goes up to its handler.</summary>
    public void Watch(CoapExchange exchange)
    {
        long now = _time.GetTimestamp();
        lock (_gate)
        {
            _unanswered.Add(exchange, now);
        }
    }

    /// <summary>The request was answered (piggybacked, separately, with an empty ACK or RST): no empty ACK is due.</summary>
    public void Forget(CoapExchange exchange)
    {
        lock (_gate)
        {
            _unanswered.Remove(exchange);
        }
    }

    /// <summary>Stops the timer.</summary>
    public void Dispose() => _timer.Dispose();

    /// <summary>Sends an empty ACK for confirmable requests not answered within the separate-response delay (RFC 7252 section 5.2.2).</summary>
    private void AcceptSlowExchanges()
    {
        long now = _time.GetTimestamp();
        List<CoapExchange>? slow = null;
        lock (_gate)
        {
            foreach (KeyValuePair<CoapExchange, long> pair in _unanswered)
            {
                if (now - pair.Value >= _delayTicks)
                {
                    (slow ??= []).Add(pair.Key);
                }
            }
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
