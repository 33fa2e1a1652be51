using System.Runtime.CompilerServices;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Serialization;
using CoapNet.Transports;

namespace CoapNet.Messaging.Connections;

/// <summary>
/// One CoAP-over-TCP connection (RFC 8323): its CSM handshake, signaling, the requests waiting for the
/// peer's CSM, the requests it carries in both directions, and its timers. A failure here closes this
/// connection only.
/// </summary>
/// <remarks>
/// The coordinator of the connection's state machine, with two collaborators: <see cref="SignalingState"/> (the
/// peer's CSM, held requests, awaited Pongs), guarded by this connection's lock, and <see cref="ConnectionWriter"/>,
/// the queue of frames to write with the backlog under a leaf lock of its own. One read loop parses the frames of each
/// read and handles them in order on its own thread (a <see cref="ReceiveContext"/>, so the server may run a quick
/// handler right there), then writes the responses they produced in one flush. When the handling of one frame does not
/// return (a handler that blocks), the layer's watchdog hands the connection to a new read loop, as the UDP transport
/// hands a stalled socket to a new thread. State changes happen under <see cref="_gate"/>; calls into the exchange
/// layer happen outside it.
/// </remarks>
internal sealed class StreamConnection : PeerChannel, IAdmissionEntry
{
    // What a read loop writes after a read before it reads again, in the writer's batches: the responses of a full read
    // (MaxRequestsInFlight frames at most) and then some; more, queued by other threads meanwhile, is the write loop's.
    private const int MaxDrainBatches = 4;

    private readonly StreamConnectionLayer _layer;

    // Guards _state, _outstanding, _signaling and the order of what is queued to _writer. _incomingInFlight changes atomically.
    private readonly object _gate = new();
    private readonly ConnectionWriter _writer;
    private readonly SignalingState _signaling = new();
    private readonly HashSet<OutgoingRequest> _outstanding = [];
    private readonly CancellationTokenSource _closing = new();
    private readonly TaskCompletionSource _finished = new(TaskCreationOptions.RunContinuationsAsynchronously);

    // Guards _reader, _readLoops and _received: which read loop owns the connection, and the frames it parsed and has
    // not handled yet (a new owner goes on with them). A leaf: nothing is called while it is held.
    private readonly object _readGate = new();
    private readonly Queue<CoapMessage> _received = new();
    private ReadLoop? _reader;
    private int _readLoops;
    private TransportConnection? _transport;
    private CoapStreamChannel? _channel;
    private ITimer? _csmTimer;
    private ITimer? _idleTimer;
    private State _state;
    private int _incomingInFlight;
    private long _lastActivity;

    public StreamConnection(StreamConnectionLayer layer, CoapPeer peer)
        : base(peer, isReliable: true)
    {
        _layer = layer;
        _writer = new ConnectionWriter(this, layer.Options.MaxRequestsInFlight);

        // RFC 8323 section 5.3: our CSM is the first message we send, before anything else can be queued.
        _writer.Enqueue(new OutgoingFrame(Signaling.Csm(layer.Options.MaxMessageSize), null, null));
    }

    private enum State
    {
        Connecting,
        AwaitingCsm,
        Open,
        Releasing,
        Closed,
    }

    /// <inheritdoc/>
    public AddressGroup Group => AddressGroup.Of(Peer.EndPoint.Address);

    /// <summary>How long since a message last came or went.</summary>
    public TimeSpan IdleFor => _layer.Time.GetElapsedTime(Volatile.Read(ref _lastActivity));

    /// <inheritdoc/>
    public override IMessageLayer Layer => _layer;

    /// <inheritdoc/>
    /// <remarks>
    /// Against this connection's own peer limit, not whichever connection the layer now keeps for the peer. Read without the
    /// lock: a 32-bit read is whole, and a CSM that raises the limit meanwhile (RFC 8323 section 5.3.1) only moves the
    /// answer for a message sent as it arrives, which the send checks again under the lock.
    /// </remarks>
    public override bool Fits(CoapMessage message, int tokenLength)
        => CoapStreamChannel.MeasureForSend(message, tokenLength) <= _signaling.PeerMaxMessageSize;

    /// <summary>The state read without the lock, for a check that stays right when the state changes just after it (see each use).</summary>
    private State StateWithoutLock => (State)Volatile.Read(ref System.Runtime.CompilerServices.Unsafe.As<State, int>(ref _state));

