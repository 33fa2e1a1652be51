using System.Net;
using CoapNet.Dtls.Credentials;
using CoapNet.Transports;
using Org.BouncyCastle.Tls;

namespace CoapNet.Dtls.Sessions;

/// <summary>The server's engine: a verified ClientHello from an address starts a handshake; nothing else does.</summary>
internal sealed class ServerEngine : DtlsEngine
{
    private readonly DtlsServerOptions _options;
    private readonly DtlsCredentials _credentials;
    private readonly Func<DtlsSession, byte[]> _issueConnectionId;
    private CookieVerifier? _cookies;

    public ServerEngine(IDatagramTransport network, DtlsServerOptions options, DtlsCredentials credentials)
        : base(network, options)
    {
        _options = options;
        _credentials = credentials;

        // One delegate for every session: a lambda per handshake would keep that handshake's ClientHello alive as
        // long as BouncyCastle keeps the server object.
        _issueConnectionId = IssueConnectionId;
    }

    protected override bool RestartsOnClientHello => true;

    protected override string PeerName => "the client";

    // OnUnacknowledged keeps the session: a client that lost it comes back with a ClientHello from the same address,
    // which replaces it (RFC 6347 section 4.2.8), and one that went away ages out, so an unacknowledged notification
    // alone does not end it.

    protected override void OnUnknownDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote)
    {
        // Only a ClientHello may begin an association; any other record from an unknown address is dropped unanswered.
        if (!DtlsRecords.IsClientHello(datagram))
        {
            return;
        }

        // RFC 6347 section 4.2.1: without a cookie proving the source, the answer is a HelloVerifyRequest and no state.
        // Made on the first ClientHello, with the crypto (once, whichever receive thread gets there first).
        CookieVerifier cookies = LazyInitializer.EnsureInitialized(ref _cookies, () => new CookieVerifier(Crypto, _options.TimeProvider, _options.CookieSecretLifetime, Network));
        DtlsRequest? request = cookies.Verify(datagram, remote);
        if (request is null)
        {
            return;
        }

        TryStartHandshake(remote, session =>
        {
            CoapDtlsServer server = new(Crypto, _options, _credentials, _options.UseConnectionId ? _issueConnectionId : null, session);
            DtlsServerProtocol protocol = new();
            Org.BouncyCastle.Tls.DtlsTransport transport = protocol.Accept(server, session, request);
            return (transport, server.PeerIdentity, server.Protection);
        }, out _);
    }
}
