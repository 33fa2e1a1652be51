using System.Net;

namespace CoapNet.Messaging;

/// <summary>
/// Remembers received CON and NON messages by (remote endpoint, Message ID) for
/// EXCHANGE_LIFETIME / NON_LIFETIME (RFC 7252 section 4.5), with the reply sent for each, so a
/// duplicate CON gets the same ACK or response again and never reaches a handler twice.
/// </summary>
/// <remarks>
/// Memory is bounded by a capacity. Entries are kept in arrival order; expired ones are dropped
/// from the front, and when the cache is full the oldest entry is evicted to admit the new one
/// (oldest-first eviction). A peer that sprays distinct Message IDs therefore evicts its own and
/// others' oldest entries instead of growing the heap; the cost is that a duplicate arriving after
/// its entry was evicted under such a flood is processed again. Not thread-safe: the endpoint's lock guards it.
/// </remarks>
internal sealed class DeduplicationCache
{
    private readonly Dictionary<Key, Entry> _entries;
    private readonly Queue<Entry> _arrivalOrder = new();
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
    public bool TryGetOrAdd(IPEndPoint remote, ushort messageId, long now, long lifetimeTicks, out Entry entry)
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

        while (_entries.Count >= _capacity && _arrivalOrder.TryDequeue(out Entry? oldest))
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
        _arrivalOrder.Enqueue(entry);
        return false;
    }

    private void RemoveExpired(long now)
    {
        while (_arrivalOrder.TryPeek(out Entry? oldest) && (oldest.Removed || oldest.ExpiresAt <= now))
        {
            _arrivalOrder.Dequeue();
            if (!oldest.Removed)
            {
                oldest.Removed = true;
                _entries.Remove(oldest.Key);
            }
        }
    }

    internal readonly record struct Key(IPEndPoint Remote, ushort MessageId);

    /// <summary>One remembered message: the reply to replay for a duplicate (null while it is being processed).</summary>
    internal sealed class Entry(Key key, long expiresAt)
    {
        public Key Key { get; } = key;

        public long ExpiresAt { get; } = expiresAt;

        public bool Removed { get; set; }

        /// <summary>The ACK, RST or piggybacked response sent for the message, replayed for duplicates.</summary>
        public byte[]? Reply { get; set; }
    }
}
