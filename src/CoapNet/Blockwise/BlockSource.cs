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
