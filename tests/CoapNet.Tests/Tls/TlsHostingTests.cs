using System.Diagnostics;
using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using CoapNet.Client;
using CoapNet.Hosting;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Server;
using CoapNet.Tests.Hosting;
using CoapNet.Tests.Interop;
using CoapNet.Tls;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

namespace CoapNet.Tests.Tls;

/// <summary>
/// coaps+tcp (RFC 8323 section 9.1) in the Generic Host: "Coap:Tls" gives the hosted server its endpoints, certificate
/// and trust for clients' certificates, "Coap:Client:Tls" gives the hosted client its trust and certificate, from PEM
/// files (the test PKI's, written to a temporary directory) or the certificate store; a value that cannot be used stops
/// the start with its configuration path and without the key or the password.
/// </summary>
public sealed class TlsHostingTests : IDisposable
{
    private const string Password = "correct-horse-battery-staple";
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(60);
    private readonly PemFiles _pem = new();

    public TlsHostingTests()
    {
        File.WriteAllText(_pem["server-chain.pem"], TestPki.Instance.Server.ExportCertificatePem() + "\n" + TestPki.Instance.Ca.ExportCertificatePem() + "\n");
        PbeParameters encryption = new(PbeEncryptionAlgorithm.Aes256Cbc, HashAlgorithmName.SHA256, 10_000);
        File.WriteAllText(_pem["server-encrypted.key"], TestPki.Instance.ServerKey.ExportEncryptedPkcs8PrivateKeyPem(Password, encryption));
        File.WriteAllText(_pem["garbage.pem"], "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n");
        File.WriteAllText(_pem["empty.pem"], "no certificates here\n");
    }

    public void Dispose() => _pem.Dispose();

    [Fact]
    public async Task AHostBuiltFromConfigurationServesCoapsTcpToAClientConfiguredWithItsRootAndSeesTheClientsCertificate()
    {
        using IHost host = BuildHost(new()
        {
            ["Coap:Tls:Endpoints:0"] = "127.0.0.1:0",
            ["Coap:Tls:CertificateFile"] = _pem["server.pem"],
            ["Coap:Tls:CertificateKeyFile"] = _pem["server.key"],
            ["Coap:Tls:ClientCertificateMode"] = "Required",
            ["Coap:Tls:TrustedRootsFile"] = _pem["ca.pem"],
            ["Coap:Client:LocalEndPoint"] = "127.0.0.1:0",
            ["Coap:Client:Tls:TrustedRootsFile"] = _pem["ca.pem"],
            ["Coap:Client:Tls:CertificateFile"] = _pem["client.pem"],
            ["Coap:Client:Tls:CertificateKeyFile"] = _pem["client.key"],
        });
        await host.StartAsync();
        CoapServer server = host.Services.GetRequiredService<CoapServer>();

        CoapResponse response = await host.Services.GetRequiredService<CoapClient>().GetAsync(new Uri(CoapsTcp(server), "/whoami"));

        server.LocalUris.Select(u => u.Scheme).Should().Equal(["coaps+tcp"], "the configuration names one coaps+tcp endpoint and no other");
        response.GetPayloadString().Should().Be("cert:CN=device-7", "the server asked for the client's certificate and trusted it through its configured root");
        await host.StopAsync();
    }

