using Org.BouncyCastle.Tls;

namespace CoapNet.Dtls.Sessions;

/// <summary>
/// The names of TLS alerts (RFC 5246 section 7.2, RFC 4279 section 2, RFC 8446 section 6) and what one that refuses a
/// handshake most likely means to the side that receives it, so a refusal reads as a cause, not only as a code.
/// </summary>
internal static class DtlsAlerts
{
    /// <summary>The alert's registered name, such as "bad_record_mac".</summary>
    public static string Name(short alert) => AlertDescription.GetName(alert);

    /// <summary>
    /// The alert's name with what its sender most likely objected to, in parentheses: "bad_record_mac (wrong key?)".
    /// An alert with no likely single cause is its name alone.
    /// </summary>
    public static string Explain(short alert) => LikelyCause(alert) is { } cause ? $"{Name(alert)} ({cause})" : Name(alert);

    /// <summary>What the peer that sent <paramref name="alert"/> to refuse a handshake most likely found wrong, or null.</summary>
    private static string? LikelyCause(short alert) => alert switch
    {
        // A peer that derives other keys from a different pre-shared key cannot verify our Finished: it says so with
        // bad_record_mac when the record does not decrypt, decrypt_error when its verify_data differs (RFC 5246 7.2.2).
        AlertDescription.bad_record_mac or AlertDescription.decrypt_error => "wrong key?",
        AlertDescription.unknown_psk_identity => "unknown identity?",
        AlertDescription.handshake_failure => "no cipher suite or credential in common?",
        AlertDescription.bad_certificate or AlertDescription.unsupported_certificate or AlertDescription.certificate_unknown
            or AlertDescription.certificate_expired or AlertDescription.certificate_revoked => "our certificate or key not accepted?",
        AlertDescription.unknown_ca => "our certificate's issuer not trusted?",
        AlertDescription.access_denied => "identity not allowed?",
        AlertDescription.protocol_version => "no DTLS 1.2?",
        AlertDescription.insufficient_security => "cipher suites too weak for the peer?",
        // Our server refuses with internal_error when it is full (MaxSessions, RFC 5246 7.2.2: "unrelated to the peer"),
        // and ends a handshake with it when the client stalled or its place went to a newcomer.
        AlertDescription.internal_error => "the peer is full or had a fault?",
        _ => null,
    };
}
