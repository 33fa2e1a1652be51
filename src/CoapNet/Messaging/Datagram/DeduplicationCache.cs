using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
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
    private readonly Dictionary<Key, int> _index;

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
        _index = new Dictionary<Key, int>(initial);
        _slots = new Slot[initial];
    }

    public int Count => _index.Count;

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
        if (_index.Count >= _capacity)
        {
            // Evicted before the lookup below, so that the dictionary is not changed while a reference into it is held.
            EvictFirstToExpire(key);
        }

        ref int index = ref CollectionsMarshal.GetValueRefOrAddDefault(_index, key, out bool exists);
        if (exists)
        {
            ref Slot existing = ref _slots[index];
            if (existing.ExpiresAt > now)
            {
                ticket = new Ticket(index, existing.Generation);
                reply = existing.CopyReply();
                inProgress = existing.Exchange;
                return true;
            }

            // Expired but still queued behind a longer-lived entry: its slot is freed (its ticket goes stale) and the key gets a new one.
            Free(index);
        }

        index = Allocate(key, now + lifetimeTicks);
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

    private int Allocate(Key key, long expiresAt)
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
        slot.ExpiresAt = expiresAt;
        return index;
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
                    _index.Remove(_slots[oldest.Index].Key);
                    Free(oldest.Index);
                }
            }
        }
    }

    /// <summary>Evicts the live entry that expires first, unless it is <paramref name="spared"/> (the message being looked up, which is then a duplicate).</summary>
    private void EvictFirstToExpire(Key spared)
    {
        while (_index.Count >= _capacity)
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
            _index.Remove(_slots[evicted.Index].Key);
            Free(evicted.Index);
            Evictions++;
        }
    }

    internal readonly record struct Key(CoapPeer Remote, ushort MessageId);

    /// <summary>Names one entry: its slot, and the slot's generation when the entry was made.</summary>
    internal readonly record struct Ticket(int Index, int Generation)
    {
        /// <summary>The ticket in one number, for an exchange to carry.</summary>
        public long Packed => ((long)Generation << 32) | (uint)Index;

        public static Ticket Unpack(long packed) => new((int)(uint)packed, (int)(packed >> 32));
    }

    /// <summary>One remembered message: the reply to replay for a duplicate (none while it is being processed).</summary>
    private struct Slot
    {
        public Key Key;
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
