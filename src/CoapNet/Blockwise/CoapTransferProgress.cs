namespace CoapNet.Blockwise;

/// <summary>
/// How far a block-wise transfer has come (RFC 7959): the body bytes sent or received so far, and the
/// whole body's size when known (Size1 of an upload, Size2 of a download, RFC 7959 section 4).
/// </summary>
/// <param name="BytesTransferred">Body bytes acknowledged (upload) or received (download) so far.</param>
/// <param name="TotalBytes">The whole body's size, or null when neither side announced it.</param>
public readonly record struct CoapTransferProgress(long BytesTransferred, long? TotalBytes);
