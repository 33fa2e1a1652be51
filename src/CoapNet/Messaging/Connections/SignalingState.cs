namespace CoapNet.Messaging.Connections;

/// <summary>
/// One connection's side of RFC 8323 section 5 signaling: what the peer's CSMs told us (section 5.3), the requests
/// and callers that wait for the first one, and the Pings that wait for their Pong (section 5.4).
/// </summary>
/// <remarks>
/// No lock of its own: <see cref="StreamConnection"/>'s lock guards it, because each of its decisions must be atomic
/// with the connection's state and its send queue: a request is either held or queued behind the held ones, a
/// response is checked against the Max-Message-Size it is queued under, and a Ping's place among the awaited Pongs is
/// its place in the queue.
/// </remarks>
internal sealed class SignalingState
{
    /// <summary>Room left in a BERT message for its header, token and options (the body takes the rest).</summary>
    private const int BertOverhead = 256;

    private readonly Queue<PongWaiter> _pongs = new();
    private List<HeldRequest>? _held = [];
    private List<Action<Exception?>>? _limitsWaiters;

    /// <summary>The peer's Max-Message-Size: 1152 until its CSM says otherwise (RFC 8323 section 5.3.1).</summary>
    public uint PeerMaxMessageSize { get; private set; } = CoapConnectionOptions.BaseMaxMessageSize;

    /// <summary>
    /// The size of a BERT block toward this peer (RFC 8323 section 6): the most whole KiB its
    /// Max-Message-Size leaves room for beside a header and options, when its CSM offered
    /// Block-Wise-Transfer (ours always does) and that is at least 2 KiB; 0 otherwise (plain SZX 0-6 blocks).
    /// </summary>
    public int BertBlockSize
    {
        get
        {
            long units = (PeerMaxMessageSize - BertOverhead) / 1024;
            return _peerBlockWise && units >= 2 ? (int)Math.Min(units, 1024) * 1024 : 0;
        }
    }

    /// <summary>Pings sent whose Pong has not come.</summary>
    public int PendingPongs => _pongs.Count;

    private bool _peerBlockWise;

    /// <summary>Holds a request until the peer's first CSM says how large it may be (RFC 8323 section 5.3).</summary>
    public void Hold(OutgoingRequest request, int size) => _held!.Add(new HeldRequest(request, size));

    /// <summary>Drops a held request whose exchange ended; nothing when none is held any more.</summary>
    public void RemoveHeld(OutgoingRequest request)
    {
        if (_held is null)
        {
            return;
        }

        for (int i = 0; i < _held.Count; i++)
        {
            if (_held[i].Request == request)
            {
                _held.RemoveAt(i);
                break;
            }
        }
    }

    /// <summary>Calls <paramref name="known"/> (through <see cref="NotifyLimitsWaiters"/>) when the first CSM comes or the connection closes.</summary>
    public void WaitForLimits(Action<Exception?> known) => (_limitsWaiters ??= []).Add(known);

    /// <summary>
    /// A CSM's settings (RFC 8323 section 5.3): a Max-Message-Size replaces the last one; Block-Wise-Transfer, once
    /// announced, stands for the connection (section 5.3.2).
    /// </summary>
    public void Apply(uint? maxMessageSize, bool blockWise)
    {
        if (maxMessageSize is uint size)
        {
            PeerMaxMessageSize = size;
        }

        _peerBlockWise |= blockWise;
    }

    /// <summary>The first CSM came or the connection closed: hands over the held requests and the limits' waiters, in order; none is held again.</summary>
    public (List<HeldRequest>? Held, List<Action<Exception?>>? Waiters) TakeWaiting()
    {
        (List<HeldRequest>? held, List<Action<Exception?>>? waiters) = (_held, _limitsWaiters);
        _held = null;
        _limitsWaiters = null;
        return (held, waiters);
    }

    /// <summary>A Ping was queued; its Pong comes back in the same order on an ordered stream (RFC 8323 section 5.4).</summary>
    public void ExpectPong(PongWaiter waiter) => _pongs.Enqueue(waiter);

    /// <summary>The waiter of the Pong that came, or null when no Ping is waiting.</summary>
    public PongWaiter? TakePong() => _pongs.TryDequeue(out PongWaiter? waiter) ? waiter : null;

    /// <summary>The connection closed: every Ping still waiting.</summary>
    public PongWaiter[] TakePongs()
    {
        PongWaiter[] pongs = _pongs.ToArray();
        _pongs.Clear();
        return pongs;
    }

    /// <summary>
    /// Tells those who waited for the peer's limits: on the thread pool, since what they do next (a stage sizing a body,
    /// reading its first block from a caller's stream) must not run on the read loop. Call outside the lock.
    /// </summary>
    public static void NotifyLimitsWaiters(List<Action<Exception?>>? waiters, Exception? failure)
    {
        if (waiters is null)
        {
            return;
        }

        foreach (Action<Exception?> waiter in waiters)
        {
            ThreadPool.UnsafeQueueUserWorkItem(static state => state.Waiter(state.Failure), (Waiter: waiter, Failure: failure), preferLocal: false);
        }
    }
}

/// <summary>A request held until the peer's first CSM, with its frame size to check against the CSM's Max-Message-Size.</summary>
internal readonly record struct HeldRequest(OutgoingRequest Request, int Size);

/// <summary>A Ping waiting for its Pong (RFC 8323 section 5.4): completes with the round trip from when the Ping was written.</summary>
internal sealed class PongWaiter
{
    public TaskCompletionSource<TimeSpan> Completion { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public long Start { get; set; }
}