    [Fact]
    public async Task AClientConfiguredWithAnotherRootOrTheSystemStoreIsRefusedAndReachesNoHandler()
    {
        int calls = 0;
        using IHost host = BuildHost(
            new()
            {
                ["Coap:Tls:Endpoints:0"] = "127.0.0.1:0",
                ["Coap:Tls:CertificateFile"] = _pem["server.pem"],
                ["Coap:Tls:CertificateKeyFile"] = _pem["server.key"],
            },
            () => Interlocked.Increment(ref calls));
        await host.StartAsync();
        Uri whoami = new(CoapsTcp(host.Services.GetRequiredService<CoapServer>()), "/whoami");
        using ServiceProvider otherRoot = ConfiguredClient(new() { ["Coap:Client:Tls:TrustedRootsFile"] = _pem["other-ca.pem"] });
        using ServiceProvider systemStore = ConfiguredClient([]);
        using ServiceProvider ourRoot = ConfiguredClient(new() { ["Coap:Client:Tls:TrustedRootsFile"] = _pem["ca.pem"] });

        Func<Task> byOtherRoot = () => otherRoot.GetRequiredService<CoapClient>().GetAsync(whoami);
        Func<Task> bySystemStore = () => systemStore.GetRequiredService<CoapClient>().GetAsync(whoami);

        (await byOtherRoot.Should().ThrowAsync<CoapConnectionException>()).Which.Message.Should().Contain("certificate");
        (await bySystemStore.Should().ThrowAsync<CoapConnectionException>("without trust roots the system's store decides, and it does not hold the test CA"))
            .Which.Message.Should().Contain("certificate");
        calls.Should().Be(0);
        (await ourRoot.GetRequiredService<CoapClient>().GetAsync(whoami)).GetPayloadString().Should().Be("anonymous", "the server asks for no certificate by default");
        calls.Should().Be(1);
        await host.StopAsync();
    }

    [SkippableFact]
    public async Task LibcoapGetsAResourceFromAHostConfiguredFromCoapTls()
    {
        string libcoap = LibCoap.ClientOpenSsl;
        using IHost host = BuildHost(new()
        {
            ["Coap:Tls:Endpoints:0"] = "127.0.0.1:0",
            ["Coap:Tls:CertificateFile"] = _pem["server-chain.pem"],
            ["Coap:Tls:CertificateKeyFile"] = _pem["server.key"],
        });
        await host.StartAsync();
        Process client = LibCoap.Start(libcoap, "-R", _pem["ca.pem"], "-B", "10", new Uri(CoapsTcp(host.Services.GetRequiredService<CoapServer>()), "/whoami").ToString());
        try
        {
            (await LibCoap.ReadOutputAsync(client, Bound)).Should().Contain("anonymous");
        }
        finally
        {
            LibCoap.Stop(client);
        }

        await host.StopAsync();
    }

    [Fact]
    public void TheEndpointsTheCertificateWithItsIntermediatesAndTheSettingsBindFromTheTlsSection()
    {
        CoapServerOptions options = BoundOptions.Server(new()
        {
            ["Coap:Tls:Endpoints:0"] = "[::]",
            ["Coap:Tls:Endpoints:1"] = "127.0.0.1:6684",
            ["Coap:Tls:CertificateFile"] = _pem["server-chain.pem"],
            ["Coap:Tls:CertificateKeyFile"] = _pem["server.key"],
            ["Coap:Tls:ClientCertificateMode"] = "Allowed",
            ["Coap:Tls:TrustedRootsFile"] = _pem["ca.pem"],
            ["Coap:Tls:HandshakeTimeout"] = "00:00:03",
            ["Coap:Tls:MaxPendingHandshakes"] = "16",
        });

        options.Tls.Endpoints.Should().Equal(new IPEndPoint(IPAddress.IPv6Any, 5684), new IPEndPoint(IPAddress.Loopback, 6684));
        options.Tls.Certificate!.Thumbprint.Should().Be(TestPki.Instance.Server.Thumbprint);
        options.Tls.Certificate.HasPrivateKey.Should().BeTrue();
        options.Tls.CertificateChain!.Select(c => c.Thumbprint).Should().Equal([TestPki.Instance.Ca.Thumbprint], "what follows the certificate in its file is sent with it");
        options.Tls.TrustedRoots!.Select(c => c.Thumbprint).Should().Equal([TestPki.Instance.Ca.Thumbprint]);
        options.Tls.ClientCertificateMode.Should().Be(TlsClientCertificateMode.Allowed);
        options.Tls.HandshakeTimeout.Should().Be(TimeSpan.FromSeconds(3));
        options.Tls.MaxPendingHandshakes.Should().Be(16);
    }

