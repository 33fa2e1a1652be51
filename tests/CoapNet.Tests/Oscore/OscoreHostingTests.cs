using System.Net;
using CoapNet.Client;
using CoapNet.Configuration;
using CoapNet.Endpoints;
using CoapNet.Hosting;
using CoapNet.Messages;
using CoapNet.Oscore;
using CoapNet.Oscore.Configuration;
using CoapNet.Server;
using CoapNet.Tests.Tcp;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace CoapNet.Tests.Oscore;

/// <summary>
/// OSCORE contexts from configuration ("Coap:Oscore:Contexts:{name}") in the Generic Host: a server's and a client's,
/// secrets in hexadecimal or base64, a misspelled key refused by its path, and no secret in any log line or error.
/// </summary>
public sealed class OscoreHostingTests : IDisposable
{
    private const string SecretHex = "0102030405060708090a0b0c0d0e0f10";
    private const string SecretBase64 = "AQIDBAUGBwgJCgsMDQ4PEA==";

    private readonly string _folder = Directory.CreateTempSubdirectory("coapnet-oscore-").FullName;

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    [Fact]
    public async Task A_hosted_client_reaches_a_hosted_servers_protected_route_with_contexts_from_configuration_and_no_secret_is_logged()
    {
        ListLoggerFactory logs = new(LogLevel.Trace);
        using IHost serverHost = BuildHost(
            new Dictionary<string, string?>
            {
                ["Coap:Endpoints:udp:Url"] = "coap://127.0.0.1:0",
                ["Coap:Oscore:Contexts:sensor:MasterSecret"] = SecretHex,
                ["Coap:Oscore:Contexts:sensor:MasterSalt"] = "9e7ca92223786340",
                ["Coap:Oscore:Contexts:sensor:SenderId"] = "01",
                ["Coap:Oscore:Contexts:sensor:RecipientId"] = "",
            },
            logs);
        await serverHost.StartAsync();
        IPEndPoint server = serverHost.Services.GetRequiredService<CoapServer>().LocalEndPoints[0];
        string sequenceFile = Path.Combine(_folder, "gateway.seq");
        using IHost clientHost = BuildHost(
            new Dictionary<string, string?>
            {
                ["Coap:Client:LocalEndPoint"] = "127.0.0.1:0",
                ["Coap:Oscore:Contexts:gateway:MasterSecret"] = SecretBase64,
                ["Coap:Oscore:Contexts:gateway:MasterSalt"] = "nnypIiN4Y0A=",
                ["Coap:Oscore:Contexts:gateway:SenderId"] = "",
                ["Coap:Oscore:Contexts:gateway:RecipientId"] = "01",
                ["Coap:Oscore:Contexts:gateway:Peer"] = $"coap://{server}",
                ["Coap:Oscore:Contexts:gateway:SequenceFile"] = sequenceFile,
            },
            logs);
        CoapClient client = clientHost.Services.GetRequiredService<CoapClient>();
        await using CoapClient plain = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) });

        CoapResponse secret = await client.GetAsync(new Uri($"coap://{server}/secret"));
        CoapResponse unprotected = await plain.GetAsync(new Uri($"coap://{server}/secret"));

        secret.GetPayloadString().Should().Be("secret for oscore:");
        unprotected.Code.Should().Be(CoapCode.Unauthorized);
        File.ReadAllText(sequenceFile).Should().Be("100\n", "the client's context keeps its sequence number in the file configuration names");
        logs.Warnings.Should().NotBeEmpty("the test sees the host's log lines at every level");
        string logged = string.Join('\n', logs.Warnings);
        logged.Should().NotContainEquivalentOf(SecretHex).And.NotContain(SecretBase64).And.NotContainEquivalentOf("0102030405060708");
        await serverHost.StopAsync();
    }

    [Fact]
    public void A_misspelled_key_of_a_context_stops_the_start_with_its_path_and_the_name_meant()
    {
        using IHost host = BuildHost(new Dictionary<string, string?>
        {
            ["Coap:Endpoints:udp:Url"] = "coap://127.0.0.1:0",
            ["Coap:Oscore:Contexts:sensor:MasterSecrit"] = SecretHex,
        });

        Action resolve = () => host.Services.GetRequiredService<CoapServer>();

        resolve.Should().Throw<CoapConfigurationException>().Which.Message.Should()
            .Contain("Coap:Oscore:Contexts:sensor:MasterSecrit").And.Contain("MasterSecret").And.NotContain(SecretHex);
    }

    [Fact]
    public void Without_AddCoapOscore_the_Oscore_section_is_an_unknown_key()
    {
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["Coap:Endpoints:udp:Url"] = "coap://127.0.0.1:0",
            ["Coap:Oscore:Contexts:sensor:MasterSecret"] = SecretHex,
        });
        builder.Services.AddCoapServer();
        using IHost host = builder.Build();

        Action resolve = () => host.Services.GetRequiredService<CoapServer>();

        resolve.Should().Throw<CoapConfigurationException>().Which.Message.Should().Contain("Coap:Oscore");
    }

    [Theory]
    [InlineData("MasterSecret", "not hex, not base64!", "neither hexadecimal nor base64")]
    [InlineData("SenderId", null, "SenderId is missing")]
    [InlineData("RecipientId", "01", "must differ")]
    [InlineData("Peer", "gateway.example:5683", "not a server's IP address")]
    [InlineData("SendIdContext", "maybe", "true or false")]
    public void A_value_that_cannot_make_a_context_is_refused_with_its_path_and_never_its_secret(string key, string? value, string problem)
    {
        Dictionary<string, string?> context = new()
        {
            ["MasterSecret"] = "c2VjcmV0LXNlY3JldC1zZWNyZXQ=",
            ["SenderId"] = "01",
            ["RecipientId"] = "",
            [key] = value,
        };
        IConfiguration configuration = new ConfigurationBuilder().AddInMemoryCollection(
            context.Where(entry => entry.Value is not null).Select(entry => new KeyValuePair<string, string?>($"Coap:Oscore:Contexts:sensor:{entry.Key}", entry.Value))).Build();

        Action read = () => OscoreConfiguration.ReadServerOptions(configuration.GetSection(OscoreConfiguration.Section));
        Action readClient = () => OscoreConfiguration.ReadClientOptions(configuration.GetSection(OscoreConfiguration.Section));

        string message = (key == "Peer" ? readClient : read).Should().Throw<FormatException>().Which.Message;
        message.Should().Contain("Coap:Oscore:Contexts:sensor").And.Contain(problem).And.NotContain("c2VjcmV0").And.NotContain("not hex, not base64!");
    }

    [Fact]
    public void A_context_with_a_Peer_is_the_clients_and_one_without_the_servers()
    {
        IConfiguration configuration = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["Coap:Oscore:Contexts:server-side:MasterSecret"] = SecretHex,
            ["Coap:Oscore:Contexts:server-side:SenderId"] = "01",
            ["Coap:Oscore:Contexts:server-side:RecipientId"] = "",
        }).Build();

        OscoreOptions? server = OscoreConfiguration.ReadServerOptions(configuration.GetSection(OscoreConfiguration.Section));
        OscoreOptions? client = OscoreConfiguration.ReadClientOptions(configuration.GetSection(OscoreConfiguration.Section));

        server.Should().NotBeNull();
        client.Should().BeNull("no context names a server to protect requests to, so the client gets no OSCORE stage");
    }

    private static IHost BuildHost(Dictionary<string, string?> settings, ILoggerFactory? logging = null)
    {
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Configuration.AddInMemoryCollection(settings);
        if (logging is not null)
        {
            builder.Services.AddSingleton(logging);
        }

        builder.Services.AddCoapServer().Map((server, _) => server.MapGet("/secret", (CoapNet.Channels.CoapPeerIdentity? identity) => $"secret for {identity}").RequireOscore());
        builder.Services.AddCoapClient();
        builder.Services.AddCoapOscore();
        return builder.Build();
    }
}
