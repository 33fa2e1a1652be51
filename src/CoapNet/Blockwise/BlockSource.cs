namespace CoapNet.Blockwise;

/// <summary>
/// Where a client upload reads its blocks from (RFC 7959 section 2.5), one block at a time as each
/// 2.31 Continue arrives, so a body need not be held whole: a memory region today, a stream later.
/// </summary>
internal abstract class BlockSource
{
    /// <summary>The whole body's length when known, for Size1 in the first block (RFC 7959 section 4).</summary>
    public abstract long? Length { get; }

    /// <summary>Up to <paramref name="count"/> bytes from <paramref name="offset"/>; <paramref name="more"/> tells whether bytes follow them.</summary>
    public abstract ReadOnlyMemory<byte> Read(long offset, int count, out bool more);
}

/// <summary>A body in memory: blocks are slices of it, without copies.</summary>
internal sealed class MemoryBlockSource(ReadOnlyMemory<byte> body) : BlockSource
{
    /// <inheritdoc/>
    public override long? Length => body.Length;

    /// <inheritdoc/>
    public override ReadOnlyMemory<byte> Read(long offset, int count, out bool more)
    {
        int start = (int)Math.Min(offset, body.Length);
        int length = Math.Min(count, body.Length - start);
        more = start + length < body.Length;
        return body.Slice(start, length);
    }
}

/// <summary>
/// A body read from a stream one block at a time (RFC 7959 section 2.5), so an upload never holds more
/// than a block of it: each block is a fresh array (a reliable transport may still be writing the
/// previous one), one byte is read ahead to know whether more follow, and a block asked for again (the
/// same offset) is served from the last one read. Going back further needs a seekable stream.
/// </summary>
internal sealed class StreamBlockSource : BlockSource
{
    private readonly Stream _stream;
    private readonly long _start;
    private long _position;
    private int _lookahead = -1;
    private long _lastOffset = -1;
    private byte[] _last = [];
    private bool _lastMore;

    public StreamBlockSource(Stream stream)
    {
        _stream = stream;
        _start = stream.CanSeek ? stream.Position : 0;
        Length = stream.CanSeek ? stream.Length - stream.Position : null;
    }

    /// <inheritdoc/>
    public override long? Length { get; }

    /// <inheritdoc/>
    public override ReadOnlyMemory<byte> Read(long offset, int count, out bool more)
    {
        if (offset == _lastOffset && count <= _last.Length)
        {
            more = _lastMore || count < _last.Length;
            return _last.AsMemory(0, count);
        }

        if (offset != _position)
        {
            if (!_stream.CanSeek)
            {
                throw new InvalidOperationException($"The upload must start over at byte {offset}, but its body stream cannot seek back.");
            }

            _stream.Position = _start + offset;
            _position = offset;
            _lookahead = -1;
        }

        byte[] block = new byte[count];
        int filled = 0;
        if (_lookahead >= 0 && count > 0)
        {
            block[filled++] = (byte)_lookahead;
            _lookahead = -1;
        }

        while (filled < count)
        {
            int read = _stream.Read(block, filled, count - filled);
            if (read == 0)
            {
                break;
            }

            filled += read;
        }

        _lookahead = filled == count ? _stream.ReadByte() : -1;
        more = _lookahead >= 0;
        _position = offset + filled;
        if (filled < count)
        {
            Array.Resize(ref block, filled);
        }

        _lastOffset = offset;
        _last = block;
        _lastMore = more;
        return block;
    }
}
