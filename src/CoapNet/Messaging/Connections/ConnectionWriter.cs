using CoapNet.Channels;
using CoapNet.Messages;

namespace CoapNet.Messaging.Connections;

/// <summary>
/// The single writer of one CoAP-over-TCP connection (RFC 8323): a queue of frames and one drainer at a time that
/// writes them in order, so frames never interleave and our CSM, queued first, is always the first one (section 5.3).
/// It also counts the frames not yet written, the backlog the read loop waits on.
/// </summary>
/// <remarks>
/// Two callers drain: the connection's read loop, once it has handled the frames of one read (their responses, queued
/// while it handled them on its own thread, leave in one flush, with no hand-off to another thread), and the write
/// loop (<see cref="RunAsync"/>), woken only for what another thread queues (an async handler's response, a
/// notification, a request of ours). Whoever drains writes everything queued, then flushes once; frames queued
/// meanwhile are written by the same drainer before it lets go, so nothing waits for a drainer that has finished.
/// <para>
/// <see cref="Enqueue"/> is called under <see cref="StreamConnection"/>'s lock, so the order of the frames is the
/// order of the connection's state changes (the held requests before later ones, a Release or Abort last). The
/// queue has a leaf lock of its own, taken inside the connection's and never the other way round; nothing is called
/// while it is held. One drainer at a time is what makes <see cref="CoapStreamChannel.Write"/> safe without a lock of
/// its own.
/// </para>
/// </remarks>
internal sealed class ConnectionWriter
{
    // Frames written before one flush: enough to answer a pipelined read in one send, few enough that the first of them
    // does not wait long behind the others. Bytes bound it too: past FlushBytes the batch is flushed, so the output
    // pipe's pause threshold still slows a drainer down by its flushes.
    private const int MaxFramesPerFlush = 64;
    private const int FlushBytes = 32 * 1024;

    private readonly object _gate = new();
    private readonly Queue<OutgoingFrame> _queue = new();
    private readonly List<OutgoingFrame> _taken = [];
    private readonly StreamConnection _connection;
    private readonly int _maxBacklog;
    private int _backlog;
    private bool _draining;
    private bool _completed;
    private bool _failed;
    private TaskCompletionSource? _wake;
    private TaskCompletionSource? _drained;

    public ConnectionWriter(StreamConnection connection, int maxBacklog)
    {
        _connection = connection;
        _maxBacklog = maxBacklog;
    }

    /// <summary>How many more frames may be read before the backlog is full (at least one once reading is allowed).</summary>
    public int ReadAllowance
    {
        get
        {
            lock (_gate)
            {
                return Math.Max(1, _maxBacklog - _backlog);
            }
        }
    }

    /// <summary>
    /// Queues a frame; after <see cref="Complete"/> it is dropped. Every frame queued counts in the backlog until written.
    /// Queued on the connection's read loop while it handles a read, it waits for that loop to drain; queued elsewhere, it
    /// wakes the write loop unless a drainer is at work (which takes it too).
    /// </summary>
    public void Enqueue(OutgoingFrame item)
    {
        TaskCompletionSource? wake = null;
        lock (_gate)
        {
            if (_completed)
            {
                return;
            }

            _queue.Enqueue(item);
            _backlog++;
            if (!_draining && !_connection.DefersWrites)
            {
                wake = _wake;
                _wake = null;
            }
        }

        // The wake-up runs its continuation on the thread pool (RunContinuationsAsynchronously): nothing runs here.
        wake?.TrySetResult();
    }

    /// <summary>Wakes the write loop for what is queued, when no drainer is at work: a read loop that will not drain them after all.</summary>
    public void Kick()
    {
        TaskCompletionSource? wake = null;
        lock (_gate)
        {
            if (!_draining && _queue.Count != 0)
            {
                wake = _wake;
                _wake = null;
            }
        }

        wake?.TrySetResult();
    }

    /// <summary>
    /// No more frames after <paramref name="last"/> (a closing Abort or Release, RFC 8323 sections 5.5 and 5.6), if any: the
    /// write loop writes what is queued and ends. Taken in one step under this writer's lock, so a frame another thread
    /// queues meanwhile goes before the last one or not at all, and its sender needs no lock of the connection's for that.
    /// </summary>
    public void Complete(OutgoingFrame? last = null)
    {
        TaskCompletionSource? wake = null;
        lock (_gate)
        {
            if (!_completed && last is { } frame)
            {
                _queue.Enqueue(frame);
                _backlog++;
            }

            _completed = true;
            if (!_draining)
            {
                wake = _wake;
                _wake = null;
            }
        }

        wake?.TrySetResult();
    }

