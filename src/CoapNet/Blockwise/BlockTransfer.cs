namespace CoapNet.Blockwise;

/// <summary>
/// What a caller asks of one request's block-wise transfer beyond the defaults: a body read from a
/// source block by block instead of the request's payload, a response body written to a stream block
/// by block instead of assembled in memory, and progress reports. Read by the block-wise stage.
/// </summary>
internal sealed class BlockTransfer
{
    /// <summary>The request body, read as each block is sent; null to send the request's payload.</summary>
    public BlockSource? Source { get; init; }

    /// <summary>Where a successful response's body goes, block by block; null to assemble it in the response.</summary>
    public Stream? Destination { get; init; }

    /// <summary>Told after each block acknowledged (upload) or received (download); null for none.</summary>
    public IProgress<CoapTransferProgress>? Progress { get; init; }
}
