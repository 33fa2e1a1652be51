using System.Net;
using CoapNet.Client;
using CoapNet.Configuration;
using CoapNet.Hosting;
using CoapNet.Server;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;

namespace CoapNet.Tests.Hosting;

/// <summary>The "Coap" configuration section, bound onto the server's and the client's options types themselves.</summary>
public sealed class CoapConfigurationTests
{
    [Fact]
    public void BindsEveryLevelOfTheServerOptionsFromTheCoapSection()
    {
        CoapServerOptions options = BoundOptions.Server(new Dictionary<string, string?>
        {
            ["Coap:Endpoints:udp:Url"] = "coap://[::]:5683",
            ["Coap:Endpoints:tcp:Url"] = "coap+tcp://0.0.0.0",
            ["Coap:Endpoints:local:Url"] = "coap+tcp://127.0.0.1:6000",
            ["Coap:Endpoints:local:Endpoint:MaxMessageSize"] = "256",
            ["Coap:Endpoints:local:Endpoint:TransmissionParameters:NStart"] = "3",
            ["Coap:Endpoints:any:Url"] = "coap://[::1]:0",
            ["Coap:MaxPendingRequests"] = "16",
            ["Coap:Endpoint:SeparateResponseDelay"] = "00:00:00.500",
            ["Coap:Endpoint:MaxMessageSize"] = "512",
            ["Coap:Endpoint:TransmissionParameters:AckTimeout"] = "00:00:03",
            ["Coap:Endpoint:TransmissionParameters:NStart"] = "2",
            ["Coap:Endpoint:Blockwise:BlockSize"] = "256",
            ["Coap:Endpoint:Echo:RequireFreshness"] = "true",
            ["Coap:Udp:SocketReceiveBufferSize"] = "4194304",
            ["Coap:Tcp:MaxOutputBufferSize"] = "131072",
            ["Coap:Connections:IdleTimeout"] = "00:01:00",
            ["Coap:Connections:MaxConnections"] = "10",
            ["Coap:Observe:MaxObservations"] = "500",
            ["Coap:Observe:ConfirmableEvery"] = "10",
        });

        options.ListenOptions.Select(endpoint => endpoint.ToString()).Should().BeEquivalentTo(
            "coap://[::]:5683 (Coap:Endpoints:udp)", "coap+tcp://0.0.0.0:5683 (Coap:Endpoints:tcp)", "coap+tcp://127.0.0.1:6000 (Coap:Endpoints:local)", "coap://[::1]:0 (Coap:Endpoints:any)");
        CoapListenOptions local = options.ListenOptions.Single(endpoint => endpoint.Name == "Coap:Endpoints:local");
        local.Endpoint!.MaxMessageSize.Should().Be(256, "an endpoint's own section binds onto its own settings");
        local.Endpoint.TransmissionParameters.NStart.Should().Be(3);
        local.Endpoint.TransmissionParameters.AckTimeout.Should().Be(TimeSpan.FromSeconds(3), "what it leaves out is the server's Coap:Endpoint");
        local.Endpoint.SeparateResponseDelay.Should().Be(TimeSpan.FromMilliseconds(500));
        options.ListenOptions.Where(endpoint => endpoint != local).Should().OnlyContain(endpoint => endpoint.Endpoint == null, "the others use the server's settings");
        options.MaxPendingRequests.Should().Be(16);
        options.Endpoint.SeparateResponseDelay.Should().Be(TimeSpan.FromMilliseconds(500));
        options.Endpoint.MaxMessageSize.Should().Be(512);
        options.Endpoint.TransmissionParameters.AckTimeout.Should().Be(TimeSpan.FromSeconds(3));
        options.Endpoint.TransmissionParameters.NStart.Should().Be(2);
        options.Endpoint.TransmissionParameters.MaxRetransmit.Should().Be(4, "what configuration leaves out keeps the RFC's default");
        options.Endpoint.Blockwise.BlockSize.Should().Be(256);
        options.Endpoint.Echo.RequireFreshness.Should().BeTrue();
        options.Udp.SocketReceiveBufferSize.Should().Be(4 * 1024 * 1024);
        options.Tcp.MaxOutputBufferSize.Should().Be(128 * 1024);
        options.Connections.IdleTimeout.Should().Be(TimeSpan.FromMinutes(1));
        options.Connections.MaxConnections.Should().Be(10);
        options.Observe.MaxObservations.Should().Be(500);
        options.Observe.ConfirmableEvery.Should().Be(10);
        options.Observe.MaxObservationsPerPeer.Should().Be(new CoapNet.Observe.ObserveOptions().MaxObservationsPerPeer);
        options.MaxDegreeOfParallelism.Should().Be(new CoapServerOptions().MaxDegreeOfParallelism);
    }

