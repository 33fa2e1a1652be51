namespace CoapNet.Messaging.Retransmission;

/// <summary>
/// A congestion window over one peer's outstanding confirmable messages (<see cref="CocoaOptions.CongestionWindow"/>):
/// NSTART (RFC 7252 section 4.7) becomes its ceiling, and the window itself follows the path as TCP's follows a
/// connection (RFC 5681), counted in messages: slow start from one message, one more per round trip above the slow-start
/// threshold, and a multiplicative decrease when a message times out. It never falls below one message.
/// </summary>
/// <remarks>
/// <para>
/// Why: several requests outstanding toward one peer (a Block2 window, RFC 7959 section 2.4) keep a slow link busy, but a
/// fixed number of them overruns the bottleneck as soon as a few devices share it: the drops cost retransmissions, the
/// retransmissions more drops, until downloads give up after MAX_RETRANSMIT (benchmarks/RESULTS.md, constrained links).
/// The window finds what the path carries, for one device alone and for many.
/// </para>
/// <para>
/// The decrease keeps <see cref="Decrease"/> of the window, gentler than TCP's half: on a radio link most timeouts are bit
/// errors, not congestion, and the message that timed out already waits out CoCoA's back-off. Halving made a lone device
/// slower than TCP New Reno on seed 002's bursty profile; 0.8 still brings a hundred devices down to a message each. At
/// most one decrease per round (the RTO), so one burst of losses counts once, as RFC 6582's recovery point does. Called
/// under the endpoint's lock, as its owner is.
/// </para>
/// </remarks>
internal sealed class CongestionWindow
{
    /// <summary>The share of the window kept when a message times out.</summary>
    internal const double Decrease = 0.8;

    private readonly int _ceiling;
    private readonly TimeProvider _time;
    private double _window = 1;
    private double _threshold;
    private long _decreasedAt = long.MinValue;

    /// <param name="ceiling">NSTART: the most messages outstanding at once.</param>
    /// <param name="time">The endpoint's clock.</param>
    public CongestionWindow(int ceiling, TimeProvider time)
    {
        _ceiling = ceiling;
        _time = time;
        _threshold = ceiling;
    }

    /// <summary>How many messages may be outstanding now: the window's whole part, from 1 to NSTART.</summary>
    public int Size => Math.Clamp((int)_window, 1, _ceiling);

    /// <summary>A message was acknowledged without retransmission: the window grows.</summary>
    public void OnAcknowledged()
    {
        // Slow start: one more per acknowledgement (doubling per round trip); past the threshold one more per round trip.
        _window = Math.Min(_ceiling, _window + (_window < _threshold ? 1 : 1 / _window));
    }

    /// <summary>A message timed out: the window shrinks, unless it did already within the last round.</summary>
    /// <param name="roundTripTimeout">The peer's RTO in seconds: how long one round of decrease lasts.</param>
    public void OnTimeout(double roundTripTimeout)
    {
        long now = _time.GetTimestamp();
        if (_decreasedAt != long.MinValue && (now - _decreasedAt) / (double)_time.TimestampFrequency < roundTripTimeout)
        {
            return;
        }

        _decreasedAt = now;
        _threshold = Math.Max(1, _window * Decrease);
        _window = _threshold;
    }
}
