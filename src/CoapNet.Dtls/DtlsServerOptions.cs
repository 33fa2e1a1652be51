namespace CoapNet.Dtls;

/// <summary>
/// Whom a <see cref="DtlsServerTransport"/> lets in and how it bounds its sessions; where it listens is its endpoint's
/// address (<c>options.Listen("coaps://[::]:5684", endpoint =&gt; endpoint.UseDtls(serverOptions))</c>).
/// </summary>
public sealed class DtlsServerOptions : DtlsOptions
{
    /// <summary>
    /// The pre-shared keys (RFC 7252 section 9.1.3.1): from the identity a client names to its key; null to offer no
    /// PSK suite. A server needs this, or a <see cref="DtlsOptions.RawPublicKeyPair"/> or
    /// <see cref="DtlsOptions.Certificate"/> with a way to check clients' (<see cref="DtlsOptions.TrustedRawPublicKeys"/>,
    /// <see cref="DtlsOptions.TrustedRoots"/>, <see cref="DtlsOptions.CertificateValidator"/>): with raw public keys and
    /// certificates the client authenticates too, so every session has an identity.
    /// </summary>
    public DtlsPskKeyLookup? PskKeys { get; set; }

    /// <summary>
    /// The PSK identity hint sent in ServerKeyExchange (RFC 4279 section 2), or null to send none (the default).
    /// libcoap's clients accept either.
    /// </summary>
    public string? PskIdentityHint { get; set; }

    /// <summary>
    /// How long a secret for HelloVerifyRequest cookies is used before a new one replaces it (default 60 s, as
    /// Californium does; RFC 6347 section 4.2.1 asks for a secret changed frequently). A cookie made with the
    /// previous secret is still accepted, so a client between its two ClientHellos at the change is not refused.
    /// </summary>
    public TimeSpan CookieSecretLifetime { get; set; } = TimeSpan.FromSeconds(60);

    /// <summary>A PSK lookup over a fixed table of UTF-8 identities, for configuration and tests.</summary>
    /// <param name="keys">Identity to key.</param>
    /// <returns>The lookup; it copies the table, so later changes to <paramref name="keys"/> are not seen.</returns>
    /// <exception cref="ArgumentException">An identity or key is empty.</exception>
    public static DtlsPskKeyLookup PskTable(IReadOnlyDictionary<string, byte[]> keys)
    {
        ArgumentNullException.ThrowIfNull(keys);
        Dictionary<string, byte[]> copy = new(StringComparer.Ordinal);
        foreach (KeyValuePair<string, byte[]> pair in keys)
        {
            Require(!string.IsNullOrEmpty(pair.Key) && pair.Value is { Length: > 0 }, nameof(keys), "must map non-empty identities to non-empty keys");
            copy[pair.Key] = (byte[])pair.Value.Clone();
        }

        return identity => copy.TryGetValue(System.Text.Encoding.UTF8.GetString(identity), out byte[]? key) ? key : null;
    }

    /// <summary>Checks the settings before a transport uses them.</summary>
    /// <exception cref="ArgumentException">A setting is missing or out of range; the message names it.</exception>
    internal void Validate()
    {
        ValidateShared();
        bool signs = RawPublicKeyPair is not null || Certificate is not null;
        Require(PskKeys is not null || signs, nameof(PskKeys), $"or {nameof(RawPublicKeyPair)} or {nameof(Certificate)} must be set: the server needs a credential to authenticate with");
        Require(!signs || TrustsRawPublicKeys || TrustsCertificates, nameof(TrustedRawPublicKeys), $"or {nameof(TrustedRoots)} or {nameof(CertificateValidator)} must be set with {nameof(RawPublicKeyPair)} or {nameof(Certificate)}: clients authenticate too (RFC 7252 section 9.1.3.2)");
        Require(CookieSecretLifetime > TimeSpan.Zero, nameof(CookieSecretLifetime), "must be positive");
        Require(PskIdentityHint is null || System.Text.Encoding.UTF8.GetByteCount(PskIdentityHint) <= ushort.MaxValue, nameof(PskIdentityHint), "must be at most 65535 bytes in UTF-8");
    }
}