    private bool IsClosed
    {
        get
        {
            lock (_gate)
            {
                return _state == State.Closed;
            }
        }
    }

    /// <summary>True once the peer's CSM told us its limits (for tests and diagnostics).</summary>
    public bool PeerCsmReceived
    {
        get
        {
            lock (_gate)
            {
                return _state is State.Open or State.Releasing;
            }
        }
    }

    /// <summary>
    /// The size of a BERT block toward this peer (RFC 8323 section 6): the most whole KiB its
    /// Max-Message-Size leaves room for beside a header and options, when its CSM offered
    /// Block-Wise-Transfer (ours always does) and that is at least 2 KiB; 0 otherwise (plain SZX 0-6 blocks).
    /// </summary>
    public int BertBlockSize
    {
        get
        {
            lock (_gate)
            {
                return _signaling.BertBlockSize;
            }
        }
    }

    /// <summary>The peer's Max-Message-Size: 1152 until its CSM says otherwise (RFC 8323 section 5.3.1).</summary>
    public uint PeerMaxMessageSize
    {
        get
        {
            lock (_gate)
            {
                return _signaling.PeerMaxMessageSize;
            }
        }
    }

    /// <summary>Opens the transport (client side), then runs the connection.</summary>
    public async Task ConnectAsync(IConnectionFactory factory, CancellationToken stopping)
    {
        TransportConnection transport;
        try
        {
            using CancellationTokenSource timeout = new(_layer.Options.ConnectTimeout, _layer.Time);
            using CancellationTokenSource linked = CancellationTokenSource.CreateLinkedTokenSource(timeout.Token, stopping);
            transport = await factory.ConnectAsync(Peer.EndPoint, Peer.HostName, linked.Token).ConfigureAwait(false);
        }
        catch (Exception exception) when (exception is not OutOfMemoryException)
        {
            string why = exception is OperationCanceledException ? $"no connection within {_layer.Options.ConnectTimeout.TotalSeconds:0.###} s" : exception.Message;
            Log.ConnectFailed(_layer.Logger, Peer, why);
            Close(new CoapConnectionException($"Could not connect to {Peer}: {why}", Peer.EndPoint, exception), null);
            Finish();
            return;
        }

        Run(transport);
    }

    /// <summary>Runs the connection over an open transport: timers, the write loop and the read loop.</summary>
    public void Run(TransportConnection transport)
    {
        lock (_gate)
        {
            if (_state == State.Closed)
            {
                // Closed (endpoint disposed) while the transport was being opened.
                _ = CloseTransportAsync(transport);
                return;
            }

            _transport = transport;
            _channel = new CoapStreamChannel(transport, _layer.ReadSerializer, _layer.Time, _layer.Options.SendTimeout);
            _state = State.AwaitingCsm;
            _lastActivity = _layer.Time.GetTimestamp();
            _csmTimer = _layer.Time.CreateTimer(static s => ((StreamConnection)s!).OnCsmTimeout(), this, _layer.Options.CsmTimeout, Timeout.InfiniteTimeSpan);
            if (_layer.Options.IdleTimeout != Timeout.InfiniteTimeSpan)
            {
                _idleTimer = _layer.Time.CreateTimer(static s => ((StreamConnection)s!).OnIdleCheck(), this, _layer.Options.IdleTimeout, Timeout.InfiniteTimeSpan);
            }
        }

        _ = Task.Run(WriteLoopAsync);
        StartReadLoop();
    }

    /// <summary>
    /// True on the thread of the read loop that owns the connection while it handles a read: what is queued to write
    /// then waits for that loop to drain it after the read, with the other responses of the read, instead of waking the
    /// write loop.
    /// </summary>
    internal bool DefersWrites => ReceiveContext.Current is ReadLoop loop && ReferenceEquals(loop, Volatile.Read(ref _reader));

