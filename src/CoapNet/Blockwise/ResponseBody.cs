namespace CoapNet.Blockwise;

/// <summary>
/// What a server's handler asked of its response body beyond the bytes of the message (<see cref="Messages.CoapResponse"/>):
/// a seekable stream to read block by block instead of a payload, its own block size (RFC 7959 section 2.2), and whether
/// the representation never changes (no ETag is needed to tell its blocks from another version's, section 2.4). A feature
/// of the exchange, set by the server before it answers and read by the stage that cuts the body: Q-Block when it sends
/// the body in Q-Block2 blocks (it then takes the stream), block-wise otherwise.
/// </summary>
/// <param name="Stream">The body, read and closed by the stage that sends it; null for the message's payload.</param>
/// <param name="BlockSize">The handler's block size in bytes, or null for the server's.</param>
/// <param name="Immutable">True when the handler said the representation never changes (<see cref="Messages.CoapResponse.Immutable"/>).</param>
internal sealed record ResponseBody(Stream? Stream, int? BlockSize, bool Immutable = false);
