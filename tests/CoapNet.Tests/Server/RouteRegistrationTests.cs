using System.Net;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Server;

namespace CoapNet.Tests.Server;

/// <summary>Mapping routes: template syntax, conflicts, attributes, options, and the rule that routes are mapped before the server starts.</summary>
public sealed class RouteRegistrationTests
{
    private static readonly Func<CoapRequest, CoapResponse> Ok = _ => CoapResponse.Content("ok");

    [Theory]
    [InlineData("")]
    [InlineData("hello")]
    [InlineData("/a/{}")]
    [InlineData("/a/{*}")]
    [InlineData("/a/{*rest}/b")]
    [InlineData("/a/{x}/{x}")]
    [InlineData("/a/{x}/{*x}")]
    [InlineData("/a/b}")]
    [InlineData("/a/{b")]
    [InlineData("/a/x{b}")]
    [InlineData("/a/{x{y}}")]
    [InlineData("/a/{x/y}")]
    public void AnInvalidTemplateIsRejectedWithAnArgumentExceptionNamingIt(string template)
    {
        using CoapServer server = new(LoopbackServer.Options());

        Action map = () => server.MapGet(template, Ok);

        map.Should().Throw<ArgumentException>().WithMessage($"*'{template}'*").Which.ParamName.Should().Be("template");
    }

    [Fact]
    public void ANullTemplateIsRejected()
    {
        using CoapServer server = new(LoopbackServer.Options());

        Action map = () => server.MapGet(null!, Ok);

        map.Should().Throw<ArgumentNullException>();
    }

    [Fact]
    public void MappingTheSameMethodOnATemplateTwiceIsRejected()
    {
        using CoapServer server = new(LoopbackServer.Options());
        server.MapGet("/x", Ok);

        Action again = () => server.MapGet("/x", Ok);

        again.Should().Throw<ArgumentException>().WithMessage("*GET /x*already mapped*");
    }

    [Fact]
    public void TemplatesThatDifferOnlyInParameterNamesConflict()
    {
        using CoapServer server = new(LoopbackServer.Options());
        server.MapGet("/store/{name}", Ok);

        Action conflicting = () => server.MapPut("/store/{key}", Ok);

        conflicting.Should().Throw<ArgumentException>().WithMessage("*'/store/{key}' conflicts with '/store/{name}'*");
    }

    [Fact]
    public void ACodeThatIsNotAMethodIsRejected()
    {
        using CoapServer server = new(LoopbackServer.Options());

        Action map = () => server.Map(CoapCode.Content, "/x", Ok);

        map.Should().Throw<ArgumentException>();
    }

    [Fact]
    public void SeveralMethodsOnOneTemplateShareOneRouteListedInRegistrationOrder()
    {
        using CoapServer server = new(LoopbackServer.Options());
        server.MapGet("/b", Ok);
        server.MapGet("/a/{id}", Ok);
        server.MapPut("/b", Ok);
        server.MapDelete("/a/{id}", Ok);
        server.MapPost("/c", Ok);
        server.MapFetch("/c", Ok);
        server.MapPatch("/c", Ok);
        server.MapIPatch("/c", Ok);

        server.Routes.Should().Equal("/.well-known/core", "/b", "/a/{id}", "/c");
    }

    [Theory]
    [InlineData("two words")]
    [InlineData("")]
    [InlineData("quo\"te")]
    public void AResourceTypeOrInterfaceWithASpaceOrQuoteOrNothingIsRejected(string value)
    {
        using CoapServer server = new(LoopbackServer.Options());
        CoapRouteBuilder route = server.MapGet("/x", Ok);

        route.Invoking(r => r.WithResourceType(value)).Should().Throw<ArgumentException>();
        route.Invoking(r => r.WithInterface(value)).Should().Throw<ArgumentException>();
    }

    [Fact]
    public async Task MappingAfterTheServerStartedIsRejected()
    {
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapGet("/x", Ok));

        server.Server.Invoking(s => s.MapGet("/y", Ok)).Should().Throw<InvalidOperationException>();
        server.Server.Invoking(s => s.MapPut("/x", Ok)).Should().Throw<InvalidOperationException>();
        server.Server.Invoking(s => s.MapResource("/z", new CoapResourceTests.Lamp())).Should().Throw<InvalidOperationException>();
        server.Server.Routes.Should().Equal("/.well-known/core", "/x");
    }

    [Fact]
    public async Task MappingAfterTheServerStoppedIsRejected()
    {
        CoapServer server = new(LoopbackServer.Options());
        server.Start();
        await server.StopAsync();

        server.Invoking(s => s.MapGet("/y", Ok)).Should().Throw<InvalidOperationException>();
        await server.DisposeAsync();
    }

    [Fact]
    public async Task StartingTwiceIsRejected()
    {
        await using LoopbackServer server = LoopbackServer.Start(_ => { });

        server.Server.Invoking(s => s.Start()).Should().Throw<InvalidOperationException>();
        await server.Server.Invoking(s => s.StartAsync()).Should().ThrowAsync<InvalidOperationException>();
        server.Server.IsRunning.Should().BeTrue();
    }

    [Fact]
    public void AnEndpointThatCannotBeBoundFailsTheStartAndLeavesNoSocketOpen()
    {
        using CoapServer first = new(LoopbackServer.Options());
        first.Start();
        IPEndPoint taken = first.LocalEndPoints[0];
        using CoapServer second = new(new CoapServerOptions().Listen("coap", new IPEndPoint(IPAddress.Loopback, 0)).Listen("coap", taken));

        second.Invoking(s => s.Start()).Should().Throw<System.Net.Sockets.SocketException>();

        second.IsRunning.Should().BeFalse();
        second.LocalEndPoints.Should().BeEmpty("the endpoint bound before the failure was closed again");
    }

    [Fact]
    public void OptionsOutOfRangeAreRejectedWithTheirName()
    {
        FluentActions.Invoking(() => new CoapServer(new CoapServerOptions { MaxPendingRequests = 0 })).Should().Throw<ArgumentException>().Which.ParamName.Should().Be("MaxPendingRequests");
        FluentActions.Invoking(() => new CoapServer(new CoapServerOptions { MaxDegreeOfParallelism = 0 })).Should().Throw<ArgumentException>().Which.ParamName.Should().Be("MaxDegreeOfParallelism");
        FluentActions.Invoking(() => new CoapServer(new CoapServerOptions { Endpoint = new CoapEndpointOptions { SeparateResponseDelay = TimeSpan.Zero } })).Should().Throw<ArgumentException>().Which.ParamName.Should().Be("SeparateResponseDelay");
        FluentActions.Invoking(() => new CoapServer(new CoapServerOptions { LoadSheddingMaxAge = TimeSpan.FromSeconds(-1) })).Should().Throw<ArgumentException>().Which.ParamName.Should().Be("LoadSheddingMaxAge");
    }
}
