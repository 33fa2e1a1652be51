namespace CoapNet.RateLimiting;

/// <summary>
/// A token bucket per key (a device's identity, a source address), bounded in the keys it tracks: what a stage that
/// limits a rate keeps (<see cref="CoapRateLimitEndpointOptionsExtensions.UseIdentityRateLimit"/>, the group requests of
/// CoapNet.Multicast). Each call costs a dictionary lookup and a move to the front of a list under one lock, whatever the
/// table holds. Thread-safe.
/// </summary>
/// <remarks>
/// The list runs from the key seen last to the one seen longest ago. Each call also looks at the key seen longest ago and
/// forgets it when its bucket has refilled (a forgotten key starts full again, so nothing is given away): the table holds
/// only keys that spent a token within the refill time, not every key ever seen. At the bound, a key the table has no room
/// for is refused until a bucket refills: forgetting a limited key to make room would hand it a fresh burst, so a flood
/// of new keys (forged sources) cannot buy back the rate of the ones it pushed out.
/// </remarks>
/// <typeparam name="TKey">What is limited: equal keys share a bucket.</typeparam>
public sealed class CoapTokenBuckets<TKey>
    where TKey : notnull
{
    private readonly Dictionary<TKey, LinkedListNode<Bucket>> _buckets = [];
    private readonly LinkedList<Bucket> _recent = new();
    private readonly object _gate = new();
    private readonly double _perSecond;
    private readonly int _burst;
    private readonly int _maxKeys;
    private readonly TimeProvider _time;

    /// <summary>Makes an empty table.</summary>
    /// <param name="perSecond">Tokens a bucket gains a second.</param>
    /// <param name="burst">Tokens a bucket holds at most, and starts with.</param>
    /// <param name="maxKeys">Keys tracked at most.</param>
    /// <param name="timeProvider">The clock the buckets refill by.</param>
    /// <exception cref="ArgumentOutOfRangeException">A number is not positive (or the rate not finite).</exception>
    public CoapTokenBuckets(double perSecond, int burst, int maxKeys, TimeProvider timeProvider)
    {
        if (!(perSecond > 0) || double.IsInfinity(perSecond))
        {
            throw new ArgumentOutOfRangeException(nameof(perSecond), perSecond, "The rate must be positive and finite.");
        }

        ArgumentOutOfRangeException.ThrowIfLessThan(burst, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxKeys, 1);
        ArgumentNullException.ThrowIfNull(timeProvider);
        _perSecond = perSecond;
        _burst = burst;
        _maxKeys = maxKeys;
        _time = timeProvider;
    }

    /// <summary>How many keys the table tracks now.</summary>
    public int Count
    {
        get
        {
            lock (_gate)
            {
                return _buckets.Count;
            }
        }
    }

    /// <summary>Takes a token of <paramref name="key"/>.</summary>
    /// <param name="key">What spends it.</param>
    /// <returns>0 when a token was taken; otherwise the seconds until one is there (nothing was taken).</returns>
    public double TryTake(TKey key)
    {
        long now = _time.GetTimestamp();
        lock (_gate)
        {
            ForgetRefilled(now);
            if (_buckets.TryGetValue(key, out LinkedListNode<Bucket>? node))
            {
                _recent.Remove(node);
            }
            else
            {
                if (_buckets.Count >= _maxKeys)
                {
                    return 1 / _perSecond;
                }

                node = new LinkedListNode<Bucket>(new Bucket(key) { Tokens = _burst, Stamp = now });
                _buckets.Add(key, node);
            }

            _recent.AddFirst(node);
            Bucket bucket = node.Value;
            bucket.Tokens = Refilled(bucket, now);
            bucket.Stamp = now;
            if (bucket.Tokens >= 1)
            {
                bucket.Tokens--;
                return 0;
            }

            return (1 - bucket.Tokens) / _perSecond;
        }
    }

    private double Refilled(Bucket bucket, long now)
        => Math.Min(_burst, bucket.Tokens + (_time.GetElapsedTime(bucket.Stamp, now).TotalSeconds * _perSecond));

    // Caller holds the lock. At most two a call: enough to empty a table faster than calls fill it.
    private void ForgetRefilled(long now)
    {
        for (int i = 0; i < 2 && _recent.Last is { } oldest; i++)
        {
            if (Refilled(oldest.Value, now) < _burst)
            {
                return;
            }

            _recent.RemoveLast();
            _buckets.Remove(oldest.Value.Key);
        }
    }

    private sealed class Bucket(TKey key)
    {
        public readonly TKey Key = key;
        public double Tokens;
        public long Stamp;
    }
}
