namespace CoapNet.Blockwise;

/// <summary>Settings of block-wise transfer (RFC 7959): the block size and the bounds on what a transfer may hold.</summary>
public sealed class BlockwiseOptions
{
    /// <summary>
    /// The block size a server uses for bodies that do not fit one message, and the largest it grants
    /// when a client asks for blocks: 16 to 1024, a power of two (default 1024, RFC 7959 section 2.2).
    /// A client asking for smaller blocks (an early Block2 option) gets those.
    /// </summary>
    public int BlockSize { get; set; } = 1024;

    /// <summary>
    /// The length of the ETag a server gives a body it cuts into blocks when the handler set none, 1 to 8 bytes (default
    /// 4). The ETag lets a client tell the blocks of one version of a representation from another's (RFC 7959 section 2.4):
    /// it must distinguish the version a transfer started with from the one the handler would give if the body were no
    /// longer kept for the transfer and the handler ran again. It is a hash of the body, so a change goes unnoticed with a
    /// chance of 1 in 2^(8 x length) and only when the body was dropped mid-transfer: 4 bytes make that 1 in 4 billion;
    /// RFC 7252 section 5.10.6 asks for the most compact ETag that serves. A body given as a stream gets its length instead,
    /// in as few bytes as it takes; an <see cref="Messages.CoapResponse.Immutable"/> body gets none.
    /// </summary>
    public int ETagLength { get; set; } = 4;

    /// <summary>How many response bodies a server keeps at once for follow-up block requests (default 1000).</summary>
    public int MaxStoredBodies { get; set; } = 1000;

    /// <summary>How many bytes of response bodies a server keeps at once (default 64 MiB); past it a body is not kept and each block runs the handler again.</summary>
    public long MaxStoredBytes { get; set; } = 64L * 1024 * 1024;

    /// <summary>How long a server keeps a body for follow-up block requests (default 60 s); an abandoned download is freed after it.</summary>
    public TimeSpan StoredBodyLifetime { get; set; } = TimeSpan.FromSeconds(60);

    /// <summary>The largest body a client assembles from blocks (default 16 MiB); a larger one fails the request.</summary>
    public long MaxBodySize { get; set; } = 16L * 1024 * 1024;

    /// <summary>
    /// True (the default) for atomic uploads: a server joins the Block1 blocks of a request, answering
    /// each but the last with 2.31 Continue, and hands the handler one request with the whole body
    /// (RFC 7959 section 2.5). False hands the handler every block as it comes, with its Block1 option,
    /// for a handler that processes a body piece by piece (non-atomic, section 2.5); its responses get
    /// the Block1 option echoed when they lack one.
    /// </summary>
    public bool ReassembleUploads { get; set; } = true;

    /// <summary>
    /// The largest request body a server joins from Block1 blocks (default 16 MiB). A request whose
    /// Size1 announces more, or whose blocks add up to more, is answered 4.13 Request Entity Too Large
    /// with Size1 giving this limit (RFC 7959 sections 2.9.3 and 4).
    /// </summary>
    public long MaxUploadSize { get; set; } = 16L * 1024 * 1024;

    /// <summary>How many uploads a server joins at once, from all peers together (default 100); past it a new upload gets 5.03 Service Unavailable with Max-Age.</summary>
    public int MaxReassemblies { get; set; } = 100;

    /// <summary>
    /// How many bytes the uploads being joined may hold at once, from all peers together (default 64 MiB).
    /// An upload counts what it received, or the Size1 it announced when that is more. Past this total a
    /// new upload or its next block gets 5.03 Service Unavailable with Max-Age (try again later); an
    /// upload that alone announces more than the total gets 4.13 with Size1.
    /// </summary>
    public long MaxReassemblyBytes { get; set; } = 64L * 1024 * 1024;

    /// <summary>How long a server keeps a partly received upload after its latest block (default 60 s); an abandoned upload is freed after it.</summary>
    public TimeSpan ReassemblyLifetime { get; set; } = TimeSpan.FromSeconds(60);

    /// <summary>
    /// How many Block2 requests a client keeps outstanding for one download (default 1: each block is asked for when
    /// the previous one has arrived). Above 1, once the first block has arrived, the client asks for the following blocks
    /// by number (RFC 7959 section 2.4) without waiting for each, up to this many at once, and puts them back in order:
    /// as many as the first block's Size2 (section 4) says there are, or, without Size2, ahead until a block arrives with
    /// its M bit clear, after which the requests past it (at most this many less one) are ended. The peer's NSTART
    /// (<see cref="Messaging.CoapTransmissionParameters.NStart"/>, RFC 7252 section 4.7) still bounds how many requests
    /// are outstanding, so raise it as well: this sets the window, NSTART keeps the congestion rule (and with
    /// <see cref="Messaging.Retransmission.CocoaOptions.CongestionWindow"/> adapts to the path).
    /// </summary>
    public int MaxBlocksInFlight { get; set; } = 1;

    internal void Validate()
    {
        if (MaxBlocksInFlight is < 1 or > 64)
        {
            throw new ArgumentException("MaxBlocksInFlight must be from 1 to 64.", nameof(MaxBlocksInFlight));
        }

        if (BlockSize is < 16 or > 1024 || (BlockSize & (BlockSize - 1)) != 0)
        {
            throw new ArgumentException("BlockSize must be a power of two from 16 to 1024 (RFC 7959 section 2.2).", nameof(BlockSize));
        }

        if (ETagLength is < 1 or > 8)
        {
            throw new ArgumentException("ETagLength must be from 1 to 8 bytes (RFC 7252 section 5.10.6).", nameof(ETagLength));
        }

        if (MaxStoredBodies < 0 || MaxStoredBytes < 0 || MaxBodySize < 1)
        {
            throw new ArgumentException("MaxStoredBodies and MaxStoredBytes must not be negative, and MaxBodySize must be positive.", nameof(MaxStoredBodies));
        }

        if (StoredBodyLifetime <= TimeSpan.Zero)
        {
            throw new ArgumentException("StoredBodyLifetime must be positive.", nameof(StoredBodyLifetime));
        }

        // Size1 is a 4-byte option: a larger limit could not be announced in a 4.13 (RFC 7959 section 4).
        if (MaxUploadSize is < 1 or > uint.MaxValue)
        {
            throw new ArgumentException("MaxUploadSize must be from 1 to 4294967295 bytes (what Size1 can carry).", nameof(MaxUploadSize));
        }

        if (MaxReassemblies < 0 || MaxReassemblyBytes < 0)
        {
            throw new ArgumentException("MaxReassemblies and MaxReassemblyBytes must not be negative.", nameof(MaxReassemblies));
        }

        if (ReassemblyLifetime <= TimeSpan.Zero)
        {
            throw new ArgumentException("ReassemblyLifetime must be positive.", nameof(ReassemblyLifetime));
        }
    }

    /// <summary>A copy of these settings, for an endpoint's own (<see cref="Messaging.CoapEndpointOptions.Clone"/>).</summary>
    internal BlockwiseOptions Copy() => (BlockwiseOptions)MemberwiseClone();
}
