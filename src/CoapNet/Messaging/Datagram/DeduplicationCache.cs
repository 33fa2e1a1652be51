using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics.X86;
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
/// <para>
/// Every request passes through here, so nothing is allocated per message (issue 11): an entry is a
/// slot in an array that is reused once the entry expires or is evicted, the queues hold
/// <see cref="Ticket"/>s by value, and the index maps a key to its slot. A ticket carries the slot's
/// generation, so a holder whose entry was evicted meanwhile (an exchange recording its reply late)
/// finds the slot changed and records nothing, instead of writing into the slot's next entry.
/// A reply of up to <see cref="InlineReplyLength"/> bytes (an ACK or RST, or a small piggybacked response) is
/// copied into its slot, so the layer sends the reply from a pooled buffer; only a larger one gets an array.
/// </para>
/// </remarks>
internal sealed class DeduplicationCache
{
    // The index from key to slot: open addressing with linear probing, each entry (hash << 32) | (slot + 1), 0 for none,
    // at most half full. Under load the cache is at its capacity and every request evicts the oldest entry and adds its
    // own: with a Dictionary that was a bucket and an entry to reach for each, cache misses in a 16,384-entry table
    // (0.24 us of a UDP request's 4.5, issue 39). Here a probe reads one line of the table, which holds the hashes, and
    // a removal finds its entry from the slot's stored hash, without comparing keys.
    private long[] _table;
    private int _count;

    // One queue per lifetime (CON: EXCHANGE_LIFETIME, NON: NON_LIFETIME): within each, arrival order is expiry order.
    private readonly List<(long Lifetime, Queue<Ticket> Queue)> _queues = new(2);
    private readonly int _capacity;
    private Slot[] _slots;
    private int _slotsUsed;
    private int _free = -1;

    public DeduplicationCache(int capacity)
    {
        _capacity = capacity;
        int initial = Math.Min(capacity, 1024);
        _table = new long[TableSizeFor(initial)];
        _slots = new Slot[initial];
    }

    public int Count => _count;

    /// <summary>How many live entries were evicted to make room (a sign of a flood).</summary>
    public long Evictions { get; private set; }

    /// <summary>
    /// Finds an unexpired entry for (remote, Message ID), or adds one. For a duplicate, <paramref name="reply"/>
    /// and <paramref name="inProgress"/> are what the first copy recorded; for a new message, <paramref name="ticket"/>
    /// names its entry for <see cref="Record"/>.
    /// </summary>
    /// <returns>True when the message is a duplicate.</returns>
    /// <remarks>
    /// The reply of a duplicate is a copy (duplicates are rare), so it may be sent outside the lock. A new confirmable
    /// request's <paramref name="exchange"/> is kept in its entry while no reply is recorded, so a duplicate can be
    /// acknowledged; its ticket is set here, in the same lock as the entry, so a duplicate on another receive thread
    /// never finds the exchange without it (one lock a request instead of two, issue 39).
    /// </remarks>
    public bool TryGetOrAdd(CoapPeer remote, ushort messageId, long now, long lifetimeTicks, out Ticket ticket, out byte[]? reply, out CoapExchange? inProgress, CoapExchange? exchange = null)
    {
        RemoveExpired(now);
        Key key = new(remote, messageId);
        uint hash = Hash(key);
        if (_count >= _capacity)
        {
            // Evicted before the lookup below, so that the position it finds stays where it is.
            EvictFirstToExpire(key);
        }

        int position = Find(key, hash);
        int index;
        if (position >= 0)
        {
            index = (int)_table[position] - 1;
            ref Slot existing = ref _slots[index];
            if (existing.ExpiresAt > now)
            {
                ticket = new Ticket(index, existing.Generation);
                reply = existing.CopyReply();
                inProgress = existing.Exchange;
                return true;
            }

            // Expired but still queued behind a longer-lived entry: its slot is freed (its ticket goes stale) and the key
            // gets a new one, in the same place of the index.
            Free(index);
            index = Allocate(key, hash, now + lifetimeTicks);
            _table[position] = Entry(hash, index);
        }
        else
        {
            index = Allocate(key, hash, now + lifetimeTicks);
            if (++_count > _table.Length / 2)
            {
                Grow();
                position = EmptyFrom(_table, hash);
            }
            else
            {
                position = ~position;
            }

            _table[position] = Entry(hash, index);
        }

        ticket = new Ticket(index, _slots[index].Generation);
        if (exchange is not null)
        {
            exchange.LowerTicket = ticket.Packed;
            _slots[index].Exchange = exchange;
        }

        QueueFor(lifetimeTicks).Enqueue(ticket);
        reply = null;
        inProgress = null;
        return false;
    }

