using System.Security.Cryptography;
using CoapNet.Channels;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// Raw public keys (RFC 7250; RFC 7252 section 9.1.3.2) between our client and our server over loopback: each side
/// knows the other by its P-256 key, decided by its trust callback, and the handler reads the client's key.
/// </summary>
public sealed class DtlsRawPublicKeyTests
{
    [Fact]
    public async Task AClientWithATrustedKeyGetsAndTheHandlerReadsItsKey()
    {
        using ECDsa serverKey = DtlsKeys.NewKey();
        using ECDsa clientKey = DtlsKeys.NewKey();
        List<CoapPeerIdentity> seen = [];
        await using LoopbackServer server = DtlsLoopback.StartServer(s => DtlsLoopback.MapWho(s, seen), out _, ServerOptions(serverKey, clientKey));
        await using CoapClient client = DtlsLoopback.ClientWith(ClientOptions(clientKey, serverKey));

        string answer = (await client.GetAsync(DtlsLoopback.Uri(server.EndPoint, "/who"))).GetPayloadString();

        seen.Should().Equal(CoapPeerIdentity.FromRawPublicKey(clientKey.ExportSubjectPublicKeyInfo()));
        seen[0].Kind.Should().Be(CoapPeerIdentityKind.RawPublicKey);
        answer.Should().Be("hello " + seen[0]);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task AKeyTheOtherSideDoesNotTrustIsRefusedOnEitherSide(bool clientIsStranger)
    {
        using ECDsa serverKey = DtlsKeys.NewKey();
        using ECDsa clientKey = DtlsKeys.NewKey();
        using ECDsa stranger = DtlsKeys.NewKey();
        DtlsServerOptions server = ServerOptions(serverKey, clientIsStranger ? stranger : clientKey);
        DtlsClientOptions client = ClientOptions(clientKey, clientIsStranger ? serverKey : stranger);

        (await DtlsLoopback.RefusedAsync(server, client)).Message.Should().Contain("bad_certificate");
    }

    [Fact]
    public async Task ATrustCallbackThatThrowsRefusesTheKey()
    {
        using ECDsa serverKey = DtlsKeys.NewKey();
        using ECDsa clientKey = DtlsKeys.NewKey();
        DtlsServerOptions options = ServerOptions(serverKey, clientKey);
        options.TrustedRawPublicKeys = _ => throw new InvalidOperationException("the key store is down");

        await DtlsLoopback.RefusedAsync(options, ClientOptions(clientKey, serverKey));
    }

    [Fact]
    public void AKeyOnAnotherCurveIsRefusedWithTheOptionsName()
    {
        using ECDsa p384 = ECDsa.Create(ECCurve.NamedCurves.nistP384);

        Action create = () => new CoapNet.Server.CoapServerOptions().Listen("coaps://127.0.0.1:0", endpoint => endpoint.UseDtls(new DtlsServerOptions { RawPublicKeyPair = p384, TrustedRawPublicKeys = _ => true }));

        create.Should().Throw<ArgumentException>().Which.ParamName.Should().Be(nameof(DtlsOptions.RawPublicKeyPair));
    }

    [Fact]
    public void AServerWithAKeyButNoWayToCheckClientsIsRefused()
    {
        using ECDsa key = DtlsKeys.NewKey();

        Action create = () => new CoapNet.Server.CoapServerOptions().Listen("coaps://127.0.0.1:0", endpoint => endpoint.UseDtls(new DtlsServerOptions { RawPublicKeyPair = key }));

        create.Should().Throw<ArgumentException>().Which.Message.Should().Contain("clients authenticate too");
    }

    internal static DtlsServerOptions ServerOptions(ECDsa serverKey, ECDsa trustedClient)
    {
        DtlsServerOptions options = DtlsLoopback.BareServerOptions();
        options.RawPublicKeyPair = serverKey;
        options.TrustedRawPublicKeys = DtlsOptions.RawPublicKeyTable([trustedClient.ExportSubjectPublicKeyInfo()]);
        return options;
    }

    internal static DtlsClientOptions ClientOptions(ECDsa clientKey, ECDsa trustedServer)
        => new()
        {
            RawPublicKeyPair = clientKey,
            TrustedRawPublicKeys = DtlsOptions.RawPublicKeyTable([trustedServer.ExportSubjectPublicKeyInfo()]),
        };
}
