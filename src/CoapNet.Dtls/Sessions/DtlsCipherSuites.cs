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
}