    [Fact]
    public void AnEncryptedKeyOpensWithThePasswordFromConfiguration()
    {
        CoapClientOptions options = BoundOptions.Client(new()
        {
            ["Coap:Client:Tls:CertificateFile"] = _pem["server.pem"],
            ["Coap:Client:Tls:CertificateKeyFile"] = _pem["server-encrypted.key"],
            ["Coap:Client:Tls:CertificateKeyPassword"] = Password,
        });

        options.Tls.Certificate!.Thumbprint.Should().Be(TestPki.Instance.Server.Thumbprint);
        options.Tls.Certificate.HasPrivateKey.Should().BeTrue();
        options.Tls.TrustedRoots.Should().BeNull("without trust roots in configuration the system's store decides");
    }

    [Fact]
    public void TheCertificateAndTheTrustRootsComeFromTheCertificateStore()
    {
        string rootsStore = "CoapNetTestRoots";
        using X509Certificate2 caWithoutKey = TestPki.WithoutKey(TestPki.Instance.Ca);
        using X509Store my = new(StoreName.My, StoreLocation.CurrentUser);
        using X509Store roots = new(rootsStore, StoreLocation.CurrentUser);
        my.Open(OpenFlags.ReadWrite);
        roots.Open(OpenFlags.ReadWrite);
        my.Add(TestPki.Instance.Server);
        roots.Add(caWithoutKey);
        try
        {
            CoapServerOptions options = BoundOptions.Server(new()
            {
                ["Coap:Tls:CertificateThumbprint"] = TestPki.Instance.Server.Thumbprint,
                ["Coap:Tls:TrustedRootsStoreName"] = rootsStore,
            });

            options.Tls.Certificate!.Thumbprint.Should().Be(TestPki.Instance.Server.Thumbprint);
            options.Tls.Certificate.HasPrivateKey.Should().BeTrue();
            options.Tls.TrustedRoots!.Select(c => c.Thumbprint).Should().Contain(
                TestPki.Instance.Ca.Thumbprint, "every certificate of the store is a root (the suite's other target framework may hold its own CA there meanwhile)");
        }
        finally
        {
            my.Remove(TestPki.Instance.Server);
            roots.Remove(caWithoutKey);
        }
    }

    [Theory]
    [InlineData("Coap:Tls:CertificateKeyFile", "Coap:Tls:CertificateKeyFile=/nonexistent/server.key")]
    [InlineData("Coap:Tls:CertificateFile", "Coap:Tls:CertificateFile={garbage.pem}")]
    [InlineData("Coap:Tls:CertificateFile", "Coap:Tls:CertificateFile={empty.pem}")]
    [InlineData("Coap:Tls:CertificateKeyFile names no key file", "Coap:Tls:CertificateKeyFile=")]
    [InlineData("Coap:Tls:CertificateKeyFile", "Coap:Tls:CertificateKeyFile={client.key}")]
    [InlineData("it is encrypted: set Coap:Tls:CertificateKeyPassword", "Coap:Tls:CertificateKeyFile={server-encrypted.key}")]
    [InlineData("Coap:Tls:CertificateKeyPassword", "Coap:Tls:CertificateKeyFile={server-encrypted.key}|Coap:Tls:CertificateKeyPassword=not-the-password")]
    [InlineData("Coap:Tls:CertificateThumbprint", "Coap:Tls:CertificateFile=|Coap:Tls:CertificateThumbprint=00112233445566778899AABBCCDDEEFF00112233")]
    [InlineData("Coap:Tls:CertificateThumbprint are both set", "Coap:Tls:CertificateThumbprint=00112233445566778899AABBCCDDEEFF00112233")]
    [InlineData("Coap:Tls:ClientCertificateMode", "Coap:Tls:ClientCertificateMode=Sometimes")]
    [InlineData("Coap:Tls:ClientCertificateMode", "Coap:Tls:ClientCertificateMode=7")]
    [InlineData("Coap:Tls:TrustedRootsFile", "Coap:Tls:TrustedRootsFile={empty.pem}")]
    [InlineData("Coap:Tls:TrustedRootsStoreName", "Coap:Tls:TrustedRootsStoreName=CoapNetNoSuchStore")]
    [InlineData("Coap:Tls:Endpoints:0", "Coap:Tls:Endpoints:0=device.example:5684")]
    [InlineData("Coap:Tls:Certificate cannot be bound", "Coap:Tls:Certificate:KeyFile={server.key}")]
    [InlineData("coaps+tcp endpoints go in Coap:Tls:Endpoints", "Coap:Endpoints:0=coaps+tcp://127.0.0.1:5684")]
    public async Task AValueThatCannotBeUsedStopsTheStartWithItsPathAndWithoutTheKeyOrThePassword(string said, string changes)
    {
        // A working configuration, then the case's changes to it ("KEY=" removes a key).
        Dictionary<string, string?> settings = new()
        {
            ["Coap:Tls:Endpoints:0"] = "127.0.0.1:0",
            ["Coap:Tls:CertificateFile"] = _pem["server.pem"],
            ["Coap:Tls:CertificateKeyFile"] = _pem["server.key"],
            ["Coap:Tls:CertificateKeyPassword"] = null,
        };
        foreach (string change in changes.Split('|'))
        {
            string[] pair = change.Split('=', 2);
            settings[pair[0]] = pair[1].Length == 0 ? null : Expand(pair[1]);
        }

        using IHost host = BuildHost(settings);

        Func<Task> start = () => host.StartAsync();

        string message = (await start.Should().ThrowAsync<Exception>()).Which.Message;
        message.Should().Contain(said);
        message.Should().NotContain("PRIVATE KEY").And.NotContain(KeyMaterial(), "no part of a key is quoted");
        if (settings["Coap:Tls:CertificateKeyPassword"] is { } password)
        {
            message.Should().NotContain(password);
        }
    }