    /// <summary>
    /// Waits while more than MaxRequestsInFlight frames wait to be written. A peer that sends requests but
    /// stops reading the responses is then no longer read either: TCP flow control stops it, and our memory
    /// stays bounded by the backlog, the transport's buffers and the send timeout.
    /// </summary>
    public Task WhenBacklogAllowsReading()
    {
        lock (_gate)
        {
            if (_backlog < _maxBacklog)
            {
                return Task.CompletedTask;
            }

            _drained ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            return _drained.Task;
        }
    }

    /// <summary>The write loop: drains what other threads queue, until the queue is completed and empty.</summary>
    /// <returns>True when the queue ended; false when a write found the connection gone (closed, or the peer stopped reading).</returns>
    public async Task<bool> RunAsync(CoapStreamChannel channel, TimeProvider time)
    {
        while (true)
        {
            Task? sleep = null;
            lock (_gate)
            {
                if (_failed)
                {
                    return false;
                }

                if (_draining || _queue.Count == 0)
                {
                    if (_completed && !_draining)
                    {
                        return true;
                    }

                    // Asleep until another thread queues a frame, the queue completes, or a drainer that finds it
                    // completed lets go.
                    _wake ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                    sleep = _wake.Task;
                }
            }

            if (sleep is not null)
            {
                await sleep.ConfigureAwait(false);
            }
            else if (!await DrainAsync(channel, time).ConfigureAwait(false))
            {
                return false;
            }
        }
    }

    /// <summary>
    /// Writes everything queued, in order, flushing once per batch, unless another drainer is at work (which then writes
    /// it). Frames queued meanwhile are written too before this returns, up to <paramref name="maxBatches"/> batches:
    /// what is left then goes to the write loop, so a read loop is not kept from reading by other threads' frames.
    /// </summary>
    /// <returns>False when a write found the connection gone; the write loop then ends and the connection closes.</returns>
    public async ValueTask<bool> DrainAsync(CoapStreamChannel channel, TimeProvider time, int maxBatches = int.MaxValue)
    {
        lock (_gate)
        {
            if (_draining || _failed || _queue.Count == 0)
            {
                return !_failed;
            }

            _draining = true;
        }

        bool written = false;
        try
        {
            for (int batch = 0; ; batch++)
            {
                lock (_gate)
                {
                    if (_queue.Count == 0 || batch == maxBatches)
                    {
                        written = true;
                        break;
                    }

                    for (int i = 0; i < MaxFramesPerFlush && _queue.TryDequeue(out OutgoingFrame item); i++)
                    {
                        _taken.Add(item);
                    }
                }

                int count = 0;
                foreach (OutgoingFrame item in _taken)
                {
                    if (item.Pong is not null)
                    {
                        // RFC 8323 section 5.4: the round trip of a Ping starts when it is written, not when it was queued.
                        item.Pong.Start = time.GetTimestamp();
                    }

                    _connection.OnWriting(item);
                    if (!channel.Write(item.Message, item.Token))
                    {
                        return false;
                    }

                    if (++count < _taken.Count && channel.Unflushed >= FlushBytes && !await channel.FlushAsync().ConfigureAwait(false))
                    {
                        return false;
                    }
                }

                if (!await channel.FlushAsync().ConfigureAwait(false))
                {
                    return false;
                }

                OnWritten(_taken.Count);
                _connection.OnWritten(_taken);

                _taken.Clear();
            }
        }
        finally
        {
            TaskCompletionSource? wake;
            lock (_gate)
            {
                _draining = false;
                _failed |= !written;
                _taken.Clear();

                // The write loop slept while this drainer worked: it takes what is left, or ends now if the queue
                // completed or a write failed.
                wake = _completed || _failed || _queue.Count != 0 ? _wake : null;
                if (wake is not null)
                {
                    _wake = null;
                }
            }

            wake?.TrySetResult();
        }

        return true;
    }

    private void OnWritten(int count)
    {
        TaskCompletionSource? drained = null;
        lock (_gate)
        {
            _backlog -= count;
            if (_drained is not null && _backlog <= _maxBacklog / 2)
            {
                drained = _drained;
                _drained = null;
            }
        }

        drained?.TrySetResult();
    }
}

/// <summary>
/// A frame waiting for the write loop: a message, the request or Ping it belongs to, and the token it goes out
/// with when not its own (a response echoes its request's, RFC 8323 section 3.3).
/// </summary>
internal readonly record struct OutgoingFrame(CoapMessage Message, OutgoingRequest? Request, PongWaiter? Pong, ReadOnlyMemory<byte>? Token = null);
