using CoapNet.Channels;
using CoapNet.Messaging.Retransmission;

namespace CoapNet.Messaging.Datagram;

/// <summary>A request waiting for an NSTART slot (RFC 7252 section 4.7): started when an earlier one frees it.</summary>
/// <remarks>An interface rather than a delegate, so that a request does not allocate one to say how it starts.</remarks>
internal interface ISlotWaiter
{
    /// <summary>Starts the request, which now holds the slot.</summary>
    void StartWithSlot();
}

/// <summary>
/// What the datagram message layer keeps per peer: the state of RFC 7252
/// section 4 in one place (the next Message ID, the NSTART count and the queue of requests
/// waiting for a slot). Created when a message is first sent to the peer; dropped when idle.
/// </summary>
internal sealed class PeerMessageState
{
    private readonly Queue<ISlotWaiter> _waiting = new();
    private ushort _nextMessageId;

    public PeerMessageState(CoapPeer peer, ushort firstMessageId, long now, CoapPeerRetransmission retransmission)
    {
        Peer = peer;
        _nextMessageId = firstMessageId;
        LastUsed = now;
        Retransmission = retransmission;
    }

    /// <summary>The retransmission policy's state for this peer: timeouts, back-off and NSTART.</summary>
    public CoapPeerRetransmission Retransmission { get; }

    /// <summary>The peer.</summary>
    public CoapPeer Peer { get; }

    /// <summary>Outstanding interactions (RFC 7252 section 4.7).</summary>
    public int Outstanding { get; private set; }

    /// <summary>Requests waiting for an NSTART slot.</summary>
    public int WaitingCount => _waiting.Count;

    /// <summary>The timestamp (TimeProvider ticks) of the last use, for idle expiry.</summary>
    public long LastUsed { get; set; }

    /// <summary>True when nothing is outstanding or waiting, so the state may be dropped once idle.</summary>
    public bool IsIdle => Outstanding == 0 && _waiting.Count == 0;

    /// <summary>
    /// RFC 7252 section 4.4: Message IDs toward one peer come from a counter started at a random
    /// value, so the same ID is not reused within EXCHANGE_LIFETIME unless 65536 messages are sent.
    /// </summary>
    public ushort NextMessageId() => _nextMessageId++;

    /// <summary>Takes an NSTART slot now, or queues <paramref name="waiter"/> to start when one frees up.</summary>
    /// <returns>True when the slot was taken and the caller should start now.</returns>
    public bool TryTakeSlot(ISlotWaiter waiter)
    {
        // A policy that answered less than 1 would leave every request queued forever: one is always allowed.
        if (Outstanding < Math.Max(1, Retransmission.NStart))
        {
            Outstanding++;
            return true;
        }

        _waiting.Enqueue(waiter);
        return false;
    }

    /// <summary>Frees a slot; returns the next waiting request (which now holds the slot) when NSTART allows it to start, if any.</summary>
    public ISlotWaiter? ReleaseSlot()
    {
        Outstanding--;
        return TakeWaiter();
    }

    /// <summary>
    /// A waiting request that may start now (it takes a slot), or null. NSTART is read each time, as the policy says it
    /// now: a congestion window that shrank holds the queue back until enough slots have freed, one that grew lets more
    /// than one start when a slot frees.
    /// </summary>
    public ISlotWaiter? TakeWaiter()
    {
        if (_waiting.Count > 0 && Outstanding < Math.Max(1, Retransmission.NStart))
        {
            Outstanding++;
            return _waiting.Dequeue();
        }

        return null;
    }

    /// <summary>Removes a waiting request that was canceled before it got a slot.</summary>
    public bool RemoveWaiting(ISlotWaiter waiter)
    {
        int count = _waiting.Count;
        bool removed = false;
        for (int i = 0; i < count; i++)
        {
            ISlotWaiter item = _waiting.Dequeue();
            if (!removed && ReferenceEquals(item, waiter))
            {
                removed = true;
                continue;
            }

            _waiting.Enqueue(item);
        }

        return removed;
    }
}
