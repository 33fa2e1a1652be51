using CoapNet.Channels;
using Org.BouncyCastle.Tls;
using Org.BouncyCastle.Tls.Crypto;

namespace CoapNet.Dtls.Sessions;

/// <summary>BouncyCastle's client side of one handshake, set up for CoAP: DTLS 1.2 only, the CoAP cipher suites, our credentials.</summary>
internal sealed class CoapDtlsClient : AbstractTlsClient
{
    private readonly DtlsClientOptions _options;
    private readonly byte[] _identity;

    public CoapDtlsClient(TlsCrypto crypto, DtlsClientOptions options)
        : base(crypto)
    {
        _options = options;
        _identity = System.Text.Encoding.UTF8.GetBytes(options.PskIdentity!);
    }

    /// <summary>Malformed or forged records are dropped, never answered with an alert that would end the association.</summary>
    public override bool IgnoreCorruptDtlsRecords => true;

    /// <summary>
    /// Who the server proved to be: with a pre-shared key, the holder of the key named by our identity (RFC 4279
    /// section 2: only the two ends know it).
    /// </summary>
    public CoapPeerIdentity PeerIdentity => CoapPeerIdentity.FromPreSharedKey(_identity);

    public override int GetHandshakeTimeoutMillis() => (int)_options.HandshakeTimeout.TotalMilliseconds;

    // A copy of the key: BouncyCastle clears the key it is given once the premaster secret is made (TlsPskKeyExchange).
    public override TlsPskIdentity GetPskIdentity() => new BasicTlsPskIdentity(_identity, (byte[])_options.PskKey!.Clone());

    // Reached only for a key exchange that authenticates the server by certificate, which a PSK client never offers.
    public override TlsAuthentication GetAuthentication() => throw new TlsFatalAlert(AlertDescription.internal_error);

    protected override ProtocolVersion[] GetSupportedVersions() => ProtocolVersion.DTLSv12.Only();

    protected override int[] GetSupportedCipherSuites() => TlsUtilities.GetSupportedCipherSuites(Crypto, DtlsCipherSuites.Psk);
}