    /// <summary>The reply sent for the message, replayed for its duplicates; the exchange is no longer in progress. Nothing when the entry is gone.</summary>
    public void Record(Ticket ticket, ReadOnlySpan<byte> reply)
    {
        if (IsLive(ticket))
        {
            ref Slot slot = ref _slots[ticket.Index];
            if (reply.Length <= InlineReplyLength)
            {
                reply.CopyTo(slot.InlineReply);
                slot.LargeReply = null;
            }
            else
            {
                slot.LargeReply = reply.ToArray();
            }

            slot.ReplyLength = reply.Length;
            slot.Exchange = null;
        }
    }

    /// <summary>
    /// The longest reply kept inside its slot: 64 bytes hold an ACK or RST, and a piggybacked response with a
    /// 8-byte token and some 40 bytes of payload and options, the common reply of a constrained device.
    /// </summary>
    internal const int InlineReplyLength = 64;

    // Freeing a slot moves its generation on, so a ticket names a live entry exactly while the generations agree.
    private bool IsLive(Ticket ticket) => ticket.Index < _slotsUsed && _slots[ticket.Index].Generation == ticket.Generation;

    private Queue<Ticket> QueueFor(long lifetimeTicks)
    {
        foreach ((long lifetime, Queue<Ticket> queue) in _queues)
        {
            if (lifetime == lifetimeTicks)
            {
                return queue;
            }
        }

        Queue<Ticket> added = new();
        _queues.Add((lifetimeTicks, added));
        return added;
    }

    private int Allocate(Key key, uint hash, long expiresAt)
    {
        int index;
        if (_free >= 0)
        {
            index = _free;
            _free = _slots[index].NextFree;
        }
        else
        {
            if (_slotsUsed == _slots.Length)
            {
                Array.Resize(ref _slots, Math.Min(_slots.Length * 2, Math.Max(_capacity, 1)));
            }

            index = _slotsUsed++;
        }

        ref Slot slot = ref _slots[index];
        slot.Key = key;
        slot.Hash = hash;
        slot.ExpiresAt = expiresAt;
        return index;
    }

    // A key's hash: the peer's (cached in it) and the Message ID, mixed so that consecutive IDs of one peer spread over
    // the table rather than fill a run of it.
    private static uint Hash(Key key)
    {
        uint h = (uint)key.Remote.GetHashCode() ^ (key.MessageId * 0x9E3779B1u);
        h ^= h >> 15;
        h *= 0x2C1B3C6Du;
        return h ^ (h >> 12);
    }

    private static long Entry(uint hash, int slot) => ((long)hash << 32) | (uint)(slot + 1);

    // Where a probe for an entry starts: its hash's place in a table of mask + 1 places.
    private static int Home(long entry, int mask) => (int)(uint)(entry >> 32) & mask;

    // The first empty place from a hash's home: where an entry not in the table goes.
    private static int EmptyFrom(long[] table, uint hash)
    {
        int mask = table.Length - 1;
        int i = (int)hash & mask;
        while (table[i] != 0)
        {
            i = (i + 1) & mask;
        }

        return i;
    }

    // The index's size for a number of slots: a power of two at least twice it, so it is at most half full.
    private static int TableSizeFor(int slots) => (int)Math.Max(16, System.Numerics.BitOperations.RoundUpToPowerOf2((uint)slots * 2));

    /// <summary>The position of <paramref name="key"/> in the index, or the complement of the empty position where it would go.</summary>
    private int Find(Key key, uint hash)
    {
        long[] table = _table;
        int mask = table.Length - 1;
        for (int i = (int)hash & mask; ; i = (i + 1) & mask)
        {
            long entry = table[i];
            if (entry == 0)
            {
                return ~i;
            }

            if ((uint)(entry >> 32) == hash && _slots[(int)entry - 1].Key == key)
            {
                return i;
            }
        }
    }

    /// <summary>Takes the slot's entry out of the index, moving later entries of its run back so every probe still finds them.</summary>
    private void RemoveFromIndex(int index)
    {
        long[] table = _table;
        int mask = table.Length - 1;
        int hole = (int)_slots[index].Hash & mask;
        while ((int)table[hole] != index + 1)
        {
            hole = (hole + 1) & mask;
        }

        // Backward-shift deletion (linear probing): an entry after the hole moves into it unless its home position lies
        // cyclically after the hole and at or before the entry's place (then a probe from its home never crosses the hole).
        for (int next = (hole + 1) & mask; table[next] != 0; next = (next + 1) & mask)
        {
            int home = Home(table[next], mask);
            bool stays = hole <= next ? home > hole && home <= next : home > hole || home <= next;
            if (!stays)
            {
                table[hole] = table[next];
                hole = next;
            }
        }

        table[hole] = 0;
        _count--;
    }

    private void Grow()
    {
        long[] larger = new long[_table.Length * 2];
        foreach (long entry in _table)
        {
            if (entry != 0)
            {
                larger[EmptyFrom(larger, (uint)(entry >> 32))] = entry;
            }
        }

        _table = larger;
    }

