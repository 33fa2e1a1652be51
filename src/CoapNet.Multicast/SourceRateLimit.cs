using System.Net;

namespace CoapNet.Multicast;

/// <summary>
/// A token bucket per source address for group requests, shared by every group endpoint of a server: one request to a
/// group makes as many responses as it has members, so a source (which UDP does not authenticate) may ask only so often
/// (draft-ietf-core-groupcomm-bis, security considerations on amplification). The table is bounded: full buckets are
/// forgotten first, and while every tracked source is still limited a new one is refused.
/// </summary>
internal sealed class SourceRateLimit(double perSecond, int burst, int maxSources, TimeProvider time)
{
    private readonly Dictionary<IPAddress, Bucket> _buckets = [];
    private readonly object _gate = new();

    /// <summary>Takes one token for <paramref name="source"/>: true when the request may be answered.</summary>
    public bool TryTake(IPAddress source)
    {
        long now = time.GetTimestamp();
        lock (_gate)
        {
            if (!_buckets.TryGetValue(source, out Bucket? bucket))
            {
                if (_buckets.Count >= maxSources && !ForgetFull(now))
                {
                    return false;
                }

                bucket = new Bucket { Tokens = burst, Stamp = now };
                _buckets[source] = bucket;
            }

            Refill(bucket, now);
            if (bucket.Tokens < 1)
            {
                return false;
            }

            bucket.Tokens--;
            return true;
        }
    }

    private void Refill(Bucket bucket, long now)
    {
        double seconds = time.GetElapsedTime(bucket.Stamp, now).TotalSeconds;
        bucket.Tokens = Math.Min(burst, bucket.Tokens + (seconds * perSecond));
        bucket.Stamp = now;
    }

    /// <summary>Forgets the sources whose bucket has refilled (they would start full anyway); true when any went.</summary>
    private bool ForgetFull(long now)
    {
        List<IPAddress>? full = null;
        foreach (KeyValuePair<IPAddress, Bucket> entry in _buckets)
        {
            Refill(entry.Value, now);
            if (entry.Value.Tokens >= burst)
            {
                (full ??= []).Add(entry.Key);
            }
        }

        if (full is null)
        {
            return false;
        }

        foreach (IPAddress address in full)
        {
            _buckets.Remove(address);
        }

        return true;
    }

    private sealed class Bucket
    {
        public double Tokens;
        public long Stamp;
    }
}
