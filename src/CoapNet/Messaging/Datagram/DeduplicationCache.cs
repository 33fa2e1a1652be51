using CoapNet.Channels;

namespace CoapNet.Messaging.Datagram;

/// <summary>
/// Remembers received CON and NON messages by (remote endpoint, Message ID) for
/// EXCHANGE_LIFETIME / NON_LIFETIME (RFC 7252 section 4.5), with the reply sent for each, so a
/// duplicate CON gets the same ACK or response again and never reaches a handler twice.
/// </summary>
/// <remarks>
/// Memory is bounded by a capacity. Entries are kept in arrival order, one queue per lifetime (so
/// each queue is also in expiry order); expired ones are dropped from the fronts, and when the cache
/// is full the entry that expires first is evicted to admit the new one (oldest-first eviction). A peer that sprays distinct Message IDs therefore evicts its own and
/// others' oldest entries instead of growing the heap; the cost is that a duplicate arriving after
/// its entry was evicted under such a flood is processed again. Not thread-safe: the message layer's lock guards it.
/// </remarks>
internal sealed class DeduplicationCache
{
    private readonly Dictionary<Key, Entry> _entries;
    // One queue per lifetime (CON: EXCHANGE_LIFETIME, NON: NON_LIFETIME): within each, arrival order is expiry order.
    private readonly Dictionary<long, Queue<Entry>> _queues = [];
    private readonly int _capacity;

    public DeduplicationCache(int capacity)
    {
        _capacity = capacity;
        _entries = new Dictionary<Key, Entry>(Math.Min(capacity, 1024));
    }

    public int Count => _entries.Count;

    /// <summary>How many live entries were evicted to make room (a sign of a flood).</summary>
    public long Evictions { get; private set; }

    /// <summary>Finds an unexpired entry for (remote, Message ID), or adds one.</summary>
    /// <returns>True when the message is a duplicate (the existing entry is returned).</returns>
    public bool TryGetOrAdd(CoapPeer remote, ushort messageId, long now, long lifetimeTicks, out Entry entry)
    {
        RemoveExpired(now);
        Key key = new(remote, messageId);
        if (_entries.TryGetValue(key, out Entry? existing))
        {
            if (existing.ExpiresAt > now)
            {
                entry = existing;
                return true;
            }

            // Expired but still queued behind a longer-lived entry: replace it.
            existing.Removed = true;
            _entries.Remove(key);
        }

        while (_entries.Count >= _capacity && TryDequeueFirstToExpire(out Entry? oldest))
        {
            if (!oldest.Removed)
            {
                oldest.Removed = true;
                _entries.Remove(oldest.Key);
                Evictions++;
            }
        }

        entry = new Entry(key, now + lifetimeTicks);
        _entries.Add(key, entry);
        if (!_queues.TryGetValue(lifetimeTicks, out Queue<Entry>? queue))
        {
            _queues[lifetimeTicks] = queue = new Queue<Entry>();
        }

        queue.Enqueue(entry);
        return false;
    }

    private void RemoveExpired(long now)
    {
        foreach (Queue<Entry> queue in _queues.Values)
        {
            while (queue.TryPeek(out Entry? oldest) && (oldest.Removed || oldest.ExpiresAt <= now))
            {
                queue.Dequeue();
                if (!oldest.Removed)
                {
                    oldest.Removed = true;
                    _entries.Remove(oldest.Key);
                }
            }
        }
    }

    private bool TryDequeueFirstToExpire([System.Diagnostics.CodeAnalysis.NotNullWhen(true)] out Entry? first)
    {
        Queue<Entry>? from = null;
        foreach (Queue<Entry> queue in _queues.Values)
        {
            if (queue.TryPeek(out Entry? head) && (from is null || head.ExpiresAt < from.Peek().ExpiresAt))
            {
                from = queue;
            }
        }

        first = from?.Dequeue();
        return first is not null;
    }

    internal readonly record struct Key(CoapPeer Remote, ushort MessageId);

    /// <summary>One remembered message: the reply to replay for a duplicate (null while it is being processed).</summary>
    internal sealed class Entry(Key key, long expiresAt)
    {
        public Key Key { get; } = key;

        public long ExpiresAt { get; } = expiresAt;

        public bool Removed { get; set; }

        /// <summary>The ACK, RST or piggybacked response sent for the message, replayed for duplicates.</summary>
        public byte[]? Reply { get; set; }

        /// <summary>For a request: its exchange, so a duplicate arriving before any reply can be acknowledged.</summary>
        public CoapExchange? Exchange { get; set; }

        /// <summary>For a request: the channel it came on and its answer goes back on (the entry is also the exchange's lower state).</summary>
        public Channels.DatagramChannel? Channel { get; set; }
    }
}
