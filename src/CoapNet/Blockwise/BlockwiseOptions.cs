namespace CoapNet.Blockwise;

/// <summary>Settings of block-wise transfer (RFC 7959): the block size and the bounds on what a transfer may hold.</summary>
public sealed class BlockwiseOptions
{
    /// <summary>
    /// The block size a server uses for bodies that do not fit one message, and the largest it grants
    /// when a client asks for blocks: 16 to 1024, a power of two (default 1024, RFC 7959 section 2.2).
    /// A client asking for smaller blocks (an early Block2 option) gets those.
    /// </summary>
    public int BlockSize { get; init; } = 1024;

    /// <summary>How many response bodies a server keeps at once for follow-up block requests (default 1000).</summary>
    public int MaxStoredBodies { get; init; } = 1000;

    /// <summary>How many bytes of response bodies a server keeps at once (default 64 MiB); past it a body is not kept and each block runs the handler again.</summary>
    public long MaxStoredBytes { get; init; } = 64L * 1024 * 1024;

    /// <summary>How long a server keeps a body for follow-up block requests (default 60 s); an abandoned download is freed after it.</summary>
    public TimeSpan StoredBodyLifetime { get; init; } = TimeSpan.FromSeconds(60);

    /// <summary>The largest body a client assembles from blocks (default 16 MiB); a larger one fails the request.</summary>
    public long MaxBodySize { get; init; } = 16L * 1024 * 1024;

    internal void Validate()
    {
        if (BlockSize is < 16 or > 1024 || (BlockSize & (BlockSize - 1)) != 0)
        {
            throw new ArgumentException("BlockSize must be a power of two from 16 to 1024 (RFC 7959 section 2.2).", nameof(BlockSize));
        }

        if (MaxStoredBodies < 0 || MaxStoredBytes < 0 || MaxBodySize < 1)
        {
            throw new ArgumentException("MaxStoredBodies and MaxStoredBytes must not be negative, and MaxBodySize must be positive.", nameof(MaxStoredBodies));
        }

        if (StoredBodyLifetime <= TimeSpan.Zero)
        {
            throw new ArgumentException("StoredBodyLifetime must be positive.", nameof(StoredBodyLifetime));
        }
    }
}
