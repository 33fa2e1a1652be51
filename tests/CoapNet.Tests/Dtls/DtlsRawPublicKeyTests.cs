using System.Security.Authentication;
using System.Security.Cryptography;
using CoapNet.Channels;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Messages;
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
        CoapPeerIdentity? seen = null;
        await using LoopbackServer server = DtlsLoopback.StartServer(
            s => s.MapGet("/who", request =>
            {
                seen = request.Peer.Identity;
                return CoapResponse.Content("hello " + request.Peer.Identity);
            }),
            out _,
            ServerOptions(serverKey, clientKey));
        await using CoapClient client = DtlsLoopback.ClientWith(ClientOptions(clientKey, serverKey));

        CoapResponse response = await client.GetAsync(DtlsLoopback.Uri(server.EndPoint, "/who"));

        response.Code.Should().Be(CoapCode.Content);
        seen.Should().Be(CoapPeerIdentity.FromRawPublicKey(clientKey.ExportSubjectPublicKeyInfo()));
        seen!.Kind.Should().Be(CoapPeerIdentityKind.RawPublicKey);
        response.GetPayloadString().Should().Be("hello " + seen);
    }

    [Fact]
    public async Task AClientKeyTheServerDoesNotTrustIsRefusedAndReachesNoHandler()
    {
        using ECDsa serverKey = DtlsKeys.NewKey();
        using ECDsa trusted = DtlsKeys.NewKey();
        using ECDsa stranger = DtlsKeys.NewKey();
        int calls = 0;
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => { Interlocked.Increment(ref calls); return CoapResponse.Content("no"); }), out _, ServerOptions(serverKey, trusted));
        await using CoapClient client = DtlsLoopback.ClientWith(ClientOptions(stranger, serverKey));

        Func<Task> get = () => client.GetAsync(DtlsLoopback.Uri(server.EndPoint, "/x"));

        (await get.Should().ThrowAsync<AuthenticationException>()).Which.Message.Should().Contain("bad_certificate");
        calls.Should().Be(0);
    }

    [Fact]
    public async Task AServerKeyTheClientDoesNotTrustIsRefused()
    {
        using ECDsa serverKey = DtlsKeys.NewKey();
        using ECDsa clientKey = DtlsKeys.NewKey();
        using ECDsa expected = DtlsKeys.NewKey();
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => CoapResponse.Content("no")), out _, ServerOptions(serverKey, clientKey));
        await using CoapClient client = DtlsLoopback.ClientWith(ClientOptions(clientKey, expected));

        Func<Task> get = () => client.GetAsync(DtlsLoopback.Uri(server.EndPoint, "/x"));

        (await get.Should().ThrowAsync<AuthenticationException>()).Which.Message.Should().Contain("bad_certificate");
    }

    [Fact]
    public async Task ATrustCallbackThatThrowsRefusesTheKey()
    {
        using ECDsa serverKey = DtlsKeys.NewKey();
        using ECDsa clientKey = DtlsKeys.NewKey();
        DtlsServerOptions options = ServerOptions(serverKey, clientKey);
        options.TrustedRawPublicKeys = _ => throw new InvalidOperationException("the key store is down");
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => CoapResponse.Content("no")), out _, options);
        await using CoapClient client = DtlsLoopback.ClientWith(ClientOptions(clientKey, serverKey));

        Func<Task> get = () => client.GetAsync(DtlsLoopback.Uri(server.EndPoint, "/x"));

        await get.Should().ThrowAsync<AuthenticationException>();
    }

    [Fact]
    public void AKeyOnAnotherCurveIsRefusedWithTheOptionsName()
    {
        using ECDsa p384 = ECDsa.Create(ECCurve.NamedCurves.nistP384);

        Action create = () => new DtlsServerTransport(new DtlsServerOptions { Port = 0, RawPublicKeyPair = p384, TrustedRawPublicKeys = _ => true }).Dispose();

        create.Should().Throw<ArgumentException>().Which.ParamName.Should().Be(nameof(DtlsOptions.RawPublicKeyPair));
    }

    [Fact]
    public void AServerWithAKeyButNoWayToCheckClientsIsRefused()
    {
        using ECDsa key = DtlsKeys.NewKey();

        Action create = () => new DtlsServerTransport(new DtlsServerOptions { Port = 0, RawPublicKeyPair = key }).Dispose();

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
