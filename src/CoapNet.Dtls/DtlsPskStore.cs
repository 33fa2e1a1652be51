namespace CoapNet.Dtls;

/// <summary>
/// Where a server finds the pre-shared key of a PSK identity a client names in its handshake (RFC 4279 section 2, RFC 7252
/// section 9.1.3.1): <see cref="DtlsServerOptions.PskKeys"/>. The library ships two, a table changed in code
/// (<see cref="DtlsPskTable"/>) and a file (<see cref="DtlsPskFile"/>); derive from this class to look keys up elsewhere
/// (a database, a provisioning service's cache).
/// </summary>
/// <remarks>
/// The server asks once per handshake, on the handshake's thread, and copies the key before it returns; the identity
/// span is valid only during the call. A fleet's store holds 100,000 identities and more, so a lookup should neither
/// allocate nor take long, and the store may change at run time (a device provisioned while the server runs): a
/// session already established keeps the key it was made with until it ends, and the next handshake asks again.
/// </remarks>
public abstract class DtlsPskStore
{
    /// <summary>Finds the key of <paramref name="identity"/>.</summary>
    /// <param name="identity">The identity the client sent, as bytes (usually ASCII or UTF-8 text).</param>
    /// <param name="key">The key when found; its bytes must not change afterwards (the server copies them at once).</param>
    /// <returns>True when the identity is known; false makes the handshake fail with unknown_psk_identity, and nothing is answered in CoAP.</returns>
    public abstract bool TryGetKey(ReadOnlySpan<byte> identity, out ReadOnlyMemory<byte> key);
}
