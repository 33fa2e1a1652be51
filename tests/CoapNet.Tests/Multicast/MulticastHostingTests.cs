using System.Net;
using CoapNet.Configuration;
using CoapNet.Hosting;
using CoapNet.Messages;
using CoapNet.Multicast;
using CoapNet.Multicast.Configuration;
using CoapNet.Server;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;

namespace CoapNet.Tests.Multicast;

/// <summary>
/// "Coap:Multicast" in the Generic Host (AddCoapMulticast): the groups, interfaces, leisure and rate limit from
/// configuration, and a misspelled key refused by its path as every key under "Coap" is (a hosted server in a network of
/// namespaces: <see cref="HostedGroupNetworkTests"/>).
/// </summary>
public sealed class MulticastHostingTests
{
    [Fact]
    public void EverySettingIsReadAndGroupsReplaceAllCoapNodes()
    {
        IConfiguration configuration = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["Coap:Multicast:Groups:0"] = "239.1.2.3",
            ["Coap:Multicast:Groups:1"] = "ff02::1:fd",
            ["Coap:Multicast:Interfaces:0"] = "eth1",
            ["Coap:Multicast:Port"] = "5700",
            ["Coap:Multicast:Leisure"] = "00:00:01.500",
            ["Coap:Multicast:GroupSizeEstimate"] = "20",
            ["Coap:Multicast:EstimatedResponseSize"] = "60",
            ["Coap:Multicast:DataRate"] = "2500",
            ["Coap:Multicast:RequestsPerSecond"] = "0.5",
            ["Coap:Multicast:Burst"] = "3",
            ["Coap:Multicast:MaxTrackedSources"] = "100",
        }).Build();
        CoapMulticastOptions options = new();

        MulticastConfiguration.ReadOptions(options, configuration.GetSection(MulticastConfiguration.Section));

        options.Groups.Should().Equal(IPAddress.Parse("239.1.2.3"), IPAddress.Parse("ff02::1:fd"));
        options.Interfaces.Should().Equal("eth1");
        options.Port.Should().Be(5700);
        options.Leisure.Should().Be(TimeSpan.FromMilliseconds(1500));
        options.GroupSizeEstimate.Should().Be(20);
        options.EstimatedResponseSize.Should().Be(60);
        options.DataRate.Should().Be(2500);
        options.RequestsPerSecond.Should().Be(0.5);
        options.Burst.Should().Be(3);
        options.MaxTrackedSources.Should().Be(100);
    }

    [Fact]
    public void AnEmptySectionLeavesTheDefaults()
    {
        CoapMulticastOptions options = new();

        MulticastConfiguration.ReadOptions(options, new ConfigurationBuilder().Build().GetSection(MulticastConfiguration.Section));

        options.Groups.Should().Equal(CoapGroups.AllCoapNodesIPv4, CoapGroups.AllCoapNodesLinkLocal, CoapGroups.AllCoapNodesSiteLocal);
        options.Interfaces.Should().BeEmpty();
        options.Leisure.Should().BeNull();
    }

    [Fact]
    public void TheHostedServerListensOnTheConfiguredGroups()
    {
        using IHost host = BuildHost(new Dictionary<string, string?>
        {
            ["Coap:Multicast:Groups:0"] = "239.1.2.3",
            ["Coap:Multicast:Port"] = "0",
        });

        CoapServerOptions options = host.Services.GetRequiredService<IOptions<CoapServerOptions>>().Value;

        options.ListenOptions.Select(l => l.Name).Should().Contain("multicast 239.1.2.3").And.NotContain(name => name != null && name.Contains("224.0.1.187", StringComparison.Ordinal));
    }

    [Fact]
    public void AMisspelledKeyStopsTheStartWithItsPathAndTheNameMeant()
    {
        using IHost host = BuildHost(new Dictionary<string, string?> { ["Coap:Multicast:Leisur"] = "00:00:01" });

        Action resolve = () => host.Services.GetRequiredService<CoapServer>();

        resolve.Should().Throw<CoapConfigurationException>().Which.Message.Should().Contain("Coap:Multicast:Leisur").And.Contain("Leisure");
    }

    [Fact]
    public void WithoutAddCoapMulticastTheSectionIsAnUnknownKey()
    {
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["Coap:Endpoints:udp:Url"] = "coap://127.0.0.1:0",
            ["Coap:Multicast:Leisure"] = "00:00:01",
        });
        builder.Services.AddCoapServer();
        using IHost host = builder.Build();

        Action resolve = () => host.Services.GetRequiredService<CoapServer>();

        resolve.Should().Throw<CoapConfigurationException>().Which.Message.Should().Contain("Coap:Multicast");
    }

    [Theory]
    [InlineData("Groups:0", "10.0.0.1", "Coap:Multicast", "not a multicast address")]
    [InlineData("Groups:0", "lamps", "Coap:Multicast:Groups:0", "not an IP address")]
    [InlineData("Leisure", "-00:00:01", "Coap:Multicast", "Leisure must not be negative")]
    [InlineData("Burst", "0", "Coap:Multicast", "Burst")]
    public void AValueThatCannotBeUsedIsRefusedWithItsPath(string key, string value, string path, string problem)
    {
        using IHost host = BuildHost(new Dictionary<string, string?> { ["Coap:Multicast:" + key] = value, ["Coap:Multicast:Port"] = "0" });

        Action resolve = () => host.Services.GetRequiredService<CoapServer>();

        resolve.Should().Throw<FormatException>().Which.Message.Should().Contain(path).And.Contain(problem);
    }

    internal static IHost BuildHost(Dictionary<string, string?> settings)
    {
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Configuration.AddInMemoryCollection(settings);
        builder.Services.AddCoapServer().Map((server, services) => server.MapGet("/hello", _ => CoapResponse.Content("hello from the host")));
        builder.Services.AddCoapMulticast();
        return builder.Build();
    }
}
