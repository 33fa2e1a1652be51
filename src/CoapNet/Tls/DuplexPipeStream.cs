using System.Buffers;
using System.IO.Pipelines;

namespace CoapNet.Tls;

/// <summary>
/// A connection's duplex pipe as the <see cref="Stream"/> that <see cref="System.Net.Security.SslStream"/> reads and
/// writes: TLS records come from the pipe's input and go to its output. Asynchronous only, as SslStream is driven here.
/// </summary>
/// <remarks>
/// A zero-byte read waits until data is there and consumes nothing, so SslStream (which issues one before it rents
/// its buffer) holds no buffer while the connection is idle. Each write is flushed, so a record reaches the
/// transport when SslStream has produced it; the transport's pause threshold makes the write wait when the peer
/// stops reading.
/// </remarks>
internal sealed class DuplexPipeStream(IDuplexPipe pipe) : Stream
{
    private readonly PipeReader _input = pipe.Input;
    private readonly PipeWriter _output = pipe.Output;

    /// <summary>Called after each read that returned bytes, while set: a server's handshake in progress notes that its peer spoke.</summary>
    public Action? OnReceived { get; set; }

    public override bool CanRead => true;

    public override bool CanWrite => true;

    public override bool CanSeek => false;

    public override long Length => throw new NotSupportedException("A connection has no length.");

    public override long Position
    {
        get => throw new NotSupportedException("A connection has no position.");
        set => throw new NotSupportedException("A connection has no position.");
    }

    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        // A read returns with data, at the end of the stream (empty) or canceled: one pass, no loop. Advancing to what was
        // copied leaves the rest unexamined, so the next read returns it at once; a zero-byte read copies and consumes
        // nothing and only waits.
        ReadResult result = await _input.ReadAsync(cancellationToken).ConfigureAwait(false);
        ReadOnlySequence<byte> data = result.Buffer;
        int count = result.IsCanceled ? 0 : (int)Math.Min(data.Length, buffer.Length);
        data.Slice(0, count).CopyTo(buffer.Span);
        _input.AdvanceTo(data.GetPosition(count));
        if (count > 0)
        {
            OnReceived?.Invoke();
        }

        return result.IsCanceled ? throw new OperationCanceledException("The read was canceled.") : count;
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override async ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        FlushResult flushed = await _output.WriteAsync(buffer, cancellationToken).ConfigureAwait(false);
        if (flushed.IsCanceled || flushed.IsCompleted)
        {
            // The transport's sending side is gone (aborted, or the socket failed): the record cannot be delivered.
            throw new IOException("The connection is closed.");
        }
    }

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    // Every write is flushed already.
    public override Task FlushAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public override void Flush()
    {
    }

    // SslStream is only ever driven through its asynchronous methods here (the pumps of TlsConnection), and blocking a
    // thread on a pipe would be sync-over-async: the synchronous entry points are refused rather than emulated.
    public override int Read(byte[] buffer, int offset, int count)
        => throw new NotSupportedException("This stream is read asynchronously only.");

    public override void Write(byte[] buffer, int offset, int count)
        => throw new NotSupportedException("This stream is written asynchronously only.");

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException("A connection cannot seek.");

    public override void SetLength(long value) => throw new NotSupportedException("A connection has no length.");
}
