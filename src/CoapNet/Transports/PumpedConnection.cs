using System.Buffers;
using System.IO.Pipelines;

namespace CoapNet.Transports;

/// <summary>
/// A connection whose protocol side is two bounded pipes, moved to and from what lies below (a socket, a TLS session)
/// by two pumps: the receive pump writes what arrives into the input pipe, the send pump takes what the protocol layer
/// wrote to the output pipe down. Both pipes pause their writer at a threshold, so neither direction buffers without
/// bound (after Kestrel's socket transport): when the protocol layer stops reading, nothing more is read from below, and
/// when the peer stops reading, the protocol layer's flushes wait.
/// </summary>
/// <remarks>
/// A subclass says how to read and write below (<see cref="ReadBelowAsync"/>, <see cref="WriteBelowAsync"/>), how to end
/// its sending side (<see cref="FinishSendingAsync"/>), how to cut everything at once (<see cref="CloseBelow"/>) and how
/// to close after the output was drained (<see cref="CloseAsync"/>); it starts the pumps at the end of its constructor.
/// </remarks>
internal abstract class PumpedConnection : TransportConnection, IDuplexPipe
{
    // Half a pipe segment (4 KiB): a segment with room left is filled further instead of a new one being taken per read,
    // so a peer that trickles one byte at a time costs bytes, not a segment per byte; enough for a typical CoAP message.
    private const int MinReceiveBuffer = 2048;

    private readonly Pipe _input;
    private readonly Pipe _output;
    private readonly TimeSpan _closeTimeout;
    private Task _receiving = Task.CompletedTask;
    private Task _sending = Task.CompletedTask;
    private Exception? _abortReason;
    private int _aborted;
    private int _disposed;

    /// <summary>Creates the pipes with the bounds of <paramref name="options"/>.</summary>
    protected PumpedConnection(TcpTransportOptions options)
    {
        // Pause at the bound and resume at half of it: the reader of the input is the protocol layer, the reader of the
        // output is the send pump, and each writer waits when its reader falls behind.
        // Both readers resume on the thread that flushed (PipeScheduler.Inline), as Kestrel's inline scheduling does.
        // The send pump: the protocol layer's flush hands the bytes below itself (a send that does not complete at once
        // goes on where the socket completes it). The protocol layer: the receive pump's flush runs the read loop, which
        // answers a quick request and writes its response on the same thread; a thread-pool hand-off per read cost a
        // connection with one request in flight a wake-up each (benchmarks/RESULTS.md, "Many connections").
        // Both take their buffers from one pool of blocks (BlockPool, unless the options name another pool), so a thousand
        // busy connections do not allocate.
        long input = options.MaxInputBufferSize;
        long output = options.MaxOutputBufferSize;
        MemoryPool<byte> pool = options.MemoryPool ?? BlockPool.Connections;
        _input = new Pipe(new PipeOptions(pool, readerScheduler: PipeScheduler.Inline, pauseWriterThreshold: input, resumeWriterThreshold: input / 2, useSynchronizationContext: false));
        _output = new Pipe(new PipeOptions(pool, readerScheduler: PipeScheduler.Inline, pauseWriterThreshold: output, resumeWriterThreshold: output / 2, useSynchronizationContext: false));
        _closeTimeout = options.CloseTimeout;
    }

    /// <inheritdoc/>
    public override IDuplexPipe Transport => this;

    PipeReader IDuplexPipe.Input => _input.Reader;

    PipeWriter IDuplexPipe.Output => _output.Writer;

    /// <summary>True once <see cref="Abort"/> was called.</summary>
    protected bool IsAborted => Volatile.Read(ref _aborted) != 0;

    /// <summary>True once <see cref="DisposeAsync"/> was called.</summary>
    protected bool IsDisposing => Volatile.Read(ref _disposed) != 0;

    /// <inheritdoc/>
    public override void Abort(Exception? reason = null)
    {
        // The reason is in place before the flag, so a pump that sees the flag also sees the first reason.
        Interlocked.CompareExchange(ref _abortReason, reason ?? new IOException("The connection was aborted."), null);
        if (Interlocked.Exchange(ref _aborted, 1) != 0)
        {
            return;
        }

        // What lies below goes at once, which fails the pumps' pending I/O; a pump waiting on a paused flush is released too.
        CloseBelow(_abortReason!);
        _input.Writer.CancelPendingFlush();
        _output.Reader.CancelPendingRead();
        OnAborted();
    }

    /// <inheritdoc/>
    public override async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        // Whatever the protocol layer wrote goes out first, within the close timeout; a peer that takes nothing for that
        // long is cut off.
        _output.Writer.Complete();
        try
        {
            await _sending.WaitAsync(_closeTimeout).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            Abort(new IOException($"The peer did not take the last {_closeTimeout.TotalSeconds:0.###} s of output."));
        }

