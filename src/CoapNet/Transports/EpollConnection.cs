using System.Buffers;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks.Sources;

namespace CoapNet.Transports;

/// <summary>
/// One connected TCP socket on Linux as a duplex pipe whose pumps run on an <see cref="EpollLoop"/>: the socket is read and
/// written with non-blocking <c>recv</c> and <c>send</c>, and a pump that finds nothing to read (or no room to write) waits
/// for the loop's next event for the socket, and then goes on on the loop's thread. So the bytes of a request, its
/// handling (the protocol layer reads the input pipe inline) and its response (the send pump takes the output pipe inline)
/// all run on one thread, with one <c>recv</c> and one <c>send</c>, where <see cref="SocketConnection"/> also passed a
/// thread-pool thread and a zero-byte receive.
/// </summary>
/// <remarks>
/// Edge-triggered: the loop tells a connection when its socket became readable or writable, and the connection remembers
/// it until a pump takes it (<see cref="Readiness"/>). A pump reads until a <c>recv</c> leaves room in its buffer (the
/// socket was drained then; anything arriving later is a new event), or, once the peer's end was told, until the read that
/// returns it; and it writes until the socket takes no more.
/// </remarks>
internal sealed class EpollConnection : SocketStreamConnection
{
    private readonly Readiness _readable = new();
    private readonly Readiness _writable = new();
    private readonly EpollLoop _loop;
    private readonly ulong _key;
    private int _ended;

    /// <summary>Wraps a connected socket, watches it on a loop and starts the pumps; use <see cref="SocketStreamConnection.Start"/>.</summary>
    /// <exception cref="SocketException">The kernel refused to watch the socket.</exception>
    internal EpollConnection(Socket socket, TcpTransportOptions options)
        : base(socket, options)
    {
        (_loop, _key) = EpollLoop.Add(this, socket);
        StartPumps();
    }

    /// <summary>The loop's event for the socket: <paramref name="events"/> is its epoll mask.</summary>
    public void OnReady(uint events)
    {
        // An error or a hang-up wakes both pumps, whose next call then reports it.
        const uint Failed = NativeStream.EpollErr | NativeStream.EpollHup;
        if ((events & (NativeStream.EpollOut | Failed)) != 0)
        {
            _writable.Signal();
        }

        if ((events & (NativeStream.EpollRdHup | Failed)) != 0)
        {
            // The peer's end (or an error) is told once, and may come in the same event as the last data: a read that
            // leaves room in its buffer has then not drained the socket, whose next read returns the end.
            Volatile.Write(ref _ended, 1);
        }

        if ((events & (NativeStream.EpollIn | NativeStream.EpollRdHup | Failed)) != 0)
        {
            _readable.Signal();
        }
    }

    /// <inheritdoc/>
    protected override ValueTask<int> ReadBelowAsync(Memory<byte> buffer)
    {
        if (buffer.IsEmpty)
        {
            // The wait for data, before the receive pump takes a buffer: it costs no system call.
            return _readable.WaitAsync();
        }

        int received = NativeStream.Receive(Socket, buffer.Span);
        if (received < 0)
        {
            return ReceiveLaterAsync(buffer);
        }

        Received(received, buffer.Length);
        return new ValueTask<int>(received);
    }

    /// <inheritdoc/>
    protected override ValueTask WriteBelowAsync(ReadOnlySequence<byte> buffer)
    {
        SequenceReader<byte> remaining = new(buffer);
        while (!remaining.End)
        {
            int sent = NativeStream.Send(Socket, remaining.UnreadSpan);
            if (sent < 0)
            {
                return SendLaterAsync(buffer.Slice(remaining.Position));
            }

            remaining.Advance(sent);
        }

        return ValueTask.CompletedTask;
    }

    /// <inheritdoc/>
    protected override void CloseBelow(Exception reason)
    {
        // Called once, by the first Abort.
        _loop.Remove(_key, Socket);
        Socket.Dispose();

        // The pumps' waits end on the thread pool, not on this caller's thread, which may be inside the protocol layer.
        ThreadPool.UnsafeQueueUserWorkItem(
            static connection =>
            {
                connection._readable.Close();
                connection._writable.Close();
            },
            this,
            preferLocal: false);
    }