    /// <summary>
    /// The watchdog's look at this connection: a read loop that has been inside the handling of the same frame since the
    /// last look gives the connection to a new read loop, which goes on with the frames after it (at most
    /// <see cref="ReceiveContext.MaxThreads"/> loops, the stalled ones included); the stalled one ends when its call returns.
    /// </summary>
    /// <returns>True when a frame is being handled, so the watchdog should look again.</returns>
    internal bool CheckStall()
    {
        ReadLoop? next = null;
        bool inCall;
        lock (_readGate)
        {
            if (_reader is not { } owner)
            {
                return false;
            }

            long calls = Volatile.Read(ref owner.Calls);
            inCall = Volatile.Read(ref owner.InCall) != 0;
            if (inCall && calls == owner.CallsAtLastCheck && _readLoops < ReceiveContext.MaxThreads && !_closing.IsCancellationRequested)
            {
                next = new ReadLoop();
                _reader = next;
                _readLoops++;
            }
            else
            {
                owner.CallsAtLastCheck = calls;
            }
        }

        if (next is not null)
        {
            Log.ReadLoopStalled(_layer.Logger, Peer);
            _ = Task.Run(() => ReadLoopAsync(next));
        }

        return inCall;
    }

    /// <summary>True when the owning read loop is handling a frame (the watchdog's last look before it stops).</summary>
    internal bool InCall => Volatile.Read(ref _reader) is { } owner && Volatile.Read(ref owner.InCall) != 0;

    private void StartReadLoop()
    {
        ReadLoop loop = new();
        lock (_readGate)
        {
            _reader = loop;
            _readLoops++;
        }

        _ = Task.Run(() => ReadLoopAsync(loop));
    }

    /// <summary>
    /// Queues a request. Before the peer's CSM it is held (RFC 8323 section 5.3: its limits are not known
    /// yet); a request larger than the peer's Max-Message-Size fails with <see cref="ArgumentException"/>.
    /// </summary>
    /// <returns>False when the connection is releasing or closed and takes no new requests.</returns>
    public bool TrySend(OutgoingRequest request, int size)
    {
        Exception? failure = null;
        lock (_gate)
        {
            if (_state is State.Releasing or State.Closed)
            {
                return false;
            }

            request.LowerState = this;
            if (_state is State.Connecting or State.AwaitingCsm)
            {
                _outstanding.Add(request);
                _signaling.Hold(request, size);
                return true;
            }

            if (size > _signaling.PeerMaxMessageSize)
            {
                failure = TooLarge(size, request.Request);
            }
            else
            {
                _outstanding.Add(request);
                _writer.Enqueue(new OutgoingFrame(request.Request, request, null));
            }
        }

        if (failure is not null)
        {
            request.OnFailed(failure);
        }

        return true;
    }

    /// <summary>
    /// True when the peer's limits are known (its CSM arrived, RFC 8323 section 5.3) or never will be (closed or
    /// closing); otherwise <paramref name="known"/> is called on the thread pool when the CSM arrives (null) or the
    /// connection closes first (its reason): within the CSM timeout, which aborts a connection without one.
    /// </summary>
    public bool LimitsKnown(Action<Exception?> known)
    {
        lock (_gate)
        {
            if (_state is not (State.Connecting or State.AwaitingCsm))
            {
                return true;
            }

            _signaling.WaitForLimits(known);
            return false;
        }
    }

    /// <summary>The exchange of a request ended: it no longer keeps the connection busy.</summary>
    public void EndRequest(OutgoingRequest request)
    {
        lock (_gate)
        {
            if (!_outstanding.Remove(request))
            {
                return;
            }

            _signaling.RemoveHeld(request);
        }

        CheckReleased();
    }

    /// <summary>Throws when the peer's CSM is known and <paramref name="size"/> exceeds its Max-Message-Size.</summary>
    public void CheckSize(int size, CoapMessage message)
    {
        lock (_gate)
        {
            if (_state is not (State.Open or State.Releasing) || size <= _signaling.PeerMaxMessageSize)
            {
                return;
            }
        }

        throw TooLarge(size, message);
    }

    /// <summary>Sends the response to a request received on this connection.</summary>
    /// <exception cref="ArgumentException">The response exceeds the peer's Max-Message-Size; nothing was sent.</exception>
    public void SendResponse(CoapMessage response, ReadOnlyMemory<byte> token, int size)
    {
        // No lock of the connection's, once a response (issue 39): the limit is a 32-bit read (a CSM that raises it meanwhile
        // only moves the answer for a response sent as it arrives), the count in flight is atomic, and the writer keeps the
        // order itself: after a close it takes nothing (Close completes it with its last frame in one step).
        if (size > _signaling.PeerMaxMessageSize)
        {
            // Still in flight: the caller may answer again with something smaller.
            throw TooLarge(size, response);
        }

        // Queued before the count goes down: a releasing connection closes once nothing is in flight, and must not close
        // (and complete its writer) between the two, which would drop this response.
        _writer.Enqueue(new OutgoingFrame(response, null, null, token));
        EndIncoming();
    }

