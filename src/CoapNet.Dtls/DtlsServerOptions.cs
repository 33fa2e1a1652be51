namespace CoapNet.Dtls;

/// <summary>
/// Whom a <see cref="DtlsServerTransport"/> lets in and how it bounds its sessions; where it listens is its endpoint's
/// address (<c>options.Listen("coaps://[::]:5684", endpoint =&gt; endpoint.UseDtls(serverOptions))</c>).
/// </summary>
public sealed class DtlsServerOptions : DtlsOptions
{
    /// <summary>
    /// The pre-shared keys (RFC 7252 section 9.1.3.1): from the identity a client names to its key (a
    /// <see cref="DtlsPskTable"/> changed in code, a <see cref="DtlsPskFile"/> for a fleet, or a store of your own); null
    /// to offer no PSK suite. A server needs this, or a <see cref="DtlsOptions.RawPublicKeyPair"/> or
    /// <see cref="DtlsOptions.Certificate"/> with a way to check clients' (<see cref="DtlsOptions.TrustedRawPublicKeys"/>,
    /// <see cref="DtlsOptions.TrustedRoots"/>, <see cref="DtlsOptions.CertificateValidator"/>): with raw public keys and
    /// certificates the client authenticates too, so every session has an identity.
    /// </summary>
    public DtlsPskStore? PskKeys { get; set; }

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

    /// <summary>
    /// How long a handshake may wait for the client once the cookie exchange is done (default 5 s), counted from the
    /// last time the client moved it forward: every flight it sends (its key exchange, certificate, Finished) starts
    /// the count again, a repeated ClientHello does not. RFC 6347 section 4.2.4 has a live peer answer each flight or
    /// retransmit its own after 1 s, then 2 s more: a device on a slow link with round trips of several seconds gets
    /// through, while one that completes the cookie exchange and goes silent gives its place back within this time
    /// instead of holding it for all of <see cref="DtlsOptions.HandshakeTimeout"/>, which still bounds the whole.
    /// Measured on <see cref="DtlsOptions.TimeProvider"/>.
    /// </summary>
    public TimeSpan HandshakeStallTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// The most handshakes one source may have under way at once (default 16): one IPv4 address, or one IPv6 /64
    /// (a host commonly holds a whole /64). Generous, since a fleet behind carrier-grade NAT shares addresses. At the
    /// bound a new cookie-verified ClientHello from that source takes the place of its handshake stalled longest (no
    /// progress for at least a second, RFC 6347 section 4.2.4.1's initial retransmission timer), or is dropped
    /// unanswered when none is, and the client's retransmission tries again; when all
    /// <see cref="DtlsOptions.MaxConcurrentHandshakes"/> are taken, the same rule applies across every source.
    /// </summary>
    public int MaxConcurrentHandshakesPerAddress { get; set; } = 16;

    /// <summary>
    /// How long a session must have been idle before, with <see cref="DtlsOptions.MaxSessions"/> reached, it may be
    /// evicted to admit a new client (default 10 minutes): the least recently active goes first, with close_notify, as
    /// Californium Scandium evicts stale connections; a client is refused (with a fatal internal_error alert) only when
    /// no session has been idle that long. <see cref="Timeout.InfiniteTimeSpan"/> never evicts.
    /// </summary>
    public TimeSpan SessionEvictionThreshold { get; set; } = TimeSpan.FromMinutes(10);

    /// <summary>
    /// True to keep one session per client identity (a PSK identity, a raw public key, a certificate): when a handshake
    /// completes for an identity that already has a session, the older session is closed with close_notify. A device
    /// that comes back from a new address (a NAT rebinding, a cell that came back; without a Connection ID, RFC 9146, its
    /// session cannot follow it) otherwise leaves its old session holding a place until <see cref="DtlsOptions.SessionIdleTimeout"/>,
    /// and a fleet that reconnects at once fills <see cref="DtlsOptions.MaxSessions"/> with sessions nobody uses, so the
    /// rest of it is refused. Only for identities that belong to one client each, as a fleet's keys per device do:
    /// clients sharing a key would close each other's sessions. Off by default: RFC 7252 section 9.1.3.1 lets clients
    /// share an identity. (Californium's DTLS_REMOVE_STALE_DOUBLE_PRINCIPALS is the same policy.)
    /// </summary>
    public bool OneSessionPerIdentity { get; set; }

    /// <summary>A table of UTF-8 identities and their keys, for configuration and tests; it may be changed later (<see cref="DtlsPskTable.Set(string, ReadOnlySpan{byte})"/>).</summary>
    /// <param name="keys">Identity to key.</param>
    /// <returns>The table; it copies the keys, so later changes to <paramref name="keys"/> are not seen.</returns>
    /// <exception cref="ArgumentException">An identity or key is empty.</exception>
    public static DtlsPskTable PskTable(IReadOnlyDictionary<string, byte[]> keys)
    {
        ArgumentNullException.ThrowIfNull(keys);
        DtlsPskTable table = new(keys.Count);
        foreach (KeyValuePair<string, byte[]> pair in keys)
        {
            Require(!string.IsNullOrEmpty(pair.Key) && pair.Value is { Length: > 0 }, nameof(keys), "must map non-empty identities to non-empty keys");
            table.Set(pair.Key, pair.Value);
        }

        return table;
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
        Require(HandshakeStallTimeout > TimeSpan.Zero && HandshakeStallTimeout.TotalMilliseconds <= int.MaxValue, nameof(HandshakeStallTimeout), "must be positive and under 24 days");
        Require(MaxConcurrentHandshakesPerAddress >= 1, nameof(MaxConcurrentHandshakesPerAddress), "must be at least 1");
        Require(SessionEvictionThreshold > TimeSpan.Zero || SessionEvictionThreshold == Timeout.InfiniteTimeSpan, nameof(SessionEvictionThreshold), "must be positive, or Timeout.InfiniteTimeSpan to never evict");
        Require(PskIdentityHint is null || System.Text.Encoding.UTF8.GetByteCount(PskIdentityHint) <= ushort.MaxValue, nameof(PskIdentityHint), "must be at most 65535 bytes in UTF-8");
    }
}
