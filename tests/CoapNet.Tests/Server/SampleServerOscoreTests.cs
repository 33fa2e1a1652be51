using System.Net;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Oscore;

namespace CoapNet.Tests.Server;

/// <summary>
/// The sample server program's OSCORE (RFC 8613) on its coap port, with the demo context of RFC 8613 Appendix C.1 it
/// prints at start: each test runs a server process of its own, so its replay window sees only that test's requests.
/// </summary>
public sealed class SampleServerOscoreTests
{
    [Fact]
    public async Task It_prints_the_demo_context_and_answers_a_protected_GET_of_oscore_hello_and_an_unprotected_one_with_4_01()
    {
        using SampleServerProcess sample = await SampleServerProcess.StartAsync();
        await using CoapClient client = DemoClient(sample.EndPoint);
        await using CoapClient plain = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) });

        CoapResponse hello = await client.GetAsync(new Uri($"coap://{sample.EndPoint}/oscore/hello"));
        CoapResponse refused = await plain.GetAsync(new Uri($"coap://{sample.EndPoint}/oscore/hello"));

        sample.Output.Split('\n', StringSplitOptions.TrimEntries).Should().Contain(line => line.StartsWith(
            "oscore context: master-secret '0102030405060708090a0b0c0d0e0f10', master-salt '9e7ca92223786340', client-sender-id '', server-sender-id '01' (demo only; ",
            StringComparison.Ordinal));
        hello.Code.Should().Be(CoapCode.Content);
        hello.GetPayloadString().Should().Be("Hello, OSCORE!");
        refused.Code.Should().Be(CoapCode.Unauthorized);
        refused.GetPayloadString().Should().NotContain("Hello");
    }

    [Fact]
    public async Task Every_other_route_answers_a_protected_request_too()
    {
        using SampleServerProcess sample = await SampleServerProcess.StartAsync();
        await using CoapClient client = DemoClient(sample.EndPoint);

        CoapResponse hello = await client.GetAsync(new Uri($"coap://{sample.EndPoint}/hello"));
        CoapResponse put = await client.PutAsync(new Uri($"coap://{sample.EndPoint}/store/lamp"), "on"u8.ToArray());
        CoapResponse get = await client.GetAsync(new Uri($"coap://{sample.EndPoint}/store/lamp"));

        hello.GetPayloadString().Should().Be("Hello, CoAP!");
        put.Code.Should().Be(CoapCode.Created);
        get.GetPayloadString().Should().Be("on");
    }

    /// <summary>A client with the client's side of the demo context the sample prints (RFC 8613 Appendix C.1).</summary>
    private static CoapClient DemoClient(IPEndPoint server)
    {
        OscoreContext context = new(new OscoreContextOptions
        {
            MasterSecret = Convert.FromHexString("0102030405060708090a0b0c0d0e0f10"),
            MasterSalt = Convert.FromHexString("9e7ca92223786340"),
            SenderId = [],
            RecipientId = [0x01],
        });
        return new(new CoapClientOptions
        {
            LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0),
            Endpoint = new CoapEndpointOptions().UseOscore(new OscoreOptions().AddClientContext(server, context)),
        });
    }
}