    /// <summary>A request of the peer's ends with no response (RFC 7967): it no longer counts as in flight, which a written response would have ended.</summary>
    public void EndWithoutResponse() => EndIncoming();

    /// <summary>Queues a notification (RFC 7641 over RFC 8323 section 7.1: a plain frame); false when the connection is closed.</summary>
    /// <exception cref="ArgumentException">Larger than the peer's Max-Message-Size.</exception>
    public bool TrySendNotification(CoapMessage notification, ReadOnlyMemory<byte> token, int size)
    {
        lock (_gate)
        {
            if (size > _signaling.PeerMaxMessageSize)
            {
                throw TooLarge(size, notification);
            }

            if (_state == State.Closed)
            {
                return false;
            }

            _writer.Enqueue(new OutgoingFrame(notification, null, null, token));
            return true;
        }
    }

    /// <summary>Sends a Ping and completes with the round-trip time when its Pong arrives (RFC 8323 section 5.4).</summary>
    public Task<TimeSpan> PingAsync(CancellationToken cancellationToken)
    {
        PongWaiter waiter = new();
        lock (_gate)
        {
            if (_state is State.Releasing or State.Closed)
            {
                return Task.FromException<TimeSpan>(new CoapConnectionException($"The connection to {Peer} is closing.", Peer.EndPoint));
            }

            // Pongs come back in the order of the Pings on an ordered stream; the queue and the send order agree because both change under this lock.
            _signaling.ExpectPong(waiter);
            _writer.Enqueue(new OutgoingFrame(new CoapMessage { Code = CoapCode.Ping }, null, waiter));
        }

        if (cancellationToken.CanBeCanceled)
        {
            CancellationTokenRegistration registration = cancellationToken.Register(static (s, token) => ((PongWaiter)s!).Completion.TrySetCanceled(token), waiter);
            _ = waiter.Completion.Task.ContinueWith(static (_, r) => ((CancellationTokenRegistration)r!).Dispose(), registration, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        }

        return waiter.Completion.Task;
    }

    /// <summary>
    /// The idlest first: the last time a message came or went; never one with a request in flight either way or a
    /// Ping awaiting its Pong, nor one releasing or closing. Read without the connection's lock (the admission table's
    /// is held): a stale answer only picks another connection.
    /// </summary>
    public long EvictionOrder(long now)
    {
        State state = _state;
        bool busy = _outstanding.Count != 0 || Volatile.Read(ref _incomingInFlight) != 0 || _signaling.PendingPongs != 0;
        return state is State.Open or State.AwaitingCsm && !busy ? Volatile.Read(ref _lastActivity) : long.MaxValue;
    }

    /// <summary>
    /// Closes the connection for a newcomer: with Release (RFC 8323 section 5.5) once the peer's CSM made it
    /// established, so the peer knows to open a new one when it needs it; without a word before that.
    /// </summary>
    public void Evict(string reason)
    {
        bool established;
        lock (_gate)
        {
            established = _state == State.Open;
        }

        Log.Closed(_layer.Logger, Peer, reason);
        Close(new CoapConnectionException($"The connection to {Peer} was released: {reason}.", Peer.EndPoint), established ? Signaling.Release() : null);
    }

    /// <summary>Sends Release (RFC 8323 section 5.5) and closes; completes when the transport is closed.</summary>
    public Task ReleaseAsync(Exception reason)
    {
        Log.Closed(_layer.Logger, Peer, reason.Message);
        Close(reason, Signaling.Release());
        return _finished.Task;
    }

    /// <summary>
    /// Ends the connection once: refuses new work, queues <paramref name="signal"/> (Release or Abort)
    /// as the last frame, fails what waited for the peer's CSM and tells the exchange layer the peer is lost.
    /// The write loop then sends what is queued and closes the transport.
    /// </summary>
    private void Close(Exception reason, CoapMessage? signal)
    {
        List<HeldRequest>? held;
        List<Action<Exception?>>? waiters;
        PongWaiter[] pongs;
        State previous;
        lock (_gate)
        {
            if (_state == State.Closed)
            {
                return;
            }

            previous = _state;
            _state = State.Closed;
            (held, waiters) = _signaling.TakeWaiting();
            pongs = _signaling.TakePongs();
            _outstanding.Clear();
            _writer.Complete(signal is not null && previous != State.Connecting ? new OutgoingFrame(signal, null, null) : null);
            _csmTimer?.Dispose();
            _idleTimer?.Dispose();
        }

        _layer.Remove(this, keepCounted: true);
        _closing.Cancel();
        if (held is not null)
        {
            foreach (HeldRequest request in held)
            {
                request.Request.OnFailed(reason);
            }
        }

        foreach (PongWaiter waiter in pongs)
        {
            waiter.Completion.TrySetException(reason);
        }

        SignalingState.NotifyLimitsWaiters(waiters, reason);
        _layer.Upper.OnPeerLost(Peer, reason);
    }

    /// <summary>Aborts with 7.05 and a diagnostic (RFC 8323 section 5.6), and closes.</summary>
    private void Abort(string diagnostic, CoapOptionNumber? badCsmOption = null)
    {
        _layer.LogAborted(Peer, diagnostic, byPeer: false);
        Close(new CoapConnectionException($"Aborted the connection to {Peer}: {diagnostic}", Peer.EndPoint), Signaling.Abort(diagnostic, badCsmOption));
    }

    private async Task ReadLoopAsync(ReadLoop self)
    {
        CoapStreamChannel channel = _channel!;
        List<CoapMessage> read = [];
        try
        {
            while (true)
            {
                if (!Handle(self))
                {
                    return;
                }

                // The responses the frames of this read produced on this thread leave together, in one flush.
                await _writer.DrainAsync(channel, _layer.Time, MaxDrainBatches).ConfigureAwait(false);

                Task backlog = _writer.WhenBacklogAllowsReading();
                if (!backlog.IsCompleted)
                {
                    await backlog.WaitAsync(_closing.Token).ConfigureAwait(false);
                }

                if (!await channel.ReadAsync(read, _writer.ReadAllowance, _closing.Token).ConfigureAwait(false))
                {
                    Log.Closed(_layer.Logger, Peer, "the peer closed the connection");
                    Close(new CoapConnectionException($"{Peer} closed the connection.", Peer.EndPoint), null);
                    return;
                }

                Volatile.Write(ref _lastActivity, _layer.Time.GetTimestamp());
                lock (_readGate)
                {
                    foreach (CoapMessage message in read)
                    {
                        _received.Enqueue(message);
                    }
                }

                read.Clear();
            }
        }
        catch (OperationCanceledException) when (_closing.IsCancellationRequested)
        {
            // We closed the connection.
        }
        catch (CoapFormatException exception)
        {
            // RFC 8323 section 5.6: a malformed frame cannot be skipped on a stream; only this connection ends.
            Abort($"Malformed frame: {exception.Error}");
        }
        catch (Exception exception) when (exception is not OutOfMemoryException)
        {
            // After our own close the transport's error is only its echo; one warning per connection is enough.
            if (!IsClosed)
            {
                _layer.LogAborted(Peer, exception.Message, byPeer: false);
                Close(new CoapConnectionException($"The connection to {Peer} failed: {exception.Message}", Peer.EndPoint, exception), null);
            }
        }
        finally
        {
            lock (_readGate)
            {
                _readLoops--;
            }
        }
    }

    /// <summary>
    /// Handles the frames read and not yet handled, in order, on this thread, marked as the connection's receive context.
    /// </summary>
    /// <returns>False when a frame closed the connection, or the watchdog gave the connection to another read loop.</returns>
    private bool Handle(ReadLoop self)
    {
        using ReceiveContext.Scope scope = self.EnterBatch();
        while (true)
        {
            CoapMessage? message;
            lock (_readGate)
            {
                Volatile.Write(ref self.InCall, 0);
                if (!ReferenceEquals(_reader, self))
                {
                    message = null;
                }
                else if (!_received.TryDequeue(out message))
                {
                    return true;
                }
                else
                {
                    // The counter and the flag before the watchdog's flag is read (Exchange is a full fence), as the
                    // watchdog clears its flag before it reads them: one of the two always sees the other.
                    Volatile.Write(ref self.Calls, self.Calls + 1);
                    Interlocked.Exchange(ref self.InCall, 1);
                }
            }

            if (message is null)
            {
                // Taken over while a call stalled: the new owner goes on; what this loop queued to write goes out without it.
                _writer.Kick();
                return false;
            }

            _layer.ArmWatchdog();
            Log.Received(_layer.Logger, Peer, message);
            bool open;
            try
            {
                open = OnMessage(message);
            }
            finally
            {
                Volatile.Write(ref self.InCall, 0);
            }

            if (!open)
            {
                return false;
            }
        }
    }

    /// <summary>The frame is about to be written.</summary>
    internal void OnWriting(in OutgoingFrame item)
    {
        // Logged before the write: the answer may arrive (and be logged) before the flush returns.
        if (_layer.Logger.IsEnabled(Microsoft.Extensions.Logging.LogLevel.Debug))
        {
            Log.Sent(_layer.Logger, Peer, item.Token is { } token ? item.Message.WithToken(token) : item.Message);
        }
    }

    /// <summary>
    /// A batch of frames was written and flushed: the connection was active (one reading of the clock for the batch:
    /// under pipelined load a batch holds many responses, and a reading each was 1-2 % of a request's CPU, issue 39),
    /// and each request's wait for its response starts.
    /// </summary>
    internal void OnWritten(List<OutgoingFrame> batch)
    {
        Volatile.Write(ref _lastActivity, _layer.Time.GetTimestamp());
        foreach (OutgoingFrame item in batch)
        {
            item.Request?.OnAwaitingResponse();
        }
    }

    private async Task WriteLoopAsync()
    {
        try
        {
            if (!await _writer.RunAsync(_channel!, _layer.Time).ConfigureAwait(false))
            {
                if (IsClosed)
                {
                    return; // Closed already (the peer went away while our last frames were queued).
                }

                _layer.LogAborted(Peer, "the connection is gone or the peer stopped reading", byPeer: false);
                Close(new CoapConnectionException($"The connection to {Peer} is gone (closed, or it took nothing for {_layer.Options.SendTimeout.TotalSeconds:0.###} s).", Peer.EndPoint), null);
            }
        }
        catch (Exception exception) when (exception is not OutOfMemoryException)
        {
            Close(new CoapConnectionException($"Sending to {Peer} failed: {exception.Message}", Peer.EndPoint, exception), null);
        }
        finally
        {
            await CloseTransportAsync(_transport!).ConfigureAwait(false);
        }
    }

    private async Task CloseTransportAsync(TransportConnection transport)
    {
        // Flushes what the write loop wrote (a final Release or Abort), bounded by the transport's close timeout.
        try
        {
            await transport.DisposeAsync().ConfigureAwait(false);
        }
        catch (Exception exception) when (exception is not OutOfMemoryException)
        {
            Log.Closed(_layer.Logger, Peer, exception.Message);
        }

        _channel?.Dispose();
        Finish();
    }

    private void Finish()
    {
        _layer.Remove(this, keepCounted: false);
        _finished.TrySetResult();
    }

    /// <returns>False when the message closed the connection.</returns>
    private bool OnMessage(CoapMessage message)
    {
        CoapCode code = message.Code;

        // Read without the lock, once a frame: only this read loop ends AwaitingCsm (OnCsm), so it cannot miss that change,
        // and a close by another thread meanwhile is seen by what the frame does next, as it would be after the lock.
        if (StateWithoutLock == State.AwaitingCsm)
        {
            // RFC 8323 section 5.3: the peer's CSM must be its first message.
            if (code != CoapCode.Csm)
            {
                Abort($"The first message must be a CSM (RFC 8323 section 5.3), not {code}.");
                return false;
            }

            return OnCsm(message, first: true);
        }

        if (code.IsSignaling)
        {
            return OnSignal(message);
        }

        if (code.IsRequest)
        {
            OnRequest(message);
        }
        else if (code.IsResponse)
        {
            if (!_layer.Upper.OnResponse(Peer, message))
            {
                Log.Ignored(_layer.Logger, message, Peer, "no outstanding request has its token");
            }
        }
        else
        {
            // RFC 8323 section 4.4: an Empty message is ignored on a stream (it may serve as a keep-alive); so is a reserved class.
            Log.Ignored(_layer.Logger, message, Peer, code.IsEmpty ? "an Empty message" : "a reserved code");
        }

        return true;
    }

    private bool OnCsm(CoapMessage csm, bool first)
    {
        if (!Signaling.TryReadCsm(csm, out uint? maxMessageSize, out bool blockWise, out CoapOptionNumber badOption, out string why))
        {
            Abort(why, badOption);
            return false;
        }

        List<HeldRequest>? held = null;
        List<OutgoingRequest>? tooLarge = null;
        List<Action<Exception?>>? waiters = null;
        lock (_gate)
        {
            if (_state == State.Closed)
            {
                return false;
            }

            _signaling.Apply(maxMessageSize, blockWise);
            if (first)
            {
                _state = State.Open;
                _csmTimer?.Dispose();
                (held, waiters) = _signaling.TakeWaiting();

                // The held requests go out in the order they came, ahead of any sent from now on.
                foreach (HeldRequest request in held!)
                {
                    if (request.Size > _signaling.PeerMaxMessageSize)
                    {
                        _outstanding.Remove(request.Request);
                        (tooLarge ??= []).Add(request.Request);
                    }
                    else
                    {
                        _writer.Enqueue(new OutgoingFrame(request.Request.Request, request.Request, null));
                    }
                }
            }
        }

        Log.CsmReceived(_layer.Logger, Peer, maxMessageSize ?? CoapConnectionOptions.BaseMaxMessageSize);
        SignalingState.NotifyLimitsWaiters(waiters, null);
        if (tooLarge is not null)
        {
            foreach (OutgoingRequest request in tooLarge)
            {
                request.OnFailed(TooLarge(CoapStreamChannel.MeasureForSend(request.Request), request.Request));
            }
        }

        return true;
    }

    private bool OnSignal(CoapMessage signal)
    {
        CoapCode code = signal.Code;
        if (code == CoapCode.Csm)
        {
            // RFC 8323 section 5.3: a later CSM updates the settings it carries.
            return OnCsm(signal, first: false);
        }

        if (code == CoapCode.Ping)
        {
            lock (_gate)
            {
                if (_state != State.Closed)
                {
                    _writer.Enqueue(new OutgoingFrame(Signaling.Pong(signal), null, null));
                }
            }

            return true;
        }

        if (code == CoapCode.Pong)
        {
            PongWaiter? waiter;
            lock (_gate)
            {
                waiter = _signaling.TakePong();
            }

            if (waiter is null)
            {
                Log.Ignored(_layer.Logger, signal, Peer, "no Ping is waiting");
            }
            else
            {
                waiter.Completion.TrySetResult(_layer.Time.GetElapsedTime(waiter.Start));
            }

            return true;
        }

        if (code == CoapCode.Release)
        {
            // RFC 8323 section 5.5: the peer will close; no new requests go on this connection (a new one is opened
            // for them), the ones in flight both ways may finish, then we close.
            Log.Closed(_layer.Logger, Peer, $"the peer released the connection: {Signaling.Diagnostic(signal)}");
            lock (_gate)
            {
                if (_state == State.Open)
                {
                    _state = State.Releasing;
                }
            }

            _layer.Remove(this, keepCounted: true);
            return CheckReleased();
        }

        if (code == CoapCode.Abort)
        {
            // RFC 8323 section 5.6: the peer has given up on the connection; we close it without answering.
            string diagnostic = Signaling.Diagnostic(signal);
            _layer.LogAborted(Peer, diagnostic, byPeer: true);
            Close(new CoapConnectionException($"{Peer} aborted the connection: {diagnostic}", Peer.EndPoint), null);
            return false;
        }

        // RFC 8323 section 5: signal codes this implementation does not know carry nothing it must act on.
        Log.Ignored(_layer.Logger, signal, Peer, "an unknown signaling code");
        return true;
    }

    private void OnRequest(CoapMessage request)
    {
        // Counted atomically rather than under the lock: one lock less a request (issue 39). The answers' decrements are
        // atomic too (ReleaseIncoming); a request refused here gives its count back.
        bool overloaded = Interlocked.Increment(ref _incomingInFlight) > _layer.Options.MaxRequestsInFlight;
        if (overloaded)
        {
            Interlocked.Decrement(ref _incomingInFlight);
            // Beyond MaxRequestsInFlight the handler is spared: 5.03 at once, as a server sheds load (RFC 7252 section 5.9.3.4).
            Log.Overloaded(_layer.Logger, Peer, _layer.Options.MaxRequestsInFlight);
            CoapMessage busy = new() { Code = CoapCode.ServiceUnavailable, Token = request.Token };
            busy.SetPayload("Too many requests in flight on this connection.");
            lock (_gate)
            {
                if (_state != State.Closed)
                {
                    _writer.Enqueue(new OutgoingFrame(busy, null, null));
                }
            }

            return;
        }

        _layer.Upper.OnRequest(CreateExchange(request));
    }

    /// <summary>
    /// A request of the peer's is answered or ended: it stops counting as in flight, and a releasing connection with
    /// nothing left in flight closes (RFC 8323 section 5.5).
    /// </summary>
    private void EndIncoming()
    {
        ReleaseIncoming();

        // The state is read after the count went down (an atomic, a full fence): a release that began meanwhile either is
        // seen here or sees the count itself. Only a releasing connection can be done, so the others take no lock.
        if (StateWithoutLock == State.Releasing)
        {
            CheckReleased();
        }
    }

    /// <summary>Takes one request off the count in flight, never below zero.</summary>
    private void ReleaseIncoming()
    {
        int current;
        do
        {
            current = Volatile.Read(ref _incomingInFlight);
            if (current == 0)
            {
                return;
            }
        }
        while (Interlocked.CompareExchange(ref _incomingInFlight, current - 1, current) != current);
    }

    // The one place that builds a server-side exchange; the exchange layer answers it through SendResponse.
    private CoapExchange CreateExchange(CoapMessage request) => new(request, this);

    /// <returns>False when the release is complete and the connection closed.</returns>
    private bool CheckReleased()
    {
        lock (_gate)
        {
            if (_state != State.Releasing || _outstanding.Count != 0 || Volatile.Read(ref _incomingInFlight) != 0)
            {
                return true;
            }
        }

        Close(new CoapConnectionException($"{Peer} released the connection.", Peer.EndPoint), null);
        return false;
    }

    private void OnCsmTimeout()
    {
        lock (_gate)
        {
            if (_state != State.AwaitingCsm)
            {
                return;
            }
        }

        Abort($"No CSM within {_layer.Options.CsmTimeout.TotalSeconds:0.###} s (RFC 8323 section 5.3).");
    }

    private void OnIdleCheck()
    {
        TimeSpan idle = _layer.Options.IdleTimeout;
        TimeSpan quiet = _layer.Time.GetElapsedTime(Volatile.Read(ref _lastActivity));
        lock (_gate)
        {
            if (_state == State.Closed)
            {
                return;
            }

            bool busy = _outstanding.Count != 0 || Volatile.Read(ref _incomingInFlight) != 0 || _signaling.PendingPongs != 0;
            if (busy || quiet < idle)
            {
                _idleTimer?.Change(busy ? idle : idle - quiet, Timeout.InfiniteTimeSpan);
                return;
            }
        }

        Log.Closed(_layer.Logger, Peer, $"idle for {quiet.TotalSeconds:0.###} s");
        Close(new CoapConnectionException($"The connection to {Peer} was idle for {idle.TotalSeconds:0.###} s and was released.", Peer.EndPoint), Signaling.Release());
    }

    /// <summary>
    /// One read loop of the connection, the receive context its frames are handled in, and what the watchdog reads of it:
    /// how many frames it has handled, and whether it is inside one.
    /// </summary>
    private sealed class ReadLoop : ReceiveContext
    {
        public long Calls;
        public int InCall;

        // The watchdog's own: Calls when it last looked.
        public long CallsAtLastCheck = -1;

        /// <inheritdoc/>
        public override bool HandOff => false;
    }

    // Out of its callers' lines (a response's send among them), which would otherwise clear a frame for its text on every call.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private ArgumentException TooLarge(int size, CoapMessage message)
        => new(
            $"The message ({message.Code}) is {size} bytes; {Peer} accepts at most {_signaling.PeerMaxMessageSize} (the Max-Message-Size of its CSM, RFC 8323 section 5.3.1). "
                + "Larger bodies need block-wise transfer (RFC 7959).",
            nameof(message));
}
