namespace CoapNet.Dtls;

/// <summary>
/// Finds the pre-shared key of a PSK identity a client named in its handshake (RFC 4279 section 2, RFC 7252
/// section 9.1.3.1). Runs on a handshake thread.
/// </summary>
/// <param name="identity">The identity the client sent, as bytes (usually UTF-8 text).</param>
/// <returns>The key, or null for an unknown identity: the handshake then fails with unknown_psk_identity and nothing is answered.</returns>
public delegate byte[]? DtlsPskKeyLookup(ReadOnlySpan<byte> identity);
