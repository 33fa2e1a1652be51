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
/// coaps+tcp (RFC 8323 section 9.1) in the Generic Host: a coaps+tcp endpoint's "Tls" section gives the hosted server its
/// certificate and trust for clients' certificates, "Coap:Client:Tls" gives the hosted client its trust and certificate, from PEM
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
            ["Coap:Endpoints:tls:Url"] = "coaps+tcp://127.0.0.1:0",
            ["Coap:Endpoints:tls:Tls:CertificateFile"] = _pem["server.pem"],
            ["Coap:Endpoints:tls:Tls:CertificateKeyFile"] = _pem["server.key"],
            ["Coap:Endpoints:tls:Tls:ClientCertificateMode"] = "Required",
            ["Coap:Endpoints:tls:Tls:TrustedRootsFile"] = _pem["ca.pem"],
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
                ["Coap:Endpoints:tls:Url"] = "coaps+tcp://127.0.0.1:0",
                ["Coap:Endpoints:tls:Tls:CertificateFile"] = _pem["server.pem"],
                ["Coap:Endpoints:tls:Tls:CertificateKeyFile"] = _pem["server.key"],
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
    public async Task LibcoapGetsAResourceFromAHostConfiguredFromAnEndpointsTlsSection()
    {
        string libcoap = LibCoap.ClientOpenSsl;
        using IHost host = BuildHost(new()
        {
            ["Coap:Endpoints:tls:Url"] = "coaps+tcp://127.0.0.1:0",
            ["Coap:Endpoints:tls:Tls:CertificateFile"] = _pem["server-chain.pem"],
            ["Coap:Endpoints:tls:Tls:CertificateKeyFile"] = _pem["server.key"],
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
    public void TheCertificateWithItsIntermediatesAndTheSettingsBindFromAnEndpointsTlsSection()
    {
        TlsServerOptions options = TlsConfiguration.ReadServer(BoundOptions.Configuration(new()
        {
            ["Coap:Endpoints:tls:Tls:CertificateFile"] = _pem["server-chain.pem"],
            ["Coap:Endpoints:tls:Tls:CertificateKeyFile"] = _pem["server.key"],
            ["Coap:Endpoints:tls:Tls:ClientCertificateMode"] = "Allowed",
            ["Coap:Endpoints:tls:Tls:TrustedRootsFile"] = _pem["ca.pem"],
            ["Coap:Endpoints:tls:Tls:HandshakeTimeout"] = "00:00:03",
            ["Coap:Endpoints:tls:Tls:MaxPendingHandshakes"] = "16",
        }).GetSection("Coap:Endpoints:tls:Tls"));

        options.Certificate!.Thumbprint.Should().Be(TestPki.Instance.Server.Thumbprint);
        options.Certificate.HasPrivateKey.Should().BeTrue();
        options.CertificateChain!.Select(c => c.Thumbprint).Should().Equal([TestPki.Instance.Ca.Thumbprint], "what follows the certificate in its file is sent with it");
        options.TrustedRoots!.Select(c => c.Thumbprint).Should().Equal([TestPki.Instance.Ca.Thumbprint]);
        options.ClientCertificateMode.Should().Be(TlsClientCertificateMode.Allowed);
        options.HandshakeTimeout.Should().Be(TimeSpan.FromSeconds(3));
        options.MaxPendingHandshakes.Should().Be(16);
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
            TlsServerOptions options = TlsConfiguration.ReadServer(BoundOptions.Configuration(new()
            {
                ["Coap:Endpoints:tls:Tls:CertificateThumbprint"] = TestPki.Instance.Server.Thumbprint,
                ["Coap:Endpoints:tls:Tls:TrustedRootsStoreName"] = rootsStore,
            }).GetSection("Coap:Endpoints:tls:Tls"));

            options.Certificate!.Thumbprint.Should().Be(TestPki.Instance.Server.Thumbprint);
            options.Certificate.HasPrivateKey.Should().BeTrue();
            options.TrustedRoots!.Select(c => c.Thumbprint).Should().Contain(
                TestPki.Instance.Ca.Thumbprint, "every certificate of the store is a root (the suite's other target framework may hold its own CA there meanwhile)");
        }
        finally
        {
            my.Remove(TestPki.Instance.Server);
            roots.Remove(caWithoutKey);
        }
    }

    [Theory]
    [InlineData("Coap:Endpoints:tls:Tls:CertificateKeyFile", "Coap:Endpoints:tls:Tls:CertificateKeyFile=/nonexistent/server.key")]
    [InlineData("Coap:Endpoints:tls:Tls:CertificateFile", "Coap:Endpoints:tls:Tls:CertificateFile={garbage.pem}")]
    [InlineData("Coap:Endpoints:tls:Tls:CertificateFile", "Coap:Endpoints:tls:Tls:CertificateFile={empty.pem}")]
    [InlineData("Coap:Endpoints:tls:Tls:CertificateKeyFile names no key file", "Coap:Endpoints:tls:Tls:CertificateKeyFile=")]
    [InlineData("Coap:Endpoints:tls:Tls:CertificateKeyFile", "Coap:Endpoints:tls:Tls:CertificateKeyFile={client.key}")]
    [InlineData("it is encrypted: set Coap:Endpoints:tls:Tls:CertificateKeyPassword", "Coap:Endpoints:tls:Tls:CertificateKeyFile={server-encrypted.key}")]
    [InlineData("Coap:Endpoints:tls:Tls:CertificateKeyPassword", "Coap:Endpoints:tls:Tls:CertificateKeyFile={server-encrypted.key}|Coap:Endpoints:tls:Tls:CertificateKeyPassword=not-the-password")]
    [InlineData("Coap:Endpoints:tls:Tls:CertificateThumbprint", "Coap:Endpoints:tls:Tls:CertificateFile=|Coap:Endpoints:tls:Tls:CertificateThumbprint=00112233445566778899AABBCCDDEEFF00112233")]
    [InlineData("Coap:Endpoints:tls:Tls:CertificateThumbprint are both set", "Coap:Endpoints:tls:Tls:CertificateThumbprint=00112233445566778899AABBCCDDEEFF00112233")]
    [InlineData("Coap:Endpoints:tls:Tls:ClientCertificateMode", "Coap:Endpoints:tls:Tls:ClientCertificateMode=Sometimes")]
    [InlineData("Coap:Endpoints:tls:Tls:ClientCertificateMode", "Coap:Endpoints:tls:Tls:ClientCertificateMode=7")]
    [InlineData("Coap:Endpoints:tls:Tls:TrustedRootsFile", "Coap:Endpoints:tls:Tls:TrustedRootsFile={empty.pem}")]
    [InlineData("Coap:Endpoints:tls:Tls:TrustedRootsStoreName", "Coap:Endpoints:tls:Tls:TrustedRootsStoreName=CoapNetNoSuchStore")]
    [InlineData("Coap:Endpoints:tls:Url: 'coaps+tcp://device.example:5684' names the host 'device.example'", "Coap:Endpoints:tls:Url=coaps+tcp://device.example:5684")]
    [InlineData("Coap:Endpoints:tls:Tls:Certificate is not a setting; did you mean CertificateFile?", "Coap:Endpoints:tls:Tls:Certificate:KeyFile={server.key}")]
    [InlineData("Coap:Endpoints:tls:Tls names no certificate", "Coap:Endpoints:tls:Tls:CertificateFile=")]
    [InlineData("Coap:Endpoints:tls:Tls: HandshakeTimeout must be positive", "Coap:Endpoints:tls:Tls:HandshakeTimeout=00:00:00")]
    [InlineData("Coap:Tls is no longer a setting: a coaps+tcp endpoint is a section of Coap:Endpoints", "Coap:Tls:CertificateFile={server.pem}")]
    public async Task AValueThatCannotBeUsedStopsTheStartWithItsPathAndWithoutTheKeyOrThePassword(string said, string changes)
    {
        // A working configuration, then the case's changes to it ("KEY=" removes a key).
        Dictionary<string, string?> settings = new()
        {
            ["Coap:Endpoints:tls:Url"] = "coaps+tcp://127.0.0.1:0",
            ["Coap:Endpoints:tls:Tls:CertificateFile"] = _pem["server.pem"],
            ["Coap:Endpoints:tls:Tls:CertificateKeyFile"] = _pem["server.key"],
            ["Coap:Endpoints:tls:Tls:CertificateKeyPassword"] = null,
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
        if (settings["Coap:Endpoints:tls:Tls:CertificateKeyPassword"] is { } password)
        {
            message.Should().NotContain(password);
        }
    }

    [Fact]
    public async Task ACoapsTcpEndpointWithoutATlsSectionStopsTheStartSayingWhatToAdd()
    {
        using IHost host = BuildHost(new() { ["Coap:Endpoints:tls:Url"] = "coaps+tcp://127.0.0.1:0" });

        Func<Task> start = () => host.StartAsync();

        (await start.Should().ThrowAsync<InvalidOperationException>()).Which.Message.Should().Be(
            "coaps+tcp://127.0.0.1:0 (Coap:Endpoints:tls) is not served: its transport carries coap+tcp, not coaps+tcp; secure it with UseTls(certificate) on the endpoint, "
            + "or in configuration with its certificate (Coap:Endpoints:tls:Tls:CertificateFile and CertificateKeyFile).");
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
