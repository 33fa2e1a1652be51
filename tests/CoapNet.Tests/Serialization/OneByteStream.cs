namespace CoapNet.Tests.Serialization;

/// <summary>
/// A stream that hands out at most one byte per read, like a slow network stream, and completes every
/// other asynchronous read asynchronously so that both the synchronous and the suspended paths of the
/// reader run. Writes are recorded.
/// </summary>
internal sealed class OneByteStream : Stream
{
    private readonly byte[] _input;
    private readonly MemoryStream _written = new();
    private int _position;

    public OneByteStream(byte[]? input = null) => _input = input ?? [];

    /// <summary>How many read calls returned data or end of stream.</summary>
    public int Reads { get; private set; }

    /// <summary>How many write calls were made.</summary>
    public int Writes { get; private set; }

    /// <summary>The bytes written so far.</summary>
    public byte[] Written => _written.ToArray();

    public override bool CanRead => true;

    public override bool CanSeek => false;

    public override bool CanWrite => true;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

    public override int Read(Span<byte> buffer)
    {
        Reads++;
        if (buffer.IsEmpty || _position == _input.Length)
        {
            return 0;
        }

        buffer[0] = _input[_position++];
        return 1;
    }

    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        if ((Reads & 1) == 1)
        {
            // Resume on the thread pool, not on the test framework's context, as a socket read would.
            await Task.CompletedTask.ConfigureAwait(ConfigureAwaitOptions.ForceYielding);
        }

        return Read(buffer.Span);
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));

    public override void Write(ReadOnlySpan<byte> buffer)
    {
        Writes++;
        _written.Write(buffer);
    }

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        Write(buffer.Span);
        return ValueTask.CompletedTask;
    }

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override void Flush()
    {
    }

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            _written.Dispose();
        }

        base.Dispose(disposing);
    }
}
