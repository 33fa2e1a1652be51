using System.Threading.Channels;
using CoapNet.Channels;
using CoapNet.Messages;

namespace CoapNet.Messaging.Connections;

/// <summary>
/// The single writer of one CoAP-over-TCP connection (RFC 8323): a queue of frames and the one loop that writes
/// them in order, so frames never interleave and our CSM, queued first, is always the first one (section 5.3).
/// It also counts the frames not yet written, the backlog the read loop waits on.
/// </summary>
/// <remarks>
/// <see cref="Enqueue"/> is called under <see cref="StreamConnection"/>'s lock, so the order of the frames is the
/// order of the connection's state changes (the held requests before later ones, a Release or Abort last). The
/// backlog has a leaf lock of its own, taken inside the connection's and never the other way round; nothing is
/// called while it is held. Being the only writer is what makes <see cref="CoapStreamChannel.WriteAsync"/> safe
/// without a lock of its own.
/// </remarks>
internal sealed class ConnectionWriter
{
    private readonly object _gate = new();
    private readonly Channel<OutgoingFrame> _queue = Channel.CreateUnbounded<OutgoingFrame>(new UnboundedChannelOptions { SingleReader = true });
    private readonly StreamConnection _connection;
    private readonly int _maxBacklog;
    private int _backlog;
    private TaskCompletionSource? _drained;

    public ConnectionWriter(StreamConnection connection, int maxBacklog)
    {
        _connection = connection;
        _maxBacklog = maxBacklog;
    }

    /// <summary>Queues a frame; after <see cref="Complete"/> it is dropped. Every frame queued counts in the backlog until written.</summary>
    public void Enqueue(OutgoingFrame item)
    {
        // Counted in the same lock as written, so the loop cannot write it (and count it off) before it is counted.
        // TryWrite runs no continuation inline (AllowSynchronousContinuations is off): nothing is called under the lock.
        lock (_gate)
        {
            if (_queue.Writer.TryWrite(item))
            {
                _backlog++;
            }
        }
    }

    /// <summary>No more frames: the loop writes what is queued and ends.</summary>
    public void Complete() => _queue.Writer.TryComplete();

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

    /// <summary>Writes the queued frames one at a time, in order, until the queue is completed and empty.</summary>
    /// <returns>True when the queue ended; false when a write found the connection gone (closed, or the peer stopped reading).</returns>
    public async Task<bool> RunAsync(CoapStreamChannel channel, TimeProvider time)
    {
        ChannelReader<OutgoingFrame> queue = _queue.Reader;
        while (await queue.WaitToReadAsync().ConfigureAwait(false))
        {
            while (queue.TryRead(out OutgoingFrame item))
            {
                if (item.Pong is not null)
                {
                    // RFC 8323 section 5.4: the round trip of a Ping starts when it is written, not when it was queued.
                    item.Pong.Start = time.GetTimestamp();
                }

                _connection.OnWriting(item);
                if (!await channel.WriteAsync(item.Message, item.Token).ConfigureAwait(false))
                {
                    return false;
                }

                OnWritten();
                _connection.OnWritten(item);
            }
        }

        return true;
    }

    private void OnWritten()
    {
        TaskCompletionSource? drained = null;
        lock (_gate)
        {
            _backlog--;
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
