using System.Net;
using CoapNet.Transports;

namespace CoapNet.Multicast;

/// <summary>
/// A token bucket per source for group requests, shared by every group endpoint of a server: one request to a group
/// makes as many responses as it has members, so a source (which UDP does not authenticate) may ask only so often
/// (draft-ietf-core-groupcomm-bis, security considerations on amplification). A source is an IPv4 address or an IPv6 /64
/// (<see cref="AddressGroup"/>): one host commonly holds a whole /64, and counting by the full address would give it a
/// fresh bucket per address.
/// </summary>
/// <remarks>
/// The table is bounded by <c>maxSources</c>, in the order the sources were last seen. At the bound, the source seen
/// longest ago is forgotten when its bucket has refilled (it would start full anyway, so forgetting it gives nothing
/// away); when even that one is still limited, the newcomer is refused: forgetting a limited source would hand it a fresh
/// burst, so a flood of new (forged) sources cannot buy back the rate of the ones it pushed out. Each request costs a
/// dictionary lookup and a move in the order under one lock, whatever the table holds.
/// </remarks>
internal sealed class SourceRateLimit(double perSecond, int burst, int maxSources, TimeProvider time)
{
    private readonly Dictionary<AddressGroup, LinkedListNode<Bucket>> _buckets = [];
    private readonly LinkedList<Bucket> _recent = new();
    private readonly object _gate = new();

    /// <summary>Takes one token for <paramref name="source"/>'s group: true when the request may be answered.</summary>
    public bool TryTake(IPAddress source)
    {
        AddressGroup group = AddressGroup.Of(source);
        long now = time.GetTimestamp();
        lock (_gate)
        {
            if (_buckets.TryGetValue(group, out LinkedListNode<Bucket>? node))
            {
                _recent.Remove(node);
            }
            else
            {
                if (_buckets.Count >= maxSources && !ForgetOldestIfFull(now))
                {
                    return false;
                }

                node = new LinkedListNode<Bucket>(new Bucket(group) { Tokens = burst, Stamp = now });
                _buckets.Add(group, node);
            }

            // Most recent first: the last node is the source seen longest ago.
            _recent.AddFirst(node);
            Bucket bucket = node.Value;
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

    /// <summary>Forgets the source seen longest ago when its bucket has refilled; true when it went.</summary>
    private bool ForgetOldestIfFull(long now)
    {
        Bucket oldest = _recent.Last!.Value;
        Refill(oldest, now);
        if (oldest.Tokens < burst)
        {
            return false;
        }

        _recent.RemoveLast();
        _buckets.Remove(oldest.Group);
        return true;
    }

    private sealed class Bucket(AddressGroup group)
    {
        public readonly AddressGroup Group = group;
        public double Tokens;
        public long Stamp;
    }
}