    [Fact]
    public void CodeChangesTheOptionsAfterConfigurationIsBound()
    {
        ServiceCollection services = new();
        services.AddSingleton<IConfiguration>(BoundOptions.Configuration(new() { ["Coap:MaxPendingRequests"] = "16", ["Coap:Endpoint:MaxPeers"] = "100" }));
        services.AddCoapServer(options =>
        {
            options.MaxPendingRequests *= 2;
            options.Endpoint.MaxPeers += 1;
        });
        using ServiceProvider provider = services.BuildServiceProvider();

        CoapServerOptions options = provider.GetRequiredService<IOptions<CoapServerOptions>>().Value;
        options.MaxPendingRequests.Should().Be(32);
        options.Endpoint.MaxPeers.Should().Be(101);
    }

    [Fact]
    public void TheHostsLoggingAndClockFillWhatCodeLeftUnset()
    {
        TimeProvider clock = new ManualTimeProvider();
        ServiceCollection services = new();
        services.AddSingleton<IConfiguration>(BoundOptions.Configuration([]));
        services.AddSingleton(clock);
        services.AddSingleton<ILoggerFactory>(NullLoggerFactory.Instance);
        services.AddCoapServer();
        using ServiceProvider provider = services.BuildServiceProvider();

        CoapServerOptions options = provider.GetRequiredService<IOptions<CoapServerOptions>>().Value;
        options.Endpoint.TimeProvider.Should().BeSameAs(clock);
        options.Endpoint.LoggerFactory.Should().BeSameAs(NullLoggerFactory.Instance);
    }

    [Fact]
    public void TheRetransmissionPolicyIsNamedInConfiguration()
    {
        CoapServerOptions cocoa = BoundOptions.Server(new() { ["Coap:Endpoint:RetransmissionPolicy"] = "Cocoa", ["Coap:Endpoint:Cocoa:MaxTimeout"] = "00:00:10" });
        CoapServerOptions rfc = BoundOptions.Server(new() { ["Coap:Endpoint:RetransmissionPolicy"] = "rfc7252" });
        Action unknown = () => BoundOptions.Server(new() { ["Coap:Endpoint:RetransmissionPolicy"] = "Reno" });

        cocoa.Endpoint.RetransmissionPolicy.Should().BeOfType<CoapNet.Messaging.Retransmission.CocoaRetransmissionPolicy>()
            .Which.MaxTimeout.Should().Be(TimeSpan.FromSeconds(10), "the Cocoa subsection binds onto CocoaOptions");
        rfc.Endpoint.RetransmissionPolicy.Should().BeSameAs(CoapNet.Messaging.Retransmission.CoapRetransmissionPolicy.Rfc7252);
        unknown.Should().Throw<FormatException>().WithMessage("Coap:Endpoint:RetransmissionPolicy is 'Reno'; it names a retransmission policy: Rfc7252 or Cocoa.");
    }

    [Fact]
    public void TheSessionMatchingPolicyIsNamedInConfigurationAndStrictIsTheDefault()
    {
        CoapServerOptions server = BoundOptions.Server(new()
        {
            ["Coap:Endpoint:SessionMatching"] = "Relaxed",
            ["Coap:Endpoints:cluster:Url"] = "coap://127.0.0.1:5683",
            ["Coap:Endpoints:cluster:Endpoint:SessionMatching"] = "principal",
        });
        CoapClientOptions client = BoundOptions.Client(new() { ["Coap:Client:Endpoint:SessionMatching"] = "Principal" });
        Action unknown = () => BoundOptions.Server(new() { ["Coap:Endpoint:SessionMatching"] = "Loose" });
        Action undefined = () => new CoapServer(new CoapServerOptions { Endpoint = new CoapNet.Messaging.CoapEndpointOptions { SessionMatching = (CoapNet.Channels.CoapSessionMatching)7 } }).Dispose();

        new CoapServerOptions().Endpoint.SessionMatching.Should().Be(CoapNet.Channels.CoapSessionMatching.Strict, "RFC 7252 section 9.1.2 allows no other");
        server.Endpoint.SessionMatching.Should().Be(CoapNet.Channels.CoapSessionMatching.Relaxed);
        server.ListenOptions[^1].Endpoint!.SessionMatching.Should().Be(CoapNet.Channels.CoapSessionMatching.Principal);
        client.Endpoint.SessionMatching.Should().Be(CoapNet.Channels.CoapSessionMatching.Principal);
        unknown.Should().Throw<InvalidOperationException>().WithMessage("*Coap:Endpoint:SessionMatching*");
        undefined.Should().Throw<ArgumentException>().WithMessage("SessionMatching is 7, which is no policy: Strict, Relaxed or Principal.*");
    }

