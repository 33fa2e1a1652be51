using CoapNet.Channels;

namespace CoapNet.RateLimiting;

/// <summary>
/// A token bucket per device, shared by the endpoints of one <see cref="CoapIdentityRateLimitOptions"/>: each request
/// costs a dictionary lookup and a move to the front of a list, under one lock, whatever the table holds.
/// </summary>
/// <remarks>
/// The list runs from the device heard last to the one heard longest ago. Each request also looks at the device heard
/// longest ago and forgets it when its bucket has refilled (a forgotten device starts full, so nothing is given away):
/// the table holds only devices that spoke within the refill time, not the whole fleet. At <c>maxIdentities</c>, a
/// device the table has no room for is refused until a bucket refills: forgetting a limited one would hand it a fresh
/// burst.
/// </remarks>
internal sealed class IdentityBuckets(double perSecond, int burst, int maxIdentities, TimeProvider time)
{
    private readonly Dictionary<PeerIdentityKey, LinkedListNode<Bucket>> _buckets = [];
    private readonly LinkedList<Bucket> _recent = new();
    private readonly object _gate = new();

    /// <summary>How many devices the table tracks now.</summary>
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

    /// <summary>Takes a token of <paramref name="device"/>: 0 when the request may go on, else the seconds until a token is there.</summary>
    public double TryTake(PeerIdentityKey device)
    {
        long now = time.GetTimestamp();
        lock (_gate)
        {
            ForgetRefilled(now);
            if (_buckets.TryGetValue(device, out LinkedListNode<Bucket>? node))
            {
                _recent.Remove(node);
            }
            else
            {
                if (_buckets.Count >= maxIdentities)
                {
                    return 1 / perSecond;
                }

                node = new LinkedListNode<Bucket>(new Bucket(device) { Tokens = burst, Stamp = now });
                _buckets.Add(device, node);
            }

            _recent.AddFirst(node);
            Bucket bucket = node.Value;
            Refill(bucket, now);
            if (bucket.Tokens >= 1)
            {
                bucket.Tokens--;
                return 0;
            }

            return (1 - bucket.Tokens) / perSecond;
        }
    }

    private void Refill(Bucket bucket, long now)
    {
        double seconds = time.GetElapsedTime(bucket.Stamp, now).TotalSeconds;
        bucket.Tokens = Math.Min(burst, bucket.Tokens + (seconds * perSecond));
        bucket.Stamp = now;
    }

    // Caller holds the lock. At most two per request: enough to drain a table faster than requests add to it.
    private void ForgetRefilled(long now)
    {
        for (int i = 0; i < 2 && _recent.Last is { } oldest; i++)
        {
            Bucket bucket = oldest.Value;
            if (bucket.Tokens + (time.GetElapsedTime(bucket.Stamp, now).TotalSeconds * perSecond) < burst)
            {
                return;
            }

            _recent.RemoveLast();
            _buckets.Remove(bucket.Device);
        }
    }

    private sealed class Bucket(PeerIdentityKey device)
    {
        public readonly PeerIdentityKey Device = device;
        public double Tokens;
        public long Stamp;
    }
}
