using System.Security.Cryptography.X509Certificates;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Dtls.Configuration;
using CoapNet.Hosting;
using CoapNet.Messages;
using CoapNet.Server;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// coaps in the Generic Host: a coaps endpoint's "Dtls" section gives the hosted server its credentials
/// from text and files, "Coap:Client:Dtls" gives the hosted client its credentials, and bad settings are refused
/// with their path and without the key.
/// </summary>
public sealed class DtlsHostingTests
{
    [Fact]
    public async Task AHostedServerServesCoapsWithAPskFromAFileAndACertificateFromPemFilesToAHostedClient()
    {
        using DtlsKeys.PemFolder pem = new();
        using X509Certificate2 ca = DtlsKeys.NewAuthority("CoapNet Test CA");
        using X509Certificate2 serverCertificate = DtlsKeys.NewLeaf(ca, "hosted-server");
        using X509Certificate2 clientCertificate = DtlsKeys.NewLeaf(ca, "hosted-client");
        string keyFile = Path.Combine(Path.GetDirectoryName(pem.Certificate(ca, "ca.pem"))!, "device.key");
        await File.WriteAllTextAsync(keyFile, "file-secret\n");
        using IHost host = BuildHost(new Dictionary<string, string?>
        {
            ["Coap:Endpoints:secure:Url"] = "coaps://127.0.0.1:0",
            ["Coap:Endpoints:secure:Dtls:PskKeys:0:Identity"] = "device-1",
            ["Coap:Endpoints:secure:Dtls:PskKeys:0:KeyFile"] = keyFile,
            ["Coap:Endpoints:secure:Dtls:PskKeys:1:Identity"] = "lab",
            ["Coap:Endpoints:secure:Dtls:PskKeys:1:KeyHex"] = "0102030405",
            ["Coap:Endpoints:secure:Dtls:CertificateFile"] = pem.Certificate(serverCertificate, "server.pem"),
            ["Coap:Endpoints:secure:Dtls:CertificateKeyFile"] = pem.CertificateKey(serverCertificate, "server-key.pem"),
            ["Coap:Endpoints:secure:Dtls:TrustedRootsFile"] = pem.Certificate(ca, "ca.pem"),
            ["Coap:Endpoints:secure:Dtls:MaxSessions"] = "100",
            ["Coap:Client:Dtls:CertificateFile"] = pem.Certificate(clientCertificate, "client.pem"),
            ["Coap:Client:Dtls:CertificateKeyFile"] = pem.CertificateKey(clientCertificate, "client-key.pem"),
            ["Coap:Client:Dtls:TrustedRootsFile"] = pem.Certificate(ca, "ca.pem"),
        });
        await host.StartAsync();
        CoapServer server = host.Services.GetRequiredService<CoapServer>();
        Uri coaps = server.LocalUris.Single(u => u.Scheme == "coaps");
        CoapClient hostedClient = host.Services.GetRequiredService<CoapClient>();
        await using CoapClient pskClient = DtlsLoopback.Client(identity: "device-1", key: "file-secret"u8.ToArray());
        await using CoapClient hexClient = DtlsLoopback.Client(identity: "lab", key: [1, 2, 3, 4, 5]);

        (await hostedClient.GetAsync(new Uri(coaps, "/who"))).GetPayloadString().Should().Be("cert:CN=hosted-client");
        (await pskClient.GetAsync(new Uri(coaps, "/who"))).GetPayloadString().Should().Be("psk:device-1", "the key file's text without its final newline is the key");
        (await hexClient.GetAsync(new Uri(coaps, "/who"))).GetPayloadString().Should().Be("psk:lab");
        await host.StopAsync();
    }