    [Theory]
    [InlineData("http://127.0.0.1:5683", "*the server has no transport for http*coap, coaps, coap+tcp, coaps+tcp*")]
    [InlineData("udp://127.0.0.1:5683", "*the server has no transport for udp*")]
    [InlineData("coap://sensor.local:5683", "*names the host 'sensor.local'; an endpoint listens on an IP address*")]
    [InlineData("sensor.local:5683", "*has no authority: a CoAP URI is scheme://host[:port]*")]
    [InlineData("coap://127.0.0.1:99999", "*has the port '99999', which is not a number from 0 to 65535*")]
    [InlineData("coap://127.0.0.1:5683/path", "*names a resource after its address*")]
    public void AnEndpointUrlThatIsNotAnEndpointAddressIsRefusedWithItsPathAndText(string url, string problem)
    {
        Action bind = () => BoundOptions.Server(new() { ["Coap:Endpoints:mine:Url"] = url });

        bind.Should().Throw<FormatException>().WithMessage($"Coap:Endpoints:mine:Url*'{url}'*").WithMessage(problem);
    }

    [Fact]
    public void AnEndpointWithoutAUrlAndAnEndpointWrittenAsBeforeSayWhatToWrite()
    {
        Action noUrl = () => BoundOptions.Server(new() { ["Coap:Endpoints:mine:Endpoint:MaxPeers"] = "5" });
        Action asBefore = () => BoundOptions.Server(new() { ["Coap:Endpoints:0"] = "udp://[::]:5683" });

        noUrl.Should().Throw<FormatException>().WithMessage("Coap:Endpoints:mine:Url is missing: each endpoint names its address, such as Coap:Endpoints:mine:Url=coap://[::]:5683.");
        asBefore.Should().Throw<CoapConfigurationException>().WithMessage("Coap:Endpoints:0 is 'udp://[::]:5683', but an endpoint is a section with its address in Url*Coap:Endpoints:udp:Url=coap://[::]:5683*");
    }

    [Fact]
    public void BindsTheClientSection()
    {
        CoapClientOptions options = BoundOptions.Client(new()
        {
            ["Coap:Client:LocalEndPoint"] = "127.0.0.1:0",
            ["Coap:Client:UseNonConfirmable"] = "true",
            ["Coap:Client:Endpoint:TransmissionParameters:MaxRetransmit"] = "2",
            ["Coap:Client:Endpoint:Blockwise:BlockSize"] = "128",
            ["Coap:Client:Udp:SocketReceiveBufferSize"] = "65536",
            ["Coap:Client:Connections:ConnectTimeout"] = "00:00:05",
        });

        options.LocalEndPoint.Should().Be(new IPEndPoint(IPAddress.Loopback, 0));
        options.UseNonConfirmable.Should().BeTrue();
        options.Endpoint.TransmissionParameters.MaxRetransmit.Should().Be(2);
        options.Endpoint.Blockwise.BlockSize.Should().Be(128);
        options.Udp.SocketReceiveBufferSize.Should().Be(65536);
        options.Connections.ConnectTimeout.Should().Be(TimeSpan.FromSeconds(5));
    }

    [Fact]
    public void BindsThePathsOfConstrainedLinks()
    {
        // A list of sections, one per path, on the client and on a server's endpoint alike.
        CoapClientOptions client = BoundOptions.Client(new()
        {
            ["Coap:Client:Endpoint:Paths:0:Network"] = "10.64.0.0/10",
            ["Coap:Client:Endpoint:Paths:0:Mtu"] = "296",
            ["Coap:Client:Endpoint:Paths:0:TokenLength"] = "2",
            ["Coap:Client:Endpoint:Paths:1:Network"] = "2001:db8::/32",
            ["Coap:Client:Endpoint:Paths:1:Mtu"] = "1280",
        });
        CoapServerOptions server = BoundOptions.Server(new()
        {
            ["Coap:Endpoints:udp:Url"] = "coap://[::]:5683",
            ["Coap:Endpoint:Paths:0:Network"] = "10.64.0.0/10",
            ["Coap:Endpoint:Paths:0:Mtu"] = "296",
        });

        client.Endpoint.Paths.Select(path => (path.Network, path.Mtu, path.TokenLength)).Should().Equal(("10.64.0.0/10", 296, 2), ("2001:db8::/32", 1280, null));
        server.Endpoint.Paths.Select(path => (path.Network, path.Mtu, path.TokenLength)).Should().Equal(("10.64.0.0/10", 296, (int?)null));
    }
}
