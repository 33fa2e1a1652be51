using System.Diagnostics;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using CoapNet.Channels;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Messages;
using CoapNet.Samples.Server;
using CoapNet.Tests.Interop;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// coaps with libcoap 4.3 over real loopback sockets, in both directions, with the credentials beyond PSK: raw public
/// keys against the GnuTLS build (<c>-M key.pem</c>, RFC 7250) and X.509 certificates against the OpenSSL build
/// (<c>-c cert.pem -j key.pem -C ca.pem</c>), all made at run time.
/// </summary>
public sealed class DtlsLibCoapCredentialTests
{
    [SkippableFact]
    public async Task LibcoapGetsOurHelloWithARawPublicKeyAndWeSeeItsKey()
    {
        string client = LibCoap.ClientGnuTls;
        using DtlsKeys.PemFolder pem = new();
        using ECDsa serverKey = DtlsKeys.NewKey();
        using ECDsa libcoapKey = DtlsKeys.NewKey();

        (string output, List<CoapPeerIdentity> seen) = await WhoAsync(DtlsRawPublicKeyTests.ServerOptions(serverKey, libcoapKey), client, "-M", pem.Key(libcoapKey, "client.pem"));

        seen.Should().Equal(CoapPeerIdentity.FromRawPublicKey(libcoapKey.ExportSubjectPublicKeyInfo()));
        output.Should().Contain("hello " + seen[0]);
    }

    [SkippableFact]
    public async Task LibcoapWithAnUntrustedRawPublicKeyGetsNothing()
    {
        string client = LibCoap.ClientGnuTls;
        using DtlsKeys.PemFolder pem = new();
        using ECDsa serverKey = DtlsKeys.NewKey();
        using ECDsa trusted = DtlsKeys.NewKey();
        using ECDsa stranger = DtlsKeys.NewKey();

        await LibcoapGetsNothingAsync(DtlsRawPublicKeyTests.ServerOptions(serverKey, trusted), client, "-M", pem.Key(stranger, "client.pem"));
    }

    [SkippableFact]
    public async Task OurClientPutsAndGetsOnLibcoapsGnuTlsServerWithARawPublicKey()
    {
        string executable = LibCoap.ServerGnuTls;
        using DtlsKeys.PemFolder pem = new();
        using ECDsa libcoapKey = DtlsKeys.NewKey();
        using ECDsa ourKey = DtlsKeys.NewKey();

        await OurClientPutsAndGetsAsync(DtlsRawPublicKeyTests.ClientOptions(ourKey, libcoapKey), executable, "-M", pem.Key(libcoapKey, "server.pem"));
    }

    [SkippableFact]
    public async Task OurClientRefusesLibcoapsRawPublicKeyWhenItIsNotTheOneItTrusts()
    {
        string executable = LibCoap.ServerGnuTls;
        using DtlsKeys.PemFolder pem = new();
        using ECDsa libcoapKey = DtlsKeys.NewKey();
        using ECDsa expected = DtlsKeys.NewKey();
        using ECDsa ourKey = DtlsKeys.NewKey();

        (await OurClientRefusedAsync(DtlsRawPublicKeyTests.ClientOptions(ourKey, expected), executable, "-M", pem.Key(libcoapKey, "server.pem"))).Message.Should().Contain("bad_certificate");
    }

    [SkippableFact]
    public async Task LibcoapGetsWithACertificateAndWeSeeItsSubject()
    {
        string client = LibCoap.ClientOpenSsl;
        using DtlsKeys.PemFolder pem = new();
        using X509Certificate2 ca = DtlsKeys.NewAuthority("CoapNet Test CA");
        using X509Certificate2 serverCertificate = DtlsKeys.NewLeaf(ca, "server");
        using X509Certificate2 libcoapCertificate = DtlsKeys.NewLeaf(ca, "libcoap-client");

        (string output, List<CoapPeerIdentity> seen) = await WhoAsync(DtlsCertificateTests.ServerOptions(serverCertificate, ca), client, Credentials(pem, libcoapCertificate, ca));

        output.Should().Contain("hello cert:CN=libcoap-client");
        seen.Should().ContainSingle().Which.Kind.Should().Be(CoapPeerIdentityKind.Certificate);
    }

    [SkippableFact]
    public async Task LibcoapWithACertificateFromAnotherCaGetsNothing()
    {
        string client = LibCoap.ClientOpenSsl;
        using DtlsKeys.PemFolder pem = new();
        using X509Certificate2 ca = DtlsKeys.NewAuthority("CoapNet Test CA");
        using X509Certificate2 otherCa = DtlsKeys.NewAuthority("Someone Else");
        using X509Certificate2 serverCertificate = DtlsKeys.NewLeaf(ca, "server");
        using X509Certificate2 intruder = DtlsKeys.NewLeaf(otherCa, "intruder");

        await LibcoapGetsNothingAsync(DtlsCertificateTests.ServerOptions(serverCertificate, ca), client, Credentials(pem, intruder, ca));
    }

