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
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(30);

    [SkippableFact]
    public async Task LibcoapGetsOurHelloWithARawPublicKeyAndWeSeeItsKey()
    {
        string client = LibCoap.ClientGnuTls;
        using DtlsKeys.PemFolder pem = new();
        using ECDsa serverKey = DtlsKeys.NewKey();
        using ECDsa libcoapKey = DtlsKeys.NewKey();
        CoapPeerIdentity? seen = null;
        await using LoopbackServer server = DtlsLoopback.StartServer(
            s => s.MapGet("/hello", request =>
            {
                seen = request.Peer.Identity;
                return CoapResponse.Content("Hello, CoAP!");
            }),
            out _,
            DtlsRawPublicKeyTests.ServerOptions(serverKey, libcoapKey));

        string output = await RunAsync(client, "-M", pem.Key(libcoapKey, "client.pem"), "-B", "10", DtlsLoopback.Uri(server.EndPoint, "/hello").ToString());

        output.Should().Contain("Hello, CoAP!");
        seen.Should().Be(CoapPeerIdentity.FromRawPublicKey(libcoapKey.ExportSubjectPublicKeyInfo()));
    }

    [SkippableFact]
    public async Task LibcoapWithAnUntrustedRawPublicKeyGetsNothing()
    {
        string client = LibCoap.ClientGnuTls;
        using DtlsKeys.PemFolder pem = new();
        using ECDsa serverKey = DtlsKeys.NewKey();
        using ECDsa trusted = DtlsKeys.NewKey();
        using ECDsa stranger = DtlsKeys.NewKey();
        int calls = 0;
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/hello", _ => { Interlocked.Increment(ref calls); return CoapResponse.Content("Hello, CoAP!"); }), out _, DtlsRawPublicKeyTests.ServerOptions(serverKey, trusted));

        string output = await RunAsync(client, "-M", pem.Key(stranger, "client.pem"), "-B", "3", DtlsLoopback.Uri(server.EndPoint, "/hello").ToString());

        output.Should().NotContain("Hello");
        calls.Should().Be(0);
    }

    [SkippableFact]
    public async Task OurClientGetsFromLibcoapsGnuTlsServerWithARawPublicKey()
    {
        string executable = LibCoap.ServerGnuTls;
        using DtlsKeys.PemFolder pem = new();
        using ECDsa libcoapKey = DtlsKeys.NewKey();
        using ECDsa ourKey = DtlsKeys.NewKey();
        using LibCoapServer libcoap = LibCoapServer.Start(executable, "-M", pem.Key(libcoapKey, "server.pem"));
        await using CoapClient client = DtlsLoopback.ClientWith(DtlsRawPublicKeyTests.ClientOptions(ourKey, libcoapKey));
        Uri uri = new($"coaps://127.0.0.1:{libcoap.Port + 1}/dynamic-{Guid.NewGuid():N}");

        (await client.PutAsync(uri, "over a raw public key"u8.ToArray(), CoapContentFormat.TextPlain)).Code.Should().Be(CoapCode.Created);
        (await client.GetAsync(uri)).GetPayloadString().Should().Be("over a raw public key");
    }

    [SkippableFact]
    public async Task OurClientRefusesLibcoapsRawPublicKeyWhenItIsNotTheOneItTrusts()
    {
        string executable = LibCoap.ServerGnuTls;
        using DtlsKeys.PemFolder pem = new();
        using ECDsa libcoapKey = DtlsKeys.NewKey();
        using ECDsa expected = DtlsKeys.NewKey();
        using ECDsa ourKey = DtlsKeys.NewKey();
        using LibCoapServer libcoap = LibCoapServer.Start(executable, "-M", pem.Key(libcoapKey, "server.pem"));
        await using CoapClient client = DtlsLoopback.ClientWith(DtlsRawPublicKeyTests.ClientOptions(ourKey, expected));

        Func<Task> get = () => client.GetAsync(new Uri($"coaps://127.0.0.1:{libcoap.Port + 1}/"));

        await get.Should().ThrowAsync<System.Security.Authentication.AuthenticationException>();
    }

    [SkippableFact]
    public async Task LibcoapGetsAndPutsWithACertificateAndWeSeeItsSubject()
    {
        string client = LibCoap.ClientOpenSsl;
        using DtlsKeys.PemFolder pem = new();
        using X509Certificate2 ca = DtlsKeys.NewAuthority("CoapNet Test CA");
        using X509Certificate2 serverCertificate = DtlsKeys.NewLeaf(ca, "server");
        using X509Certificate2 libcoapCertificate = DtlsKeys.NewLeaf(ca, "libcoap-client");
        List<string> seen = [];
        await using LoopbackServer server = DtlsLoopback.StartServer(
            s =>
            {
                SampleResources.Map(s);
                s.MapGet("/who", request =>
                {
                    lock (seen)
                    {
                        seen.Add(request.Peer.Identity!.ToString());
                    }

                    return CoapResponse.Content("Hello, CoAP!");
                });
            },
            out _,
            DtlsCertificateTests.ServerOptions(serverCertificate, ca));
        string[] credentials = ["-c", pem.Certificate(libcoapCertificate, "client.pem"), "-j", pem.CertificateKey(libcoapCertificate, "client-key.pem"), "-C", pem.Certificate(ca, "ca.pem")];
        byte[] body = new byte[3000];
        new Random(11).NextBytes(body);
        string input = Path.GetTempFileName();
        try
        {
            await File.WriteAllBytesAsync(input, body);

            string hello = await RunAsync(client, [.. credentials, "-B", "10", DtlsLoopback.Uri(server.EndPoint, "/who").ToString()]);
            string hash = await RunAsync(client, [.. credentials, "-B", "10", "-m", "put", "-f", input, DtlsLoopback.Uri(server.EndPoint, "/upload").ToString()]);

            hello.Should().Contain("Hello, CoAP!");
            seen.Should().Equal("cert:CN=libcoap-client");
            hash.Trim().Should().EndWith(Convert.ToHexString(SHA256.HashData(body)).ToLowerInvariant());
        }
        finally
        {
            File.Delete(input);
        }
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
        int calls = 0;
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/hello", _ => { Interlocked.Increment(ref calls); return CoapResponse.Content("Hello, CoAP!"); }), out _, DtlsCertificateTests.ServerOptions(serverCertificate, ca));

        string output = await RunAsync(client, "-c", pem.Certificate(intruder, "client.pem"), "-j", pem.CertificateKey(intruder, "client-key.pem"), "-C", pem.Certificate(ca, "ca.pem"), "-B", "3", DtlsLoopback.Uri(server.EndPoint, "/hello").ToString());

        output.Should().NotContain("Hello");
        calls.Should().Be(0);
    }

    [SkippableFact]
    public async Task OurClientWithACertificateGetsFromLibcoapsOpenSslServer()
    {
        string executable = LibCoap.ServerOpenSsl;
        using DtlsKeys.PemFolder pem = new();
        using X509Certificate2 ca = DtlsKeys.NewAuthority("CoapNet Test CA");
        using X509Certificate2 libcoapCertificate = DtlsKeys.NewLeaf(ca, "libcoap-server");
        using X509Certificate2 ourCertificate = DtlsKeys.NewLeaf(ca, "coapnet-client");
        using LibCoapServer libcoap = LibCoapServer.Start(executable, "-c", pem.Certificate(libcoapCertificate, "server.pem"), "-j", pem.CertificateKey(libcoapCertificate, "server-key.pem"), "-C", pem.Certificate(ca, "ca.pem"));
        await using CoapClient client = DtlsLoopback.ClientWith(DtlsCertificateTests.ClientOptions(ourCertificate, ca));
        Uri uri = new($"coaps://127.0.0.1:{libcoap.Port + 1}/dynamic-{Guid.NewGuid():N}");
        byte[] body = new byte[5000];
        new Random(4).NextBytes(body);

        (await client.PutAsync(uri, body, CoapContentFormat.OctetStream)).Code.Should().Be(CoapCode.Created);
        (await client.GetAsync(uri)).Payload.ToArray().Should().Equal(body);
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
        using LibCoapServer libcoap = LibCoapServer.Start(executable, "-c", pem.Certificate(libcoapCertificate, "server.pem"), "-j", pem.CertificateKey(libcoapCertificate, "server-key.pem"), "-C", pem.Certificate(otherCa, "ca.pem"));
        await using CoapClient client = DtlsLoopback.ClientWith(DtlsCertificateTests.ClientOptions(ourCertificate, ca));

        Func<Task> get = () => client.GetAsync(new Uri($"coaps://127.0.0.1:{libcoap.Port + 1}/"));

        (await get.Should().ThrowAsync<System.Security.Authentication.AuthenticationException>()).Which.Message.Should().Contain("unknown_ca");
    }

    private static async Task<string> RunAsync(string executable, params string[] arguments)
    {
        Process client = LibCoap.Start(executable, arguments);
        try
        {
            return await LibCoap.ReadOutputAsync(client, Bound);
        }
        finally
        {
            LibCoap.Stop(client);
        }
    }
}
