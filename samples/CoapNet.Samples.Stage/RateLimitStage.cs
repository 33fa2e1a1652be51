using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.Samples.Stage;

/// <summary>
/// A stage that limits how fast each peer may send requests, on both sides of RFC 8516. On a server, a peer past its rate
/// gets 4.29 Too Many Requests with Max-Age, the seconds until it may send again (section 3), and its request goes no
/// further. On a client, a server that answered 4.29 is sent nothing until that Max-Age has passed: the stage answers the
/// caller's requests to it with 4.29 itself (section 4 asks a client not to repeat the request before then; this stage
/// holds back every request to that server, the simple reading).
/// </summary>
/// <remarks>
/// Placed below every stage (<see cref="CoapStagePosition.BelowAll"/>), nearest the wire: every request counts, each block
/// of a block-wise transfer too, and a refused one never reaches the stages above, so nothing is kept for it. Its state is
/// a token bucket per peer, bounded: a peer cannot make the table grow past <see cref="MaxPeers"/> (past it, idle peers are
/// dropped, and new ones share one bucket until room is made).
/// </remarks>
public sealed class RateLimitStage : CoapStage
{
    /// <summary>The most peers the stage keeps a bucket or a hold for.</summary>
    public const int MaxPeers = 10_000;

    private readonly TimeProvider _time;
    private readonly double _perSecond;
    private readonly double _burst;
    private readonly object _gate = new();
    private readonly Dictionary<CoapPeer, Bucket> _buckets = [];
    private readonly Dictionary<CoapPeer, long> _heldUntil = [];
    private readonly Bucket _overflow;

    /// <summary>Makes the stage for one endpoint.</summary>
    /// <param name="context">The endpoint's context: its clock.</param>
    /// <param name="perSecond">Requests a peer may send per second, on average.</param>
    /// <param name="burst">Requests a peer may send at once after a quiet spell.</param>
    public RateLimitStage(CoapStageContext context, double perSecond, int burst)
    {
        ArgumentNullException.ThrowIfNull(context);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(perSecond);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(burst);
        _time = context.TimeProvider;
        _perSecond = perSecond;
        _burst = burst;
        _overflow = new Bucket(burst, _time.GetTimestamp());
    }

    /// <inheritdoc/>
    public override void ReceiveRequest(CoapExchange exchange, Action<CoapExchange> next)
    {
        long now = _time.GetTimestamp();
        double wait;
        lock (_gate)
        {
            wait = BucketOf(exchange.Peer, now).Take(now, _perSecond, _burst, _time.TimestampFrequency);
        }

        if (wait <= 0)
        {
            next(exchange);
            return;
        }

        // RFC 8516 section 3: 4.29 with Max-Age, the whole seconds until the peer has a request to spend again. The answer
        // goes down through the stages below this one only; the stages above and the handler never see the request.
        CoapMessage tooMany = new() { Code = CoapCode.TooManyRequests };
        tooMany.MaxAge = (uint)Math.Ceiling(wait);
        exchange.RespondFrom(this, tooMany);
    }

    /// <inheritdoc/>
    public override void SendRequest(CoapClientCall call, CoapMessage request, Action<CoapClientCall, CoapMessage> next)
    {
        long now = _time.GetTimestamp();
        long until;
        lock (_gate)
        {
            if (!_heldUntil.TryGetValue(call.Peer, out until) || until <= now)
            {
                _heldUntil.Remove(call.Peer);
                until = 0;
            }
        }

        if (until == 0)
        {
            next(call, request);
            return;
        }

        // RFC 8516 section 4: the server asked for quiet until then. The caller gets its 4.29 at once, nothing is sent.
        CoapMessage tooMany = new() { Code = CoapCode.TooManyRequests, Token = request.Token };
        tooMany.MaxAge = (uint)Math.Ceiling((until - now) / (double)_time.TimestampFrequency);
        call.PassUp(this, tooMany);
    }

    /// <inheritdoc/>
    public override void ReceiveResponse(CoapClientCall call, CoapMessage response, Action<CoapClientCall, CoapMessage> next)
    {
        if (response.Code == CoapCode.TooManyRequests)
        {
            // Max-Age absent means its default, 60 seconds (RFC 7252 section 5.10.5).
            uint seconds = response.MaxAge ?? CoapMessage.DefaultMaxAge;
            long now = _time.GetTimestamp();
            lock (_gate)
            {
                if (_heldUntil.Count >= MaxPeers && !_heldUntil.ContainsKey(call.Peer))
                {
                    DropExpiredHolds(now);
                }

                if (_heldUntil.Count < MaxPeers || _heldUntil.ContainsKey(call.Peer))
                {
                    _heldUntil[call.Peer] = now + (seconds * _time.TimestampFrequency);
                }
            }
        }

        next(call, response);
    }

    /// <inheritdoc/>
    public override void OnPeerLost(CoapPeer peer)
    {
        lock (_gate)
        {
            _buckets.Remove(peer);
            _heldUntil.Remove(peer);
        }
    }

    // Caller holds the lock.
    private Bucket BucketOf(CoapPeer peer, long now)
    {
        if (_buckets.TryGetValue(peer, out Bucket? bucket))
        {
            return bucket;
        }

        if (_buckets.Count >= MaxPeers)
        {
            DropIdleBuckets(now);
            if (_buckets.Count >= MaxPeers)
            {
                // Full of busy peers: the newcomer shares one bucket with every other newcomer, so memory stays bounded and
                // the newcomers together are still limited.
                return _overflow;
            }
        }

        bucket = new Bucket(_burst, now);
        _buckets.Add(peer, bucket);
        return bucket;
    }

    // Caller holds the lock. A bucket that has refilled completely holds nothing a new one would not.
    private void DropIdleBuckets(long now)
    {
        List<CoapPeer> idle = [];
        foreach (KeyValuePair<CoapPeer, Bucket> pair in _buckets)
        {
            if (pair.Value.IsFull(now, _perSecond, _burst, _time.TimestampFrequency))
            {
                idle.Add(pair.Key);
            }
        }

        foreach (CoapPeer peer in idle)
        {
            _buckets.Remove(peer);
        }
    }

    // Caller holds the lock.
    private void DropExpiredHolds(long now)
    {
        List<CoapPeer> expired = [];
        foreach (KeyValuePair<CoapPeer, long> pair in _heldUntil)
        {
            if (pair.Value <= now)
            {
                expired.Add(pair.Key);
            }
        }

        foreach (CoapPeer peer in expired)
        {
            _heldUntil.Remove(peer);
        }
    }

    /// <summary>One peer's token bucket: requests it may still send now, as of a time. Used under the stage's lock.</summary>
    private sealed class Bucket(double tokens, long at)
    {
        private double _tokens = tokens;
        private long _at = at;

        /// <summary>Spends one request: 0 when there was one to spend, else the seconds until there is.</summary>
        public double Take(long now, double perSecond, double burst, long frequency)
        {
            Refill(now, perSecond, burst, frequency);
            if (_tokens >= 1)
            {
                _tokens -= 1;
                return 0;
            }

            return (1 - _tokens) / perSecond;
        }

        public bool IsFull(long now, double perSecond, double burst, long frequency)
        {
            Refill(now, perSecond, burst, frequency);
            return _tokens >= burst;
        }

        private void Refill(long now, double perSecond, double burst, long frequency)
        {
            _tokens = Math.Min(burst, _tokens + ((now - _at) * perSecond / frequency));
            _at = now;
        }
    }
}