    [Theory]
    [InlineData("Coap:Client:Tls:CertificateFile", "Coap:Client:Tls:CertificateFile", "{server.pem}")]
    [InlineData("Coap:Client:Tls:TrustedRootsFile", "Coap:Client:Tls:TrustedRootsFile", "/nonexistent/ca.pem")]
    [InlineData("Coap:Client:Tls:TrustedRootsStoreLocation", "Coap:Client:Tls:TrustedRootsStoreLocation", "Everywhere")]
    public void TheClientsSectionIsRefusedWithItsPathToo(string path, string key, string value)
    {
        Dictionary<string, string?> settings = new() { [key] = Expand(value) };
        if (key.EndsWith("Location", StringComparison.Ordinal))
        {
            settings["Coap:Client:Tls:TrustedRootsStoreName"] = "Root";
        }

        Action bind = () => BoundOptions.Client(settings);

        bind.Should().Throw<Exception>().Which.Message.Should().Contain(path).And.NotContain("PRIVATE KEY");
    }

    private static Uri CoapsTcp(CoapServer server) => server.LocalUris.Single(u => u.Scheme == "coaps+tcp");

    private static IHost BuildHost(Dictionary<string, string?> settings, Action? onRequest = null)
    {
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Configuration.AddInMemoryCollection(settings);
        builder.Services.AddCoapServer().Map((server, _) => server.MapGet("/whoami", request =>
        {
            onRequest?.Invoke();
            return CoapResponse.Content(request.Peer.Identity?.ToString() ?? "anonymous");
        }));
        builder.Services.AddCoapClient();
        return builder.Build();
    }

    // A client registered as a host registers it, with a configuration of its own.
    private static ServiceProvider ConfiguredClient(Dictionary<string, string?> settings)
    {
        settings["Coap:Client:LocalEndPoint"] = "127.0.0.1:0";
        return BoundOptions.Services(settings, services => services.AddCoapClient());
    }

    // "{name}" is the test's PEM file of that name.
    private string Expand(string value) => value.StartsWith('{') ? _pem[value.Trim('{', '}')] : value;

    // A line of the server's private key as its PEM file holds it.
    private string KeyMaterial() => File.ReadAllLines(_pem["server.key"])[1];
}
