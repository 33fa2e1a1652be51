namespace CoapNet.Messaging.Retransmission;

/// <summary>
/// The CoCoA state of one peer (draft-ietf-core-cocoa-03 section 4): two RFC 6298 estimators and the overall RTO they
/// feed, the time of its last update (for ageing) and the number of messages outstanding (for the blind RTO). A fixed
/// handful of numbers, so the state is bounded per peer, and the endpoint bounds the peers (MaxPeers, idle expiry).
/// </summary>
/// <remarks>
/// <para>
/// The algorithm, in the draft's words where it has them:
/// <list type="bullet">
/// <item>Blind RTO: ACK_TIMEOUT (2 s) until a round trip has been measured, times the number of messages then
/// outstanding toward the peer when NSTART lets several be.</item>
/// <item>Strong estimator: fed by a message acknowledged without retransmission; RFC 6298 with K = 4; then
/// RTO := 0.5 x E_strong + 0.5 x RTO.</item>
/// <item>Weak estimator: fed by a message acknowledged after its first or second retransmission, the round trip
/// measured from the first transmission; RFC 6298 with K = 1; then RTO := 0.25 x E_weak + 0.75 x RTO. A message
/// acknowledged after more retransmissions is no sample.</item>
/// <item>The first timeout of a message is the RTO dithered as RFC 7252 section 4.2 dithers ACK_TIMEOUT: random in
/// [RTO, RTO x ACK_RANDOM_FACTOR].</item>
/// <item>Variable back-off factor: each retransmission multiplies the timeout by 3 when the message's first timeout was
/// under 1 s, by 1.5 when it was over 3 s, by 2 otherwise; no timeout exceeds 32 s.</item>
/// <item>RTO ageing: an RTO under 1 s that no sample updated for 16 x RTO is doubled; one over 3 s not updated for
/// 4 x RTO becomes 1 s + 0.5 x RTO, so it moves back toward the default after a burst.</item>
/// <item>With <see cref="CocoaOptions.CongestionWindow"/> (not in the draft), NSTART is the ceiling of a window that
/// grows with each message acknowledged without retransmission and shrinks when one times out (<see cref="CongestionWindow"/>).</item>
/// </list>
/// </para>
/// <para>
/// Where Californium's <c>Cocoa.java</c> differs, as we read its source: it smooths SRTT with 0.25 and RTTVAR with 0.125,
/// RFC 6298's alpha and beta swapped. The draft points at RFC 6298's 1/8 and 1/4, and we follow the draft. RFC 6298's G
/// (clock granularity) is taken as 1 ms, the resolution of the system timers on Linux; it also keeps the estimate positive
/// when a round trip measures zero (an in-memory network), which ageing needs. Ageing is applied to the overall RTO (the
/// value a new message starts from), lazily when a message starts or a sample arrives, as if each step had happened on time.
/// </para>
/// <para>
/// The draft recommends keeping a peer's RTO for at least 255 s of inactivity. The endpoint drops an idle peer after
/// EXCHANGE_LIFETIME (247 s with the RFC 7252 defaults, more with a larger MAX_RETRANSMIT); when a peer comes back, its
/// estimate starts blind again. Every member runs under the endpoint's lock (<see cref="CoapPeerRetransmission"/>).
/// </para>
/// </remarks>
internal sealed class CocoaPeerRetransmission : CoapPeerRetransmission
{
    // RFC 6298 section 2: the gains of SRTT and RTTVAR, and the draft's K for each estimator.
    private const double Alpha = 1.0 / 8;
    private const double Beta = 1.0 / 4;
    private const int StrongK = 4;
    private const int WeakK = 1;

    // The draft's weights of a new estimate in the overall RTO.
    private const double StrongWeight = 0.5;
    private const double WeakWeight = 0.25;

    // RFC 6298's G, in seconds (see the remarks).
    private const double Granularity = 0.001;

    private readonly CoapTransmissionParameters _parameters;
    private readonly TimeProvider _time;
    private readonly double _maxTimeout;
    private readonly bool _weakEstimator;
    private readonly CongestionWindow? _window;
    private Estimator _strong;
    private Estimator _weak;
    private double _rto;
    private bool _measured;
    private long _updatedAt;
    private int _outstanding;

    public CocoaPeerRetransmission(CoapTransmissionParameters parameters, TimeProvider time, TimeSpan maxTimeout, bool weakEstimator, CongestionWindow? window = null)
    {
        _window = window;
        _parameters = parameters;
        _time = time;
        _maxTimeout = maxTimeout.TotalSeconds;
        _weakEstimator = weakEstimator;
        _rto = Math.Min(parameters.AckTimeout.TotalSeconds, _maxTimeout);
        _updatedAt = time.GetTimestamp();
    }