    /// <summary>
    /// After a read: when it filled the buffer, or the end has been told, the socket may hold more (or the end) and no
    /// new event will say so, so the next wait goes on at once and the next read finds out.
    /// </summary>
    private void Received(int received, int length)
    {
        if (received == length || (received > 0 && Volatile.Read(ref _ended) != 0))
        {
            _readable.Signal();
        }
    }

    private async ValueTask<int> ReceiveLaterAsync(Memory<byte> buffer)
    {
        while (true)
        {
            await _readable.WaitAsync().ConfigureAwait(false);
            int received = NativeStream.Receive(Socket, buffer.Span);
            if (received >= 0)
            {
                Received(received, buffer.Length);
                return received;
            }
        }
    }

    private async ValueTask SendLaterAsync(ReadOnlySequence<byte> buffer)
    {
        while (!buffer.IsEmpty)
        {
            // The socket's buffer is full: the peer is not reading as fast as we write. Wait for room.
            await _writable.WaitAsync().ConfigureAwait(false);
            while (!buffer.IsEmpty)
            {
                int sent = NativeStream.Send(Socket, buffer.FirstSpan);
                if (sent < 0)
                {
                    break;
                }

                buffer = buffer.Slice(sent);
            }
        }
    }

    /// <summary>
    /// Whether the socket became ready (readable, or writable) since a pump last took it, and the one pump that may wait for
    /// it. Its wait completes on the loop's thread, which then runs the pump.
    /// </summary>
    private sealed class Readiness : IValueTaskSource<int>
    {
        private const int Idle = 0;
        private const int Ready = 1;
        private const int Waiting = 2;

        private ManualResetValueTaskSourceCore<int> _core = new() { RunContinuationsAsynchronously = false };
        private int _state;
        private bool _closed;

        /// <summary>Completes at once when the socket became ready since the last call, otherwise at the next <see cref="Signal"/>.</summary>
        /// <exception cref="ObjectDisposedException">The connection was closed.</exception>
        public ValueTask<int> WaitAsync()
        {
            while (true)
            {
                int state = Volatile.Read(ref _state);
                if (Volatile.Read(ref _closed))
                {
                    return ValueTask.FromException<int>(new ObjectDisposedException(nameof(EpollConnection)));
                }

                if (state == Ready)
                {
                    if (Interlocked.CompareExchange(ref _state, Idle, Ready) == Ready)
                    {
                        return new ValueTask<int>(0);
                    }

                    continue;
                }

                // Idle: only this pump waits, so the source is free to reset.
                _core.Reset();
                if (Interlocked.CompareExchange(ref _state, Waiting, Idle) == Idle)
                {
                    // A close between the look above and this wait fails it here, unless the close (or a signal) took it.
                    if (Volatile.Read(ref _closed) && Interlocked.CompareExchange(ref _state, Idle, Waiting) == Waiting)
                    {
                        return ValueTask.FromException<int>(new ObjectDisposedException(nameof(EpollConnection)));
                    }

                    return new ValueTask<int>(this, _core.Version);
                }
            }
        }

        /// <summary>The socket became ready: the waiting pump goes on, on this thread; with none waiting, the next wait completes at once.</summary>
        public void Signal()
        {
            while (true)
            {
                int state = Volatile.Read(ref _state);
                if (state == Ready)
                {
                    return;
                }

                if (state == Waiting)
                {
                    if (Interlocked.CompareExchange(ref _state, Idle, Waiting) == Waiting)
                    {
                        _core.SetResult(0);
                        return;
                    }

                    continue;
                }

                if (Interlocked.CompareExchange(ref _state, Ready, Idle) == Idle)
                {
                    return;
                }
            }
        }

        /// <summary>The connection closed: a waiting pump fails, and so does every later wait.</summary>
        public void Close()
        {
            Volatile.Write(ref _closed, true);
            if (Interlocked.CompareExchange(ref _state, Idle, Waiting) == Waiting)
            {
                _core.SetException(new ObjectDisposedException(nameof(EpollConnection)));
            }
        }

        /// <inheritdoc/>
        public int GetResult(short token) => _core.GetResult(token);

        /// <inheritdoc/>
        public ValueTaskSourceStatus GetStatus(short token) => _core.GetStatus(token);

        /// <inheritdoc/>
        public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
            => _core.OnCompleted(continuation, state, token, flags);
    }
}