    [SkippableFact]
    public async Task OurClientWithACertificatePutsAndGetsOnLibcoapsOpenSslServer()
    {
        string executable = LibCoap.ServerOpenSsl;
        using DtlsKeys.PemFolder pem = new();
        using X509Certificate2 ca = DtlsKeys.NewAuthority("CoapNet Test CA");
        using X509Certificate2 libcoapCertificate = DtlsKeys.NewLeaf(ca, "libcoap-server");
        using X509Certificate2 ourCertificate = DtlsKeys.NewLeaf(ca, "coapnet-client");

        await OurClientPutsAndGetsAsync(DtlsCertificateTests.ClientOptions(ourCertificate, ca), executable, Credentials(pem, libcoapCertificate, ca));
    }

    [SkippableFact]
    public async Task OurClientRefusesLibcoapsCertificateFromAnUntrustedCa()
    {
        string executable = LibCoap.ServerOpenSsl;
        using DtlsKeys.PemFolder pem = new();
        using X509Certificate2 ca = DtlsKeys.NewAuthority("CoapNet Test CA");
        using X509Certificate2 otherCa = DtlsKeys.NewAuthority("Someone Else");
        using X509Certificate2 libcoapCertificate = DtlsKeys.NewLeaf(otherCa, "libcoap-server");
        using X509Certificate2 ourCertificate = DtlsKeys.NewLeaf(ca, "coapnet-client");

        (await OurClientRefusedAsync(DtlsCertificateTests.ClientOptions(ourCertificate, ca), executable, Credentials(pem, libcoapCertificate, otherCa))).Message.Should().Contain("unknown_ca");
    }

    /// <summary>libcoap's <c>-c -j -C</c>: a certificate, its key and the CA it trusts, as PEM files.</summary>
    private static string[] Credentials(DtlsKeys.PemFolder pem, X509Certificate2 certificate, X509Certificate2 ca)
        => ["-c", pem.Certificate(certificate, "cert.pem"), "-j", pem.CertificateKey(certificate, "key.pem"), "-C", pem.Certificate(ca, "ca.pem")];

    /// <summary>Runs a libcoap client with <paramref name="arguments"/> against our server's /who: its output, and the identities our handler saw.</summary>
    private static async Task<(string Output, List<CoapPeerIdentity> Seen)> WhoAsync(DtlsServerOptions options, string client, params string[] arguments)
    {
        List<CoapPeerIdentity> seen = [];
        await using LoopbackServer server = DtlsLoopback.StartServer(s => DtlsLoopback.MapWho(s, seen), out _, options);
        string output = await RunAsync(client, [.. arguments, "-B", "5", DtlsLoopback.Uri(server.EndPoint, "/who").ToString()]);
        return (output, seen);
    }

    /// <summary>A libcoap client the server does not trust: its handshake fails, nothing is answered and no handler runs.</summary>
    private static async Task LibcoapGetsNothingAsync(DtlsServerOptions options, string client, params string[] arguments)
    {
        (string output, List<CoapPeerIdentity> seen) = await WhoAsync(options, client, arguments);

        output.Should().NotContain("hello");
        seen.Should().BeEmpty();
    }

    /// <summary>Our client PUTs 5,000 bytes to a new resource of a libcoap server started with <paramref name="arguments"/> (block-wise), and GETs them back.</summary>
    private static async Task OurClientPutsAndGetsAsync(DtlsClientOptions options, string executable, params string[] arguments)
    {
        using LibCoapServer libcoap = LibCoapServer.Start(executable, arguments);
        await using CoapClient client = DtlsLoopback.ClientWith(options);
        Uri uri = new($"coaps://127.0.0.1:{libcoap.Port + 1}/dynamic-{Guid.NewGuid():N}");
        byte[] body = new byte[5000];
        new Random(4).NextBytes(body);

        (await client.PutAsync(uri, body, CoapContentFormat.OctetStream)).Code.Should().Be(CoapCode.Created);
        (await client.GetAsync(uri)).Payload.ToArray().Should().Equal(body);
    }

    /// <summary>Our client's GET to a libcoap server started with <paramref name="arguments"/>, which must fail its handshake.</summary>
    private static async Task<System.Security.Authentication.AuthenticationException> OurClientRefusedAsync(DtlsClientOptions options, string executable, params string[] arguments)
    {
        using LibCoapServer libcoap = LibCoapServer.Start(executable, arguments);
        await using CoapClient client = DtlsLoopback.ClientWith(options);

        Func<Task> get = () => client.GetAsync(new Uri($"coaps://127.0.0.1:{libcoap.Port + 1}/"));

        return (await get.Should().ThrowAsync<System.Security.Authentication.AuthenticationException>()).Which;
    }

    private static async Task<string> RunAsync(string executable, params string[] arguments)
    {
        Process client = LibCoap.Start(executable, arguments);
        try
        {
            return await LibCoap.ReadOutputAsync(client, Infrastructure.Wait.DefaultBound);
        }
        finally
        {
            LibCoap.Stop(client);
        }
    }
}
