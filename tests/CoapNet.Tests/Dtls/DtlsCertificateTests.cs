using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using CoapNet.Channels;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Messages;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// X.509 certificates (RFC 7252 section 9.1.3.3) between our client and our server over loopback, with a CA and leaf
/// certificates made at run time: chains checked against the configured roots, and the custom validator's last word.
/// </summary>
public sealed class DtlsCertificateTests
{
    [Fact]
    public async Task ClientAndServerWithCertificatesFromTheTrustedCaConnectAndTheHandlerReadsTheClientsCertificate()
    {
        using X509Certificate2 ca = DtlsKeys.NewAuthority("CoapNet Test CA");
        using X509Certificate2 serverCertificate = DtlsKeys.NewLeaf(ca, "server");
        using X509Certificate2 clientCertificate = DtlsKeys.NewLeaf(ca, "device-7");
        List<CoapPeerIdentity> seen = [];
        await using LoopbackServer server = DtlsLoopback.StartServer(s => DtlsLoopback.MapWho(s, seen), out _, ServerOptions(serverCertificate, ca));
        await using CoapClient client = DtlsLoopback.ClientWith(ClientOptions(clientCertificate, ca));

        CoapResponse response = await client.GetAsync(DtlsLoopback.Uri(server.EndPoint, "/who"));

        response.GetPayloadString().Should().Be("hello cert:CN=device-7");
        seen.Should().ContainSingle().Which.Kind.Should().Be(CoapPeerIdentityKind.Certificate);
        seen[0].Certificate!.Thumbprint.Should().Be(clientCertificate.Thumbprint);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task ACertificateFromAnotherCaIsRefusedOnEitherSide(bool clientFromOtherCa)
    {
        using X509Certificate2 ca = DtlsKeys.NewAuthority("CoapNet Test CA");
        using X509Certificate2 otherCa = DtlsKeys.NewAuthority("Someone Else");
        using X509Certificate2 serverCertificate = DtlsKeys.NewLeaf(clientFromOtherCa ? ca : otherCa, "server");
        using X509Certificate2 clientCertificate = DtlsKeys.NewLeaf(clientFromOtherCa ? otherCa : ca, "device");

        (await DtlsLoopback.RefusedAsync(ServerOptions(serverCertificate, ca), ClientOptions(clientCertificate, ca))).Message.Should().Contain("unknown_ca");
    }

    [Fact]
    public async Task TheValidatorHasTheLastWordBothWays()
    {
        using X509Certificate2 ca = DtlsKeys.NewAuthority("CoapNet Test CA");
        using X509Certificate2 serverCertificate = DtlsKeys.NewLeaf(ca, "server");
        using X509Certificate2 clientCertificate = DtlsKeys.NewLeaf(ca, "device-7");
        DtlsServerOptions options = ServerOptions(serverCertificate, ca);
        List<(string Subject, SslPolicyErrors Errors)> asked = [];
        options.CertificateValidator = (certificate, chain, errors) =>
        {
            lock (asked)
            {
                asked.Add((certificate.Subject, errors));
            }

            return certificate.Subject == "CN=device-7";
        };
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => CoapResponse.Content("in")), out _, options);

        // A client that trusts no root but accepts this one server by its thumbprint, despite the chain error.
        DtlsClientOptions pinned = ClientOptions(clientCertificate, ca);
        pinned.TrustedRoots = null;
        pinned.CertificateValidator = (certificate, _, errors) => certificate.Thumbprint == serverCertificate.Thumbprint;
        await using CoapClient client = DtlsLoopback.ClientWith(pinned);
        using X509Certificate2 otherLeaf = DtlsKeys.NewLeaf(ca, "device-8");
        await using CoapClient refused = DtlsLoopback.ClientWith(ClientOptions(otherLeaf, ca));

        (await client.GetAsync(DtlsLoopback.Uri(server.EndPoint, "/x"))).GetPayloadString().Should().Be("in");
        Func<Task> get = () => refused.GetAsync(DtlsLoopback.Uri(server.EndPoint, "/x"));
        (await get.Should().ThrowAsync<AuthenticationException>()).Which.Message.Should().Contain("bad_certificate");
        asked.Should().Equal(("CN=device-7", SslPolicyErrors.None), ("CN=device-8", SslPolicyErrors.None));
    }

    [Fact]
    public async Task AnExpiredClientCertificateIsRefusedOnTheServersClock()
    {
        using X509Certificate2 ca = DtlsKeys.NewAuthority("CoapNet Test CA");
        using X509Certificate2 serverCertificate = DtlsKeys.NewLeaf(ca, "server");
        using X509Certificate2 clientCertificate = DtlsKeys.NewLeaf(ca, "device-7", notAfter: DateTimeOffset.UtcNow.AddDays(30));
        DtlsServerOptions options = ServerOptions(serverCertificate, ca);
        options.TimeProvider = new CoapNet.Simulation.ManualTimeProvider(DateTimeOffset.UtcNow.AddDays(60));

        await DtlsLoopback.RefusedAsync(options, ClientOptions(clientCertificate, ca));
    }

    [Fact]
    public void ACertificateWithoutItsPrivateKeyIsRefusedWithTheOptionsName()
    {
        using X509Certificate2 ca = DtlsKeys.NewAuthority("CoapNet Test CA");
        using X509Certificate2 leaf = DtlsKeys.NewLeaf(ca, "server");
        using X509Certificate2 publicOnly = X509Certificate2.CreateFromPem(leaf.ExportCertificatePem());

        Action create = () => new CoapNet.Server.CoapServerOptions().Listen("coaps://127.0.0.1:0", endpoint => endpoint.UseDtls(ServerOptions(publicOnly, ca)));

        create.Should().Throw<ArgumentException>().Which.ParamName.Should().Be(nameof(DtlsOptions.Certificate));
    }

    internal static DtlsServerOptions ServerOptions(X509Certificate2 certificate, X509Certificate2 root)
    {
        DtlsServerOptions options = DtlsLoopback.BareServerOptions();
        options.Certificate = certificate;
        options.TrustedRoots = [root];
        return options;
    }

    internal static DtlsClientOptions ClientOptions(X509Certificate2 certificate, X509Certificate2 root)
        => new() { Certificate = certificate, TrustedRoots = [root] };
}