        await CloseAsync(_receiving, _sending).ConfigureAwait(false);
        _input.Reader.Complete();
    }

    /// <summary>Starts the pumps; the last thing a subclass's constructor does.</summary>
    protected void StartPumps()
    {
        _receiving = Task.Run(ReceiveLoopAsync);
        _sending = Task.Run(SendLoopAsync);
    }

    /// <summary>Reads what arrived below into <paramref name="buffer"/>; with an empty buffer, waits until something has arrived.</summary>
    /// <returns>The bytes read; 0 at the end of the stream (or for the wait).</returns>
    protected abstract ValueTask<int> ReadBelowAsync(Memory<byte> buffer);

    /// <summary>Writes what the protocol layer wrote down, completing when what lies below took it.</summary>
    protected abstract ValueTask WriteBelowAsync(ReadOnlySequence<byte> buffer);

    /// <summary>Ends the sending side below after the last write (the protocol layer completed the output).</summary>
    protected abstract ValueTask FinishSendingAsync();

    /// <summary>Cuts what lies below at once; pending reads and writes there fail.</summary>
    protected abstract void CloseBelow(Exception reason);

    /// <summary>Closes after the output was drained (or cut); <see cref="DisposeAsync"/> then completes the input.</summary>
    protected abstract Task CloseAsync(Task receiving, Task sending);

    /// <summary>The error the protocol layer reads when a pump failed with <paramref name="exception"/>, not by an abort.</summary>
    protected abstract IOException Describe(Exception exception);

    /// <summary>Whether <paramref name="exception"/>, thrown below, is the connection failing (and ends the pump quietly).</summary>
    protected virtual bool IsConnectionFailure(Exception exception) => exception is not OutOfMemoryException;

    /// <summary>Called once by <see cref="Abort"/> after the pipes were released.</summary>
    protected virtual void OnAborted()
    {
    }

    /// <summary>Called when a pump failed (not by an abort) with what the protocol layer will read.</summary>
    protected virtual void OnPumpFailed(Exception error)
    {
    }

    /// <summary>Called when the receive pump has ended and completed the input pipe.</summary>
    protected virtual void OnReceiveEnded()
    {
    }

    private async Task ReceiveLoopAsync()
    {
        PipeWriter writer = _input.Writer;
        Exception? error = null;
        try
        {
            while (true)
            {
                // Waits for data before taking any buffer, so an idle connection holds none (as Kestrel does).
                await ReadBelowAsync(Memory<byte>.Empty).ConfigureAwait(false);
                Memory<byte> memory = writer.GetMemory(MinReceiveBuffer);
                int received = await ReadBelowAsync(memory).ConfigureAwait(false);
                if (received == 0)
                {
                    break; // The peer closed its side.
                }

                writer.Advance(received);

                // Waits while the protocol layer holds MaxInputBufferSize unconsumed bytes: nothing more is read below,
                // TCP flow control fills the peer's window, and the peer slows down.
                FlushResult flushed = await writer.FlushAsync().ConfigureAwait(false);
                if (flushed.IsCompleted || flushed.IsCanceled)
                {
                    break;
                }
            }
        }
        catch (Exception exception) when (IsConnectionFailure(exception))
        {
            error = Failed(exception);
        }
        finally
        {
            if (error is null && IsAborted)
            {
                error = _abortReason;
            }

            await writer.CompleteAsync(error).ConfigureAwait(false);
            OnReceiveEnded();
        }
    }

    private async Task SendLoopAsync()
    {
        PipeReader reader = _output.Reader;
        Exception? error = null;
        try
        {
            while (true)
            {
                ReadResult result = await reader.ReadAsync().ConfigureAwait(false);
                if (result.IsCanceled)
                {
                    break;
                }

                try
                {
                    // Completes when what lies below took the bytes; when the peer stops reading it waits, this pump stops
                    // reading the pipe, and the protocol layer's flushes wait in turn.
                    await WriteBelowAsync(result.Buffer).ConfigureAwait(false);
                }
                finally
                {
                    reader.AdvanceTo(result.Buffer.End);
                }

                if (result.IsCompleted)
                {
                    await FinishSendingAsync().ConfigureAwait(false);
                    break;
                }
            }
        }
        catch (Exception exception) when (IsConnectionFailure(exception))
        {
            error = Failed(exception);
        }
        finally
        {
            // Completing the reader with the error makes the protocol layer's next flush report the connection as gone.
            await reader.CompleteAsync(error).ConfigureAwait(false);
        }
    }

    private Exception Failed(Exception exception)
    {
        if (IsAborted)
        {
            return _abortReason!;
        }

        IOException error = Describe(exception);
        OnPumpFailed(error);
        return error;
    }
}
