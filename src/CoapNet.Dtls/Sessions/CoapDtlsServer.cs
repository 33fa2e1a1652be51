using CoapNet.Channels;
using CoapNet.Dtls.Credentials;
using CoapNet.Dtls.Records;
using Org.BouncyCastle.Tls;
using Org.BouncyCastle.Tls.Crypto;
using BcCertificate = Org.BouncyCastle.Tls.Certificate;

namespace CoapNet.Dtls.Sessions;

/// <summary>BouncyCastle's server side of one handshake, set up for CoAP: DTLS 1.2 only, the CoAP cipher suites, our credentials.</summary>
internal sealed class CoapDtlsServer : AbstractTlsServer
{
    private readonly DtlsServerOptions _options;
    private readonly DtlsCredentials _credentials;
    private readonly Func<DtlsSession, byte[]>? _newConnectionId;
    private readonly DtlsSession _session;
    private CoapPeerIdentity? _verifiedPeer;

    /// <param name="crypto">BouncyCastle's crypto.</param>
    /// <param name="options">The server's options.</param>
    /// <param name="credentials">Our keys and trust.</param>
    /// <param name="newConnectionId">Issues a session's Connection ID when the client offers the extension (RFC 9146), or null to issue none.</param>
    /// <param name="session">The session being made.</param>
    public CoapDtlsServer(TlsCrypto crypto, DtlsServerOptions options, DtlsCredentials credentials, Func<DtlsSession, byte[]>? newConnectionId, DtlsSession session)
        : base(crypto)
    {
        _options = options;
        _credentials = credentials;
        _newConnectionId = newConnectionId;
        _session = session;
    }

    /// <summary>Malformed or forged records are dropped, never answered with an alert that would end the association.</summary>
    public override bool IgnoreCorruptDtlsRecords => true;

    /// <summary>Who the client proved to be, once the handshake completed: its PSK identity, raw public key or certificate.</summary>
    public CoapPeerIdentity PeerIdentity
        => _verifiedPeer
            ?? (m_context.SecurityParameters.PskIdentity is { } identity
                ? CoapPeerIdentity.FromPreSharedKey(identity)
                : throw new TlsFatalAlert(AlertDescription.internal_error));

    /// <summary>Our own protection of the session's records, made from its keys once the handshake completed; null when its suite stays on BouncyCastle's record layer.</summary>
    public RecordProtection? Protection { get; private set; }

    public override void NotifyHandshakeComplete()
    {
        base.NotifyHandshakeComplete();
        Protection = RecordProtection.TryCreate(m_context);
    }

    public override int GetHandshakeTimeoutMillis() => (int)_options.HandshakeTimeout.TotalMilliseconds;

    public override TlsCredentials? GetCredentials()
        => m_context.SecurityParameters.KeyExchangeAlgorithm switch
        {
            // The PSK key exchanges authenticate with the key itself: no certificate (RFC 4279 section 2).
            KeyExchangeAlgorithm.PSK or KeyExchangeAlgorithm.ECDHE_PSK or KeyExchangeAlgorithm.DHE_PSK => null,

            // RFC 7250 section 4.1: our raw public key when the client accepts one, else our certificate.
            KeyExchangeAlgorithm.ECDHE_ECDSA => OurKey()?.Signer(m_context, Crypto, m_context.SecurityParameters.ClientSigAlgs)
                ?? throw new TlsFatalAlert(AlertDescription.handshake_failure),
            _ => throw new TlsFatalAlert(AlertDescription.internal_error),
        };

    /// <summary>
    /// With a raw public key or a certificate, the client must authenticate too (RFC 7252 sections 9.1.3.2 and
    /// 9.1.3.3: the server acts on who the client is), with an ECDSA key.
    /// </summary>
    public override CertificateRequest? GetCertificateRequest()
        => m_context.SecurityParameters.KeyExchangeAlgorithm == KeyExchangeAlgorithm.ECDHE_ECDSA
            ? new CertificateRequest([ClientCertificateType.ecdsa_sign], TlsUtilities.GetDefaultSupportedSignatureAlgorithms(m_context), null)
            : null;

    public override void NotifyClientCertificate(BcCertificate clientCertificate) => _verifiedPeer = _credentials.Verify(clientCertificate);

    public override TlsPskIdentityManager? GetPskIdentityManager() => _options.PskKeys is null ? null : new PskIdentities(_options);

    protected override ProtocolVersion[] GetSupportedVersions() => ProtocolVersion.DTLSv12.Only();

    protected override int[] GetSupportedCipherSuites()
        => TlsUtilities.GetSupportedCipherSuites(Crypto, DtlsCipherSuites.For(_options.PskKeys is not null, _credentials.OwnTypes is not null && _credentials.TrustedTypes is not null));

    // RFC 7252 section 9.1.3.1: CCM_8 is the suite every CoAP node implements; our order, not the client's, decides.
    protected override bool PreferLocalCipherSuites() => true;

    // An ECDSA suite only when we hold a key of a type the client accepts (RFC 7250 section 4.1).
    protected override bool IsSelectableCipherSuite(int cipherSuite, int availCurveBits, int availFiniteFieldBits, IList<short> sigAlgs)
        => base.IsSelectableCipherSuite(cipherSuite, availCurveBits, availFiniteFieldBits, sigAlgs)
            && (TlsUtilities.GetKeyExchangeAlgorithm(cipherSuite) != KeyExchangeAlgorithm.ECDHE_ECDSA || OurKey() is not null);

    protected override short[]? GetAllowedClientCertificateTypes() => _credentials.TrustedTypes;

    protected override byte[]? GetNewConnectionID() => _newConnectionId?.Invoke(_session);

    private LocalKey? OurKey() => _credentials.For(TlsExtensionsUtilities.GetServerCertificateTypeExtensionClient(m_clientExtensions));

    private sealed class PskIdentities(DtlsServerOptions options) : TlsPskIdentityManager
    {
        public byte[]? GetHint() => options.PskIdentityHint is { } hint ? System.Text.Encoding.UTF8.GetBytes(hint) : null;

        // A copy: BouncyCastle clears the key it is given once the premaster secret is made (TlsPskKeyExchange).
        public byte[]? GetPsk(byte[] identity) => options.PskKeys!.TryGetKey(identity, out ReadOnlyMemory<byte> key) ? key.ToArray() : null;
    }
}
