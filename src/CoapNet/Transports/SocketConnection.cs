using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;

namespace CoapNet.Transports;

/// <summary>
/// One connected TCP socket as a duplex pipe: a receive pump copies the socket into the input pipe
/// and a send pump copies the output pipe into the socket. Both pipes pause their writer at a
/// threshold, so neither direction buffers without bound (after Kestrel's socket transport).
/// </summary>
internal sealed class SocketConnection : TransportConnection, IDuplexPipe
{
    // Enough for a typical CoAP message or a TCP segment per receive; the pipe pools the memory.
    private const int MinReceiveBuffer = 2048;

    private readonly Socket _socket;
    private readonly Pipe _input;
    private readonly Pipe _output;
    private readonly TimeSpan _closeTimeout;
    private readonly CancellationTokenSource _closed = new();
    private readonly Task _receiving;
    private readonly Task _sending;
    private Exception? _abortReason;
    private int _aborted;
    private int _disposed;

    private SocketConnection(Socket socket, TcpTransportOptions options)
    {
        _socket = socket;
        _closeTimeout = options.CloseTimeout;

        // Pause at the bound and resume at half of it: the reader of the input is the protocol layer, the
        // reader of the output is the send pump, and each writer waits when its reader falls behind.
        long input = options.MaxInputBufferSize;
        long output = options.MaxOutputBufferSize;
        _input = new Pipe(new PipeOptions(pauseWriterThreshold: input, resumeWriterThreshold: input / 2, useSynchronizationContext: false));
        _output = new Pipe(new PipeOptions(pauseWriterThreshold: output, resumeWriterThreshold: output / 2, useSynchronizationContext: false));
        RemoteEndPoint = SocketEndPoints.Normalize((IPEndPoint)socket.RemoteEndPoint!);
        LocalEndPoint = SocketEndPoints.Normalize((IPEndPoint)socket.LocalEndPoint!);
        _receiving = Task.Run(ReceiveLoopAsync);
        _sending = Task.Run(SendLoopAsync);
    }

    /// <inheritdoc/>
    public override IDuplexPipe Transport => this;

    /// <inheritdoc/>
    public override IPEndPoint RemoteEndPoint { get; }

    /// <inheritdoc/>
    public override IPEndPoint LocalEndPoint { get; }

    /// <inheritdoc/>
    public override CancellationToken ConnectionClosed => _closed.Token;

    PipeReader IDuplexPipe.Input => _input.Reader;

    PipeWriter IDuplexPipe.Output => _output.Writer;

    /// <summary>Wraps a connected socket; from now on the connection owns it.</summary>
    public static SocketConnection Start(Socket socket, TcpTransportOptions options)
    {
        // CoAP messages are small and request/response: Nagle's delay would only add latency (RFC 8323 leaves framing to the stream).
        socket.NoDelay = true;
        return new SocketConnection(socket, options);
    }

    /// <inheritdoc/>
    public override void Abort(Exception? reason = null)
    {
        // The reason is in place before the flag, so a pump that sees the flag also sees the first reason.
        Interlocked.CompareExchange(ref _abortReason, reason ?? new IOException("The connection was aborted."), null);
        if (Interlocked.Exchange(ref _aborted, 1) != 0)
        {
            return;
        }

        // Disposing the socket fails the pending receive and send; a pump waiting on a paused flush is released too.
        _socket.Dispose();
        _input.Writer.CancelPendingFlush();
        _output.Reader.CancelPendingRead();
        SignalClosed();
    }

    /// <inheritdoc/>
    public override async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        // Whatever the protocol layer wrote goes out first; then the send pump shuts the socket down for sending.
        _output.Writer.Complete();
        try
        {
            await _sending.WaitAsync(_closeTimeout).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            Abort(new IOException($"The peer did not take the last {_closeTimeout.TotalSeconds:0.###} s of output."));
        }

        Abort(new IOException("The connection was closed."));
        await Task.WhenAll(_receiving, _sending).ConfigureAwait(false);
        _input.Reader.Complete();
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
                await _socket.ReceiveAsync(Memory<byte>.Empty, SocketFlags.None).ConfigureAwait(false);

                // Half a pipe segment (4 KiB): a segment with room left is filled further instead of a new one being
                // taken per read, so a peer that trickles one byte at a time costs bytes, not a segment per byte.
                Memory<byte> memory = writer.GetMemory(MinReceiveBuffer);
                int received = await _socket.ReceiveAsync(memory, SocketFlags.None).ConfigureAwait(false);
                if (received == 0)
                {
                    break; // The peer closed its side.
                }

                writer.Advance(received);

                // Waits while the protocol layer holds MaxInputBufferSize unconsumed bytes: the socket is then not read,
                // TCP flow control fills the peer's window, and the peer slows down.
                FlushResult flushed = await writer.FlushAsync().ConfigureAwait(false);
                if (flushed.IsCompleted || flushed.IsCanceled)
                {
                    break;
                }
            }
        }
        catch (Exception exception) when (exception is SocketException or ObjectDisposedException)
        {
            error = Volatile.Read(ref _aborted) != 0 ? _abortReason : new IOException(exception.Message, exception);
        }
        finally
        {
            if (error is null && Volatile.Read(ref _aborted) != 0)
            {
                error = _abortReason;
            }

            await writer.CompleteAsync(error).ConfigureAwait(false);
            SignalClosed();
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

                ReadOnlySequence<byte> buffer = result.Buffer;
                try
                {
                    foreach (ReadOnlyMemory<byte> segment in buffer)
                    {
                        // A send completes when the kernel took the bytes; when the peer stops reading it waits,
                        // this pump stops reading the pipe, and the protocol layer's flushes wait in turn.
                        int offset = 0;
                        while (offset < segment.Length)
                        {
                            offset += await _socket.SendAsync(segment[offset..], SocketFlags.None).ConfigureAwait(false);
                        }
                    }
                }
                finally
                {
                    reader.AdvanceTo(buffer.End);
                }

                if (result.IsCompleted)
                {
                    _socket.Shutdown(SocketShutdown.Send);
                    break;
                }
            }
        }
        catch (Exception exception) when (exception is SocketException or ObjectDisposedException)
        {
            error = Volatile.Read(ref _aborted) != 0 ? _abortReason : new IOException(exception.Message, exception);
        }
        finally
        {
            // Completing the reader with the error makes the protocol layer's next flush report the connection as gone.
            await reader.CompleteAsync(error).ConfigureAwait(false);
        }
    }

    private void SignalClosed()
    {
        try
        {
            _closed.Cancel();
        }
        catch (ObjectDisposedException)
        {
        }
    }
}
