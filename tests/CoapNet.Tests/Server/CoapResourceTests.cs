using System.Net;
using CoapNet.Client;
using CoapNet.LinkFormat;
using CoapNet.Messages;
using CoapNet.Server;

namespace CoapNet.Tests.Server;

/// <summary>Resources as classes: <see cref="CoapServer.MapResource"/> maps the methods a <see cref="CoapResource"/> overrides, sync or async, and announces its properties.</summary>
public sealed class CoapResourceTests : IAsyncDisposable
{
    private readonly CoapClient _client = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) });

    public ValueTask DisposeAsync() => _client.DisposeAsync();

    [Fact]
    public async Task TheOverriddenSynchronousAndAsynchronousMethodsAnswer()
    {
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapResource("/lamp", new Lamp()));

        CoapResponse before = await _client.GetAsync(server.Uri("/lamp"));
        CoapResponse put = _client.Put(server.Uri("/lamp"), "on"u8.ToArray(), CoapContentFormat.TextPlain);
        CoapResponse after = _client.Get(server.Uri("/lamp"));

        before.Code.Should().Be(CoapCode.Content);
        before.GetPayloadString().Should().Be("off");
        put.Code.Should().Be(CoapCode.Changed);
        after.GetPayloadString().Should().Be("on");
    }

    [Fact]
    public async Task AMethodTheResourceDoesNotOverrideIsMethodNotAllowed()
    {
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapResource("/lamp", new Lamp()));

        CoapResponse delete = await _client.DeleteAsync(server.Uri("/lamp"));
        CoapResponse post = await _client.PostAsync(server.Uri("/lamp"), "x"u8.ToArray(), CoapContentFormat.TextPlain);

        delete.Code.Should().Be(CoapCode.MethodNotAllowed);
        delete.GetPayloadString().Should().Be("Allowed: GET, PUT");
        post.Code.Should().Be(CoapCode.MethodNotAllowed);
    }

    [Fact]
    public async Task ASubclassOfAResourceKeepsItsBaseMethodsAndAddsItsOwn()
    {
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapResource("/lamp", new DimmableLamp()));

        CoapResponse post = await _client.PostAsync(server.Uri("/lamp"), "50"u8.ToArray(), CoapContentFormat.TextPlain);
        CoapResponse get = await _client.GetAsync(server.Uri("/lamp"));

        post.Code.Should().Be(CoapCode.Changed);
        get.GetPayloadString().Should().Be("dimmed to 50");
        (await _client.DeleteAsync(server.Uri("/lamp"))).GetPayloadString().Should().Be("Allowed: GET, POST, PUT");
    }

    [Fact]
    public async Task DiscoveryAnnouncesTheResourcesProperties()
    {
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapResource("/lamp", new Lamp()));

        CoapLink lamp = (await _client.DiscoverAsync(server.Uri("/"))).Should().ContainSingle().Subject;

        lamp.Target.Should().Be("/lamp");
        lamp.Title.Should().Be("Desk lamp");
        lamp.ResourceTypes.Should().Equal("light", "switch");
        lamp.InterfaceDescriptions.Should().Equal("actuator");
        lamp.ContentFormats.Should().Equal(CoapContentFormat.TextPlain);
        lamp.IsObservable.Should().BeTrue();
    }

    [Fact]
    public async Task TheResourcesFormatsDecideNotAcceptableAndUnsupportedContentFormat()
    {
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapResource("/lamp", new Lamp()));
        CoapMessage wantsJson = CoapMessage.CreateRequest(CoapCode.Get, server.Uri("/lamp"));
        wantsJson.Accept = CoapContentFormat.Json;

        CoapResponse notAcceptable = await _client.SendAsync(wantsJson, server.EndPoint);
        CoapResponse unsupported = await _client.PutAsync(server.Uri("/lamp"), "{}"u8.ToArray(), CoapContentFormat.Json);

        notAcceptable.Code.Should().Be(CoapCode.NotAcceptable);
        unsupported.Code.Should().Be(CoapCode.UnsupportedContentFormat);
    }

    [Fact]
    public async Task AResourceUnderAParameterizedTemplateSeesTheRouteValues()
    {
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapResource("/rooms/{room}", new Room()));

        (await _client.GetAsync(server.Uri("/rooms/kitchen"))).GetPayloadString().Should().Be("room kitchen");
    }

    [Fact]
    public void AResourceThatOverridesNoMethodIsRejected()
    {
        using CoapServer server = new(LoopbackServer.Options());

        server.Invoking(s => s.MapResource("/nothing", new Inert())).Should().Throw<ArgumentException>().WithMessage("*Inert overrides no method*");
    }

    /// <summary>GET synchronously, PUT asynchronously; DELETE and POST are not overridden.</summary>
    internal class Lamp : CoapResource
    {
        private volatile string _state = "off";

        public override string? Title => "Desk lamp";

        public override IReadOnlyList<string> ResourceTypes => ["light", "switch"];

        public override IReadOnlyList<string> InterfaceDescriptions => ["actuator"];

        public override IReadOnlyList<ushort> ContentFormats => [CoapContentFormat.TextPlain];

        public override IReadOnlyList<ushort> AcceptedContentFormats => [CoapContentFormat.TextPlain];

        public override bool IsObservable => true;

        protected string State
        {
            get => _state;
            set => _state = value;
        }

        public override CoapResponse Get(CoapRequest request) => CoapResponse.Content(State);

        public override async ValueTask<CoapResponse> PutAsync(CoapRequest request, CancellationToken cancellationToken)
        {
            await Task.Yield();
            State = request.GetPayloadString();
            return new CoapResponse(CoapCode.Changed);
        }
    }

    private sealed class DimmableLamp : Lamp
    {
        public override CoapResponse Post(CoapRequest request)
        {
            State = "dimmed to " + request.GetPayloadString();
            return new CoapResponse(CoapCode.Changed);
        }
    }

    private sealed class Room : CoapResource
    {
        public override ValueTask<CoapResponse> GetAsync(CoapRequest request, CancellationToken cancellationToken)
            => new(CoapResponse.Content("room " + request.GetRouteValue("room")));
    }

    private sealed class Inert : CoapResource
    {
        public override string? Title => "Does nothing";
    }
}