    /// <summary>Frees a slot (its key is removed from the index by the caller or replaced): its generation moves on, so its tickets go stale.</summary>
    private void Free(int index)
    {
        ref Slot slot = ref _slots[index];
        slot.Generation++;
        slot.Key = default;
        slot.ReplyLength = 0;
        slot.LargeReply = null;
        slot.Exchange = null;
        slot.NextFree = _free;
        _free = index;
    }

    private void RemoveExpired(long now)
    {
        foreach ((long _, Queue<Ticket> queue) in _queues)
        {
            while (queue.TryPeek(out Ticket oldest))
            {
                bool live = IsLive(oldest);
                if (live && _slots[oldest.Index].ExpiresAt > now)
                {
                    break;
                }

                queue.Dequeue();
                if (live)
                {
                    RemoveFromIndex(oldest.Index);
                    Free(oldest.Index);
                }
            }
        }
    }

    /// <summary>Evicts the live entry that expires first, unless it is <paramref name="spared"/> (the message being looked up, which is then a duplicate).</summary>
    private void EvictFirstToExpire(Key spared)
    {
        while (_count >= _capacity)
        {
            Queue<Ticket>? from = null;
            long first = long.MaxValue;
            foreach ((long _, Queue<Ticket> queue) in _queues)
            {
                // Stale tickets at a front are dropped on the way: they hold no entry.
                while (queue.TryPeek(out Ticket head) && !IsLive(head))
                {
                    queue.Dequeue();
                }

                if (queue.TryPeek(out Ticket live) && _slots[live.Index].ExpiresAt < first)
                {
                    from = queue;
                    first = _slots[live.Index].ExpiresAt;
                }
            }

            if (from is null || _slots[from.Peek().Index].Key == spared)
            {
                return;
            }

            Ticket evicted = from.Dequeue();
            RemoveFromIndex(evicted.Index);
            Free(evicted.Index);
            Evictions++;
            PrefetchNextVictim(from);
        }
    }

    /// <summary>
    /// Starts fetching the slot that the next eviction reads into the processor's cache. A full cache evicts its oldest
    /// entry for every new message, and that slot was last touched a capacity of messages ago (16,384 by default): its
    /// cache miss was most of the cost of a UDP request's deduplication (issue 39). Fetched now, it arrives while this
    /// request's work goes on. Only a hint: on a processor without the instruction nothing is done.
    /// </summary>
    private unsafe void PrefetchNextVictim(Queue<Ticket> queue)
    {
        if (Sse.IsSupported && queue.TryPeek(out Ticket next) && (uint)next.Index < (uint)_slotsUsed)
        {
            // A slot spans up to three cache lines; the fields an eviction reads (the key, its hash, the expiry, the
            // generation) are in the first 64 bytes. A prefetch of an address the collector has moved since is harmless.
            byte* slot = (byte*)Unsafe.AsPointer(ref _slots[next.Index]);
            Sse.Prefetch0(slot);
            Sse.Prefetch0(slot + 63);
        }
    }

    internal readonly record struct Key(CoapPeer Remote, ushort MessageId);

    /// <summary>Names one entry: its slot, and the slot's generation when the entry was made.</summary>
    internal readonly record struct Ticket(int Index, int Generation)
    {
        /// <summary>
        /// Bit 31 of a packed ticket, which an index (below 2^31) never sets: the separate-ACK watch marks a confirmable
        /// request's exchange with it (<see cref="SeparateAckWatch.IsWatched"/>), and <see cref="Unpack"/> ignores it.
        /// </summary>
        public const long WatchedMark = 1L << 31;

        /// <summary>The ticket in one number, for an exchange to carry.</summary>
        public long Packed => ((long)Generation << 32) | (uint)Index;

        public static Ticket Unpack(long packed) => new((int)((uint)packed & ~(uint)WatchedMark), (int)(packed >> 32));
    }

    /// <summary>One remembered message: the reply to replay for a duplicate (none while it is being processed).</summary>
    private struct Slot
    {
        public Key Key;

        /// <summary>The key's hash, by which its entry in the index is found again.</summary>
        public uint Hash;
        public long ExpiresAt;
        public int Generation;
        public int NextFree;

        /// <summary>The length of the ACK, RST or piggybacked response sent for the message, replayed for duplicates; 0 for none yet.</summary>
        public int ReplyLength;

        /// <summary>The reply when it is longer than <see cref="InlineReplyLength"/>.</summary>
        public byte[]? LargeReply;

        /// <summary>For a request: its exchange, so a duplicate arriving before any reply can be acknowledged.</summary>
        public CoapExchange? Exchange;

        /// <summary>The reply when it fits here.</summary>
        public ReplyBytes InlineReply;

        /// <summary>A copy of the recorded reply, or null when there is none.</summary>
        public readonly byte[]? CopyReply()
            => ReplyLength == 0 ? null : LargeReply ?? ((ReadOnlySpan<byte>)InlineReply)[..ReplyLength].ToArray();
    }

    [InlineArray(InlineReplyLength)]
    private struct ReplyBytes
    {
        private byte _first;
    }
}