    [Fact]
    public void AKeyThatIsNotHexadecimalIsRefusedWithItsPathAndWithoutTheKey()
    {
        IConfiguration configuration = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["Coap:Endpoints:secure:Dtls:PskKeys:0:Identity"] = "device-1",
            ["Coap:Endpoints:secure:Dtls:PskKeys:0:KeyHex"] = "top-secret-value",
        }).Build();

        Action read = () => DtlsConfiguration.ReadServerOptions(configuration.GetSection("Coap:Endpoints:secure:Dtls"));

        read.Should().Throw<FormatException>().Which.Message.Should().Contain("Coap:Endpoints:secure:Dtls:PskKeys:0:KeyHex").And.NotContain("top-secret-value");
    }

    [Fact]
    public void AMissingFileAndAnEntryWithoutAKeyAreRefusedWithTheirPaths()
    {
        IConfiguration missing = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?> { ["Coap:Client:Dtls:PskIdentity"] = "x", ["Coap:Client:Dtls:PskKeyFile"] = "/nonexistent/key" }).Build();
        IConfiguration keyless = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?> { ["Coap:Endpoints:secure:Dtls:PskKeys:0:Identity"] = "device-1" }).Build();

        Action readMissing = () => DtlsConfiguration.ReadClientOptions(new DtlsClientOptions(), missing.GetSection(DtlsConfiguration.ClientSection));
        Action readKeyless = () => DtlsConfiguration.ReadServerOptions(keyless.GetSection("Coap:Endpoints:secure:Dtls"));

        readMissing.Should().Throw<IOException>().Which.Message.Should().Contain("Coap:Client:Dtls:PskKeyFile").And.Contain("/nonexistent/key");
        readKeyless.Should().Throw<FormatException>().Which.Message.Should().Contain("Coap:Endpoints:secure:Dtls:PskKeys:0").And.Contain("device-1");
    }

    [Fact]
    public void TheHandshakeDefencesAreReadByTheirOptionNames()
    {
        IConfiguration configuration = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["Coap:Endpoints:secure:Dtls:PskKeys:0:Identity"] = "device-1",
            ["Coap:Endpoints:secure:Dtls:PskKeys:0:Key"] = "secret",
            ["Coap:Endpoints:secure:Dtls:HandshakeStallTimeout"] = "00:00:08",
            ["Coap:Endpoints:secure:Dtls:MaxConcurrentHandshakesPerAddress"] = "64",
            ["Coap:Endpoints:secure:Dtls:SessionEvictionThreshold"] = "00:02:00",
        }).Build();

        DtlsServerOptions options = DtlsConfiguration.ReadServerOptions(configuration.GetSection("Coap:Endpoints:secure:Dtls"));

        options.HandshakeStallTimeout.Should().Be(TimeSpan.FromSeconds(8));
        options.MaxConcurrentHandshakesPerAddress.Should().Be(64);
        options.SessionEvictionThreshold.Should().Be(TimeSpan.FromMinutes(2));
    }

    [Fact]
    public void ACertificateIsFoundInTheCertificateStoreByItsThumbprint()
    {
        using X509Certificate2 ca = DtlsKeys.NewAuthority("CoapNet Test CA");
        using X509Certificate2 leaf = DtlsKeys.NewLeaf(ca, "stored-" + Guid.NewGuid().ToString("N"));
        using X509Store store = new(StoreName.My, StoreLocation.CurrentUser);
        store.Open(OpenFlags.ReadWrite);
        store.Add(leaf);
        try
        {
            IConfiguration configuration = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
            {
                ["Coap:Endpoints:secure:Dtls:CertificateThumbprint"] = leaf.Thumbprint,
            }).Build();
            IConfiguration missing = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?> { ["Coap:Endpoints:secure:Dtls:CertificateThumbprint"] = "00" }).Build();

            DtlsServerOptions options = DtlsConfiguration.ReadServerOptions(configuration.GetSection("Coap:Endpoints:secure:Dtls"));
            Action readMissing = () => DtlsConfiguration.ReadServerOptions(missing.GetSection("Coap:Endpoints:secure:Dtls"));

            options.Certificate!.Thumbprint.Should().Be(leaf.Thumbprint);
            options.Certificate.HasPrivateKey.Should().BeTrue();
            readMissing.Should().Throw<FormatException>().Which.Message.Should().Contain("Coap:Endpoints:secure:Dtls:CertificateThumbprint");
        }
        finally
        {
            store.Remove(leaf);
        }
    }

    [Fact]
    public void WithoutADtlsSectionTheServerGetsNoCoapsEndpoint()
    {
        using IHost host = BuildHost([]);

        host.Services.GetRequiredService<Microsoft.Extensions.Options.IOptions<CoapServerOptions>>().Value.ListenOptions
            .Select(endpoint => endpoint.Address.Scheme).Should().Equal("coap");
    }

    private static IHost BuildHost(Dictionary<string, string?> settings)
    {
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["Coap:Endpoints:udp:Url"] = "coap://127.0.0.1:0",
            ["Coap:Client:LocalEndPoint"] = "127.0.0.1:0",
        });
        builder.Configuration.AddInMemoryCollection(settings);
        builder.Services.AddCoapServer().Map((server, _) => server.MapGet("/who", request => CoapResponse.Content(request.Peer.Identity?.ToString() ?? "nobody")));
        builder.Services.AddCoapsEndpoints();
        builder.Services.AddCoapClient();
        builder.Services.AddCoapsClient();
        return builder.Build();
    }
}
