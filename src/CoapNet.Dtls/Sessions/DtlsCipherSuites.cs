using Org.BouncyCastle.Tls;

namespace CoapNet.Dtls.Sessions;

/// <summary>The cipher suites offered and accepted, in order of preference.</summary>
internal static class DtlsCipherSuites
{
    /// <summary>
    /// PSK: TLS_PSK_WITH_AES_128_CCM_8 first, the suite RFC 7252 section 9.1.3.1 makes mandatory (BouncyCastle leaves
    /// CCM_8 out of its defaults, hence the list), then the GCM and CCM suites libcoap's OpenSSL and GnuTLS builds
    /// prefer, then CBC with ECDHE (forward secrecy) and without, for older peers.
    /// </summary>
    public static readonly int[] Psk =
    [
        CipherSuite.TLS_PSK_WITH_AES_128_CCM_8,
        CipherSuite.TLS_PSK_WITH_AES_128_GCM_SHA256,
        CipherSuite.TLS_PSK_WITH_AES_256_GCM_SHA384,
        CipherSuite.TLS_PSK_WITH_AES_128_CCM,
        CipherSuite.TLS_ECDHE_PSK_WITH_AES_128_CBC_SHA256,
        CipherSuite.TLS_PSK_WITH_AES_128_CBC_SHA256,
    ];

    /// <summary>
    /// Raw public keys and certificates (ECDSA P-256): TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8 first, mandatory for both
    /// modes (RFC 7252 sections 9.1.3.2 and 9.1.3.3), then the GCM suites libcoap's OpenSSL and GnuTLS builds prefer,
    /// then CCM and CBC for older peers.
    /// </summary>
    public static readonly int[] Ecdsa =
    [
        CipherSuite.TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8,
        CipherSuite.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        CipherSuite.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        CipherSuite.TLS_ECDHE_ECDSA_WITH_AES_128_CCM,
        CipherSuite.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256,
    ];

    /// <summary>The suites for the credentials at hand: PSK first when there is a key, then ECDSA when there is a way to authenticate by it.</summary>
    public static int[] For(bool psk, bool ecdsa)
        => (psk, ecdsa) switch
        {
            (true, true) => [.. Psk, .. Ecdsa],
            (true, false) => Psk,
            (false, true) => Ecdsa,
            _ => [],
        };
}
