using CoapNet.Channels;
using Org.BouncyCastle.Tls;
using Org.BouncyCastle.Tls.Crypto;

namespace CoapNet.Dtls.Sessions;

/// <summary>BouncyCastle's server side of one handshake, set up for CoAP: DTLS 1.2 only, the CoAP cipher suites, our credentials.</summary>
internal sealed class CoapDtlsServer : AbstractTlsServer
{
    private readonly DtlsServerOptions _options;

    public CoapDtlsServer(TlsCrypto crypto, DtlsServerOptions options)
        : base(crypto)
    {
        _options = options;
    }

    /// <summary>Malformed or forged records are dropped, never answered with an alert that would end the association.</summary>
    public override bool IgnoreCorruptDtlsRecords => true;

    /// <summary>Who the client proved to be, once the handshake completed.</summary>
    public CoapPeerIdentity PeerIdentity
        => m_context.SecurityParameters.PskIdentity is { } identity
            ? CoapPeerIdentity.FromPreSharedKey(identity)
            : throw new TlsFatalAlert(AlertDescription.internal_error);

    public override int GetHandshakeTimeoutMillis() => (int)_options.HandshakeTimeout.TotalMilliseconds;

    public override TlsCredentials? GetCredentials()
        => m_context.SecurityParameters.KeyExchangeAlgorithm switch
        {
            // The PSK key exchanges authenticate with the key itself: no certificate (RFC 4279 section 2).
            KeyExchangeAlgorithm.PSK or KeyExchangeAlgorithm.ECDHE_PSK or KeyExchangeAlgorithm.DHE_PSK => null,
            _ => throw new TlsFatalAlert(AlertDescription.internal_error),
        };

    public override TlsPskIdentityManager GetPskIdentityManager() => new PskIdentities(_options);

    protected override ProtocolVersion[] GetSupportedVersions() => ProtocolVersion.DTLSv12.Only();

    protected override int[] GetSupportedCipherSuites() => TlsUtilities.GetSupportedCipherSuites(Crypto, DtlsCipherSuites.Psk);

    // RFC 7252 section 9.1.3.1: CCM_8 is the suite every CoAP node implements; our order, not the client's, decides.
    protected override bool PreferLocalCipherSuites() => true;

    private sealed class PskIdentities(DtlsServerOptions options) : TlsPskIdentityManager
    {
        public byte[]? GetHint() => options.PskIdentityHint is { } hint ? System.Text.Encoding.UTF8.GetBytes(hint) : null;

        // A copy: BouncyCastle clears the key it is given once the premaster secret is made (TlsPskKeyExchange).
        public byte[]? GetPsk(byte[] identity) => options.PskKeys!(identity) is { } key ? (byte[])key.Clone() : null;
    }
}
