using System.Net;
using CoapNet.Hosting;
using CoapNet.Server;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace CoapNet.Tests.Hosting;

/// <summary>The "Coap" configuration section, bound and turned into the server's and the client's options.</summary>
public sealed class CoapServerSettingsTests
{
    [Fact]
    public void BindsEndpointsLimitsAndTransmissionParametersFromTheCoapSection()
    {
        CoapServerOptions options = Bind(new Dictionary<string, string?>
        {
            ["Coap:Endpoints:0"] = "udp://[::]:5683",
            ["Coap:Endpoints:1"] = "tcp://0.0.0.0",
            ["Coap:Endpoints:2"] = "coap+tcp://127.0.0.1:6000",
            ["Coap:UdpEndpoints:0"] = "127.0.0.1:0",
            ["Coap:TcpEndpoints:0"] = "[::1]:7000",
            ["Coap:MaxPendingRequests"] = "16",
            ["Coap:SeparateResponseDelay"] = "00:00:00.500",
            ["Coap:MaxMessageSize"] = "512",
            ["Coap:TransmissionParameters:AckTimeout"] = "00:00:03",
            ["Coap:TransmissionParameters:NStart"] = "2",
            ["Coap:Connections:IdleTimeout"] = "00:01:00",
            ["Coap:Connections:MaxConnections"] = "10",
            ["Coap:Observe:MaxObservations"] = "500",
            ["Coap:Observe:ConfirmableEvery"] = "10",
        }).ToServerOptions();

        options.Endpoints.Should().Equal(new IPEndPoint(IPAddress.IPv6Any, 5683), new IPEndPoint(IPAddress.Loopback, 0));
        options.TcpEndpoints.Should().Equal(new IPEndPoint(IPAddress.Any, 5683), new IPEndPoint(IPAddress.Loopback, 6000), new IPEndPoint(IPAddress.IPv6Loopback, 7000));
        options.MaxPendingRequests.Should().Be(16);
        options.SeparateResponseDelay.Should().Be(TimeSpan.FromMilliseconds(500));
        options.MaxMessageSize.Should().Be(512);
        options.TransmissionParameters.AckTimeout.Should().Be(TimeSpan.FromSeconds(3));
        options.TransmissionParameters.NStart.Should().Be(2);
        options.TransmissionParameters.MaxRetransmit.Should().Be(4, "what configuration leaves out keeps the RFC's default");
        options.Connections!.IdleTimeout.Should().Be(TimeSpan.FromMinutes(1));
        options.Connections.MaxConnections.Should().Be(10);
        options.Observe.MaxObservations.Should().Be(500);
        options.Observe.ConfirmableEvery.Should().Be(10);
        options.Observe.MaxObservationsPerPeer.Should().Be(new CoapNet.Observe.ObserveOptions().MaxObservationsPerPeer);
        options.MaxDegreeOfParallelism.Should().Be(new CoapServerOptions().MaxDegreeOfParallelism);
    }

    [Fact]
    public void CodeChangesTheSettingsAfterConfigurationIsBound()
    {
        ServiceCollection services = new();
        services.AddSingleton<IConfiguration>(new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?> { ["Coap:MaxPendingRequests"] = "16" }).Build());
        services.AddCoapServer(settings => settings.MaxPendingRequests *= 2);
        using ServiceProvider provider = services.BuildServiceProvider();

        provider.GetRequiredService<IOptions<CoapServerSettings>>().Value.MaxPendingRequests.Should().Be(32);
    }

    [Theory]
    [InlineData("http://127.0.0.1:5683")]
    [InlineData("udp://sensor.local:5683")]
    [InlineData("127.0.0.1:5683")]
    [InlineData("udp://127.0.0.1:5683/path")]
    public void AnEndpointThatIsNotSchemeAddressAndPortIsRefusedWithItsText(string endpoint)
    {
        CoapServerSettings settings = new() { Endpoints = [endpoint] };

        Action build = () => settings.ToServerOptions();

        build.Should().Throw<FormatException>().WithMessage($"*'{endpoint}'*");
    }

    [Fact]
    public void BindsTheClientSection()
    {
        ServiceCollection services = new();
        services.AddSingleton<IConfiguration>(new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["Coap:Client:LocalEndPoint"] = "127.0.0.1:0",
            ["Coap:Client:UseNonConfirmable"] = "true",
            ["Coap:Client:TransmissionParameters:MaxRetransmit"] = "2",
            ["Coap:Client:Connections:ConnectTimeout"] = "00:00:05",
        }).Build());
        services.AddCoapClient();
        using ServiceProvider provider = services.BuildServiceProvider();

        Client.CoapClientOptions options = provider.GetRequiredService<IOptions<CoapClientSettings>>().Value.ToClientOptions();

        options.LocalEndPoint.Should().Be(new IPEndPoint(IPAddress.Loopback, 0));
        options.UseNonConfirmable.Should().BeTrue();
        options.Endpoint.TransmissionParameters.MaxRetransmit.Should().Be(2);
        options.Connections!.ConnectTimeout.Should().Be(TimeSpan.FromSeconds(5));
    }

    private static CoapServerSettings Bind(Dictionary<string, string?> values)
    {
        ServiceCollection services = new();
        services.AddSingleton<IConfiguration>(new ConfigurationBuilder().AddInMemoryCollection(values).Build());
        services.AddCoapServer();
        using ServiceProvider provider = services.BuildServiceProvider();
        return provider.GetRequiredService<IOptions<CoapServerSettings>>().Value;
    }
}
