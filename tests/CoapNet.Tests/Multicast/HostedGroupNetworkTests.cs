using System.Net;
using CoapNet.Multicast;
using CoapNet.Server;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

namespace CoapNet.Tests.Multicast;

/// <summary>
/// A server of the Generic Host with "Coap:Multicast" (AddCoapMulticast) in a network of namespaces
/// (<see cref="TestNetwork"/>): node 2 serves the group its configuration names, node 1 asks.
/// </summary>
public sealed class HostedGroupNetworkTests
{
    [SkippableFact]
    public async Task AHostedServerInANamespaceAnswersTheGroupItsConfigurationNames()
    {
        using TestNetwork network = new(nodes: 2);
        using IHost host = MulticastHostingTests.BuildHost(new Dictionary<string, string?>
        {
            ["Coap:Multicast:Groups:0"] = "239.1.2.3",
            ["Coap:Multicast:Interfaces:0"] = TestNetwork.Interface,
            ["Coap:Multicast:Leisure"] = "00:00:00",
        });

        // Resolved (its interfaces looked up) and started (its sockets bound) on a thread in node 2's namespace, so they are that node's.
        CoapServer server = network.Run(2, () =>
        {
            CoapServer made = host.Services.GetRequiredService<CoapServer>();
            made.Start();
            return made;
        });

        List<CoapGroupResponse> configured = await GatherAsync(network, "coap://239.1.2.3/hello");
        List<CoapGroupResponse> allCoapNodes = await GatherAsync(network, "coap://224.0.1.187/hello");

        configured.Should().ContainSingle().Which.Responder.Address.Should().Be(IPAddress.Parse(TestNetwork.IPv4(2)));
        configured[0].Response.GetPayloadString().Should().Be("hello from the host");
        allCoapNodes.Should().BeEmpty("the configuration's groups replace All CoAP Nodes");
        await server.StopAsync();
    }

    private static async Task<List<CoapGroupResponse>> GatherAsync(TestNetwork network, string uri)
    {
        IAsyncEnumerable<CoapGroupResponse> responses = network.Run(1, () => new CoapGroupClient().GetAsync(new Uri(uri), TimeSpan.FromSeconds(1.5)));
        List<CoapGroupResponse> all = [];
        await foreach (CoapGroupResponse response in responses)
        {
            all.Add(response);
        }

        return all;
    }
}
