namespace CoapNet.Samples.Server;

/// <summary>A read-only, seekable stream of <c>length</c> bytes where byte i is i mod 251, generated as read: the sample's /large body, and a test or benchmark upload body, without holding it.</summary>
public sealed class DeterministicStream(long length) : Stream
{
    /// <inheritdoc/>
    public override bool CanRead => true;

    /// <inheritdoc/>
    public override bool CanSeek => true;

    /// <inheritdoc/>
    public override bool CanWrite => false;

    /// <inheritdoc/>
    public override long Length => length;

    /// <inheritdoc/>
    public override long Position { get; set; }

    /// <inheritdoc/>
    public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

    /// <inheritdoc/>
    public override int Read(Span<byte> buffer)
    {
        int count = (int)Math.Clamp(length - Position, 0, buffer.Length);
        for (int i = 0; i < count; i++)
        {
            buffer[i] = (byte)((Position + i) % 251);
        }

        Position += count;
        return count;
    }

    /// <inheritdoc/>
    public override long Seek(long offset, SeekOrigin origin) => Position = origin switch
    {
        SeekOrigin.Begin => offset,
        SeekOrigin.Current => Position + offset,
        _ => length + offset,
    };

    /// <inheritdoc/>
    public override void Flush()
    {
        // Read-only: nothing to flush.
    }

    /// <inheritdoc/>
    public override void SetLength(long value) => throw new NotSupportedException();

    /// <inheritdoc/>
    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
}
