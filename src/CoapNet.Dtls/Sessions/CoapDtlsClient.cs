using CoapNet.Channels;
using CoapNet.Dtls.Credentials;
using CoapNet.Dtls.Records;
using Org.BouncyCastle.Tls;
using Org.BouncyCastle.Tls.Crypto;

namespace CoapNet.Dtls.Sessions;

/// <summary>BouncyCastle's client side of one handshake, set up for CoAP: DTLS 1.2 only, the CoAP cipher suites, our credentials.</summary>
internal sealed class CoapDtlsClient : AbstractTlsClient
{
    private readonly DtlsClientOptions _options;
    private readonly DtlsCredentials _credentials;
    private readonly byte[]? _identity;
    private CoapPeerIdentity? _verifiedPeer;

    public CoapDtlsClient(TlsCrypto crypto, DtlsClientOptions options, DtlsCredentials credentials)
        : base(crypto)
    {
        _options = options;
        _credentials = credentials;
        _identity = options.PskIdentity is { } identity ? System.Text.Encoding.UTF8.GetBytes(identity) : null;
    }

    /// <summary>Malformed or forged records are dropped, never answered with an alert that would end the association.</summary>
    public override bool IgnoreCorruptDtlsRecords => true;

    /// <summary>
    /// Who the server proved to be: the raw public key or certificate it signed with, or, with a pre-shared key, the
    /// holder of the key named by our identity (RFC 4279 section 2: only the two ends know it).
    /// </summary>
    public CoapPeerIdentity PeerIdentity
        => _verifiedPeer
            ?? (_identity is not null ? CoapPeerIdentity.FromPreSharedKey(_identity) : throw new TlsFatalAlert(AlertDescription.internal_error));

    /// <summary>Our own protection of the session's records, made from its keys once the handshake completed; null when its suite stays on BouncyCastle's record layer.</summary>
    public RecordProtection? Protection { get; private set; }

    /// <summary>True once the server answered our ClientHello with its ServerHello: it is there, speaks DTLS 1.2 and chose a cipher suite.</summary>
    public bool ServerAnswered { get; private set; }

    /// <summary>True when the handshake offers a pre-shared key (RFC 4279).</summary>
    public bool OffersPsk => _identity is not null;

    public override void NotifySelectedCipherSuite(int selectedCipherSuite)
    {
        base.NotifySelectedCipherSuite(selectedCipherSuite);
        ServerAnswered = true;
    }

    public override void NotifyHandshakeComplete()
    {
        base.NotifyHandshakeComplete();
        Protection = RecordProtection.TryCreate(m_context);
    }

    public override int GetHandshakeTimeoutMillis() => (int)_options.HandshakeTimeout.TotalMilliseconds;

    // A copy of the key: BouncyCastle clears the key it is given once the premaster secret is made (TlsPskKeyExchange).
    public override TlsPskIdentity? GetPskIdentity()
        => _identity is null ? null : new BasicTlsPskIdentity(_identity, (byte[])_options.PskKey!.Clone());

    public override TlsAuthentication GetAuthentication() => new Authentication(this);

    protected override ProtocolVersion[] GetSupportedVersions() => ProtocolVersion.DTLSv12.Only();

    protected override int[] GetSupportedCipherSuites()
        => TlsUtilities.GetSupportedCipherSuites(Crypto, DtlsCipherSuites.For(_identity is not null, _credentials.TrustedTypes is not null));

    // RFC 7250 section 4.1: the kinds of our own we can present, and those of the server's we can check.
    protected override short[]? GetAllowedClientCertificateTypes() => _credentials.OwnTypes;

    protected override short[]? GetAllowedServerCertificateTypes() => _credentials.TrustedTypes;

    // RFC 9146 section 3: an empty Connection ID asks the server to send to us without one (we find our sessions by
    // the server's address) while we send with the one it issues, so the server knows us after our port changes.
    protected override byte[]? GetNewConnectionID() => _options.UseConnectionId ? [] : null;

    private sealed class Authentication(CoapDtlsClient client) : TlsAuthentication
    {
        public void NotifyServerCertificate(TlsServerCertificate serverCertificate)
            => client._verifiedPeer = client._credentials.Verify(serverCertificate.Certificate);

        public TlsCredentials? GetClientCredentials(CertificateRequest certificateRequest)
        {
            // The type the server chose from our client_certificate_type list, X.509 when no list was exchanged.
            LocalKey? key = client.m_context.SecurityParameters.ClientCertificateType == CertificateType.RawPublicKey
                ? client._credentials.RawPublicKey
                : client._credentials.Certificate;
            return key?.Signer(client.m_context, client.Crypto, certificateRequest.SupportedSignatureAlgorithms);
        }
    }
}