    public override int NStart => _window?.Size ?? _parameters.NStart;

    public override int MaxRetransmit => _parameters.MaxRetransmit;

    public override TimeSpan? RetransmissionTimeout => FromSeconds(_rto);

    public override TimeSpan GetInitialTimeout(Random random)
    {
        Age(_time.GetTimestamp());

        // Blind RTO: with several messages outstanding (NSTART above 1) they share a link whose round trip is unknown, so
        // each new one waits as many times ACK_TIMEOUT as there are outstanding, this one included.
        double rto = _measured ? _rto : Math.Min(_rto * (_outstanding + 1), _maxTimeout);
        _outstanding++;

        // One draw per message, as the RFC 7252 default makes, so a seeded endpoint draws the same sequence with either.
        double timeout = rto * (1 + (random.NextDouble() * (_parameters.AckRandomFactor - 1)));
        return FromSeconds(Math.Min(timeout, _maxTimeout));
    }

    public override TimeSpan GetNextTimeout(TimeSpan initialTimeout, TimeSpan timeout, int retransmissions)
    {
        // The variable back-off factor: a short first timeout backs off faster so the retransmissions spread out, a long
        // one slower so they still fit MAX_TRANSMIT_WAIT; between 1 s and 3 s it is RFC 7252's doubling.
        // A timeout is the loss a congestion window shrinks for (RFC 5681 section 3.1).
        _window?.OnTimeout(_rto);
        double first = initialTimeout.TotalSeconds;
        double factor = first < 1 ? 3 : first > 3 ? 1.5 : 2;
        return FromSeconds(Math.Min(timeout.TotalSeconds * factor, _maxTimeout));
    }

    public override void OnAcknowledged(TimeSpan elapsed, int retransmissions)
    {
        Release();
        double sample = elapsed.TotalSeconds;
        if (retransmissions == 0)
        {
            Update(_strong.Add(sample, StrongK), StrongWeight);
            _window?.OnAcknowledged();
        }
        else if (retransmissions <= 2 && _weakEstimator)
        {
            // Ambiguous (the ACK may answer any copy), so measured from the first transmission and weighted less.
            Update(_weak.Add(sample, WeakK), WeakWeight);
        }
    }

    public override void OnUnacknowledged(int retransmissions) => Release();

    private static TimeSpan FromSeconds(double seconds) => TimeSpan.FromTicks((long)Math.Round(seconds * TimeSpan.TicksPerSecond));

    private void Release() => _outstanding = Math.Max(0, _outstanding - 1);

    private void Update(double estimate, double weight)
    {
        long now = _time.GetTimestamp();
        Age(now);
        _rto = Math.Min(Math.Max((weight * estimate) + ((1 - weight) * _rto), Granularity), _maxTimeout);
        _measured = true;
        _updatedAt = now;
    }

    /// <summary>RTO ageing, each step at the time it was due: the RTO is not left where a burst or a quiet spell put it.</summary>
    private void Age(long now)
    {
        if (!_measured)
        {
            return;
        }

        double frequency = _time.TimestampFrequency;
        while (true)
        {
            double idle = (now - _updatedAt) / frequency;
            double period;
            double aged;
            if (_rto < 1 && idle > 16 * _rto)
            {
                period = 16 * _rto;
                aged = 2 * _rto;
            }
            else if (_rto > 3 && idle > 4 * _rto)
            {
                period = 4 * _rto;
                aged = 1 + (0.5 * _rto);
            }
            else
            {
                return;
            }

            _updatedAt += (long)(period * frequency);
            _rto = Math.Min(aged, _maxTimeout);
        }
    }

    /// <summary>One RFC 6298 estimator: SRTT and RTTVAR, and the estimate SRTT + max(G, K x RTTVAR).</summary>
    private struct Estimator
    {
        private double _srtt;
        private double _rttvar;
        private bool _started;

        public double Add(double sample, int k)
        {
            if (!_started)
            {
                // RFC 6298 section 2.2: the first measurement.
                _srtt = sample;
                _rttvar = sample / 2;
                _started = true;
            }
            else
            {
                // RFC 6298 section 2.3: RTTVAR first, from the SRTT before this sample.
                _rttvar = ((1 - Beta) * _rttvar) + (Beta * Math.Abs(_srtt - sample));
                _srtt = ((1 - Alpha) * _srtt) + (Alpha * sample);
            }

            return _srtt + Math.Max(Granularity, k * _rttvar);
        }
    }
}
