using System.Net;
using CoapNet.Client;
using CoapNet.LinkFormat;
using CoapNet.Messages;
using CoapNet.Serialization;
using CoapNet.Server;

namespace CoapNet.Tests.Server;

/// <summary>
/// What happens to a request between the socket and the handler, over loopback with our client:
/// option checks, content negotiation, routing with parameters, handler failures, and what a
/// handler sees of the request.
/// </summary>
public sealed class RequestPipelineTests : IAsyncDisposable
{
    private readonly CoapClient _client = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) });

    public ValueTask DisposeAsync() => _client.DisposeAsync();

    [Fact]
    public async Task AHandlerThatThrowsIsAnsweredWithInternalServerErrorAndTheNextRequestIsServed()
    {
        await using LoopbackServer server = LoopbackServer.Start(s =>
        {
            s.MapGet("/fails", _ => throw new InvalidOperationException("broken"));
            s.MapGet("/fails-later", async (_, cancellationToken) =>
            {
                await Task.Yield();
                throw new InvalidOperationException("broken later");
            });
            s.MapGet("/returns-null", _ => null!);
            s.MapGet("/ok", _ => CoapResponse.Content("fine"));
        });

        (await _client.GetAsync(server.Uri("/fails"))).Code.Should().Be(CoapCode.InternalServerError);
        (await _client.GetAsync(server.Uri("/ok"))).GetPayloadString().Should().Be("fine");
        (await _client.GetAsync(server.Uri("/fails-later"))).Code.Should().Be(CoapCode.InternalServerError);
        (await _client.GetAsync(server.Uri("/returns-null"))).Code.Should().Be(CoapCode.InternalServerError);
        CoapResponse next = await _client.GetAsync(server.Uri("/ok"));

        next.Code.Should().Be(CoapCode.Content);
        next.GetPayloadString().Should().Be("fine");
        (await _client.GetAsync(server.Uri("/fails"))).Payload.IsEmpty.Should().BeTrue("an exception's message is not sent to the client");
    }

    [Fact]
    public async Task AnUnrecognizedCriticalOptionIsBadOptionAndTheHandlerIsNotCalled()
    {
        int calls = 0;
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapGet("/x", _ =>
        {
            Interlocked.Increment(ref calls);
            return CoapResponse.Content("x");
        }));
        CoapMessage critical = CoapMessage.CreateRequest(CoapCode.Get, server.Uri("/x"));
        critical.Options.Add((CoapOptionNumber)2049, "?");
        CoapMessage elective = CoapMessage.CreateRequest(CoapCode.Get, server.Uri("/x"));
        elective.Options.Add((CoapOptionNumber)2048, "?");

        CoapResponse rejected = await _client.SendAsync(critical, server.EndPoint);
        CoapResponse accepted = await _client.SendAsync(elective, server.EndPoint);

        rejected.Code.Should().Be(CoapCode.BadOption);
        rejected.GetPayloadString().Should().Contain("2049");
        accepted.Code.Should().Be(CoapCode.Content);
        calls.Should().Be(1);
    }

    [Fact]
    public async Task ARepeatedCriticalOptionThatMayNotRepeatIsBadOption()
    {
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapGet("/x", _ => CoapResponse.Content("x")));
        CoapMessage request = CoapMessage.CreateRequest(CoapCode.Get, server.Uri("/x"));
        request.Options.Add(CoapOptionNumber.Accept, 0u);
        request.Options.Add(CoapOptionNumber.Accept, 50u);

        CoapResponse response = await _client.SendAsync(request, server.EndPoint);

        response.Code.Should().Be(CoapCode.BadOption);
    }

    [Fact]
    public async Task AProxyUriOrProxySchemeIsProxyingNotSupported()
    {
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapGet("/x", _ => CoapResponse.Content("x")));
        CoapMessage proxyUri = CoapMessage.CreateRequest(CoapCode.Get, server.Uri("/x"));
        proxyUri.Options.Add(CoapOptionNumber.ProxyUri, "coap://example.org/x");
        CoapMessage proxyScheme = CoapMessage.CreateRequest(CoapCode.Get, server.Uri("/x"));
        proxyScheme.Options.Add(CoapOptionNumber.ProxyScheme, "http");

        (await _client.SendAsync(proxyUri, server.EndPoint)).Code.Should().Be(CoapCode.ProxyingNotSupported);
        (await _client.SendAsync(proxyScheme, server.EndPoint)).Code.Should().Be(CoapCode.ProxyingNotSupported);
    }

    [Fact]
    public async Task AnAcceptOutsideTheFormatsTheRouteProducesIsNotAcceptable()
    {
        await using LoopbackServer server = LoopbackServer.Start(s =>
        {
            s.MapGet("/reading", _ => CoapResponse.Content("{}"u8.ToArray(), CoapContentFormat.Json)).Produces(CoapContentFormat.Json, CoapContentFormat.Cbor);
            s.MapGet("/anything", _ => CoapResponse.Content("any"));
        });

        CoapResponse text = await SendWithAcceptAsync(server, "/reading", CoapContentFormat.TextPlain);
        CoapResponse json = await SendWithAcceptAsync(server, "/reading", CoapContentFormat.Json);
        CoapResponse cbor = await SendWithAcceptAsync(server, "/reading", CoapContentFormat.Cbor);
        CoapResponse undeclared = await SendWithAcceptAsync(server, "/anything", CoapContentFormat.Cbor);

        text.Code.Should().Be(CoapCode.NotAcceptable);
        json.Code.Should().Be(CoapCode.Content);
        cbor.Code.Should().Be(CoapCode.Content, "the route's handler decides how to honour an Accept it declared");
        undeclared.Code.Should().Be(CoapCode.Content, "a route that declares no formats is not checked");
    }

    [Fact]
    public async Task APayloadInAContentFormatTheRouteDoesNotAcceptIsUnsupportedContentFormat()
    {
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapPut("/config", _ => new CoapResponse(CoapCode.Changed)).Accepts(CoapContentFormat.Json, CoapContentFormat.Cbor));

        CoapResponse text = await _client.PutAsync(server.Uri("/config"), "x"u8.ToArray(), CoapContentFormat.TextPlain);
        CoapResponse unlabelled = await _client.PutAsync(server.Uri("/config"), "x"u8.ToArray());
        CoapResponse json = await _client.PutAsync(server.Uri("/config"), "{}"u8.ToArray(), CoapContentFormat.Json);
        CoapResponse empty = await _client.PutAsync(server.Uri("/config"), ReadOnlyMemory<byte>.Empty);

        text.Code.Should().Be(CoapCode.UnsupportedContentFormat);
        text.GetPayloadString().Should().Contain("50").And.Contain("60");
        unlabelled.Code.Should().Be(CoapCode.UnsupportedContentFormat, "a payload without Content-Format is in no accepted format");
        json.Code.Should().Be(CoapCode.Changed);
        empty.Code.Should().Be(CoapCode.Changed, "without a payload there is no format to check");
    }

    [Fact]
    public async Task RouteParametersCaptureOneSegmentEach()
    {
        await using LoopbackServer server = LoopbackServer.Start(s =>
        {
            s.MapGet("/store/{name}", request => CoapResponse.Content("name=" + request.GetRouteValue("name")));
            s.MapGet("/rooms/{room}/sensors/{sensor}", request => CoapResponse.Content($"{request.RouteValues["room"]}|{request.RouteValues["sensor"]}"));
        });

        (await _client.GetAsync(server.Uri("/store/lamp"))).GetPayloadString().Should().Be("name=lamp");
        (await _client.GetAsync(server.Uri("/store/a%20b%2Fc"))).GetPayloadString().Should().Be("name=a b/c", "a segment is captured decoded, '/' included");
        (await _client.GetAsync(server.Uri("/rooms/kitchen/sensors/t1"))).GetPayloadString().Should().Be("kitchen|t1");
        (await _client.GetAsync(server.Uri("/store"))).Code.Should().Be(CoapCode.NotFound, "a parameter needs a segment");
        (await _client.GetAsync(server.Uri("/store/lamp/extra"))).Code.Should().Be(CoapCode.NotFound, "a parameter captures one segment only");
    }

    [Fact]
    public async Task ACatchAllParameterCapturesTheRestOfThePath()
    {
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapGet("/files/{*path}", request => CoapResponse.Content("[" + request.GetRouteValue("path") + "]")));

        (await _client.GetAsync(server.Uri("/files/a/b/c.txt"))).GetPayloadString().Should().Be("[a/b/c.txt]");
        (await _client.GetAsync(server.Uri("/files/readme"))).GetPayloadString().Should().Be("[readme]");
        (await _client.GetAsync(server.Uri("/files"))).GetPayloadString().Should().Be("[]", "a catch-all may capture nothing");
        (await _client.GetAsync(server.Uri("/other/a"))).Code.Should().Be(CoapCode.NotFound);
    }

    [Fact]
    public async Task ALiteralSegmentWinsOverAParameterWhichWinsOverACatchAllWithBacktracking()
    {
        await using LoopbackServer server = LoopbackServer.Start(s =>
        {
            s.MapGet("/a/special", _ => CoapResponse.Content("literal"));
            s.MapGet("/a/{x}", _ => CoapResponse.Content("parameter"));
            s.MapGet("/a/{x}/c", request => CoapResponse.Content("parameter then c, x=" + request.GetRouteValue("x")));
            s.MapGet("/a/special/d", _ => CoapResponse.Content("literal then d"));
            s.MapGet("/{*rest}", request => CoapResponse.Content("catch-all " + request.GetRouteValue("rest")));
        });

        (await _client.GetAsync(server.Uri("/a/special"))).GetPayloadString().Should().Be("literal");
        (await _client.GetAsync(server.Uri("/a/other"))).GetPayloadString().Should().Be("parameter");
        (await _client.GetAsync(server.Uri("/a/special/d"))).GetPayloadString().Should().Be("literal then d");
        (await _client.GetAsync(server.Uri("/a/special/c"))).GetPayloadString().Should().Be("parameter then c, x=special", "the literal branch dead-ends, so the parameter branch is tried");
        (await _client.GetAsync(server.Uri("/b/c"))).GetPayloadString().Should().Be("catch-all b/c");
    }

    [Fact]
    public async Task TheHandlerSeesTheMethodPathQueryPayloadFormatsAndSender()
    {
        CoapRequest seen = default;
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapPost("/sensors/{id}", request =>
        {
            seen = request;
            return new CoapResponse(CoapCode.Changed);
        }));
        CoapMessage message = CoapMessage.CreateRequest(CoapCode.Post, server.Uri("/sensors/7?unit=C&verbose"));
        message.SetPayload("21.5");
        message.ContentFormat = CoapContentFormat.TextPlain;
        message.Accept = CoapContentFormat.Json;

        (await _client.SendAsync(message, server.EndPoint)).Code.Should().Be(CoapCode.Changed);

        seen.Should().NotBe(default(CoapRequest), "the handler ran");
        seen.Method.Should().Be(CoapCode.Post, "the request stays readable after the handler returned");
        seen.Path.Should().Be("/sensors/7");
        seen.GetRouteValue("id").Should().Be("7");
        seen.GetRouteValue("other").Should().BeNull();
        seen.GetQueryValue("unit").Should().Be("C");
        seen.GetQueryValue("verbose").Should().Be(string.Empty);
        seen.GetQueryValue("missing").Should().BeNull();
        seen.GetPayloadString().Should().Be("21.5");
        seen.ContentFormat.Should().Be(CoapContentFormat.TextPlain);
        seen.Accept.Should().Be(CoapContentFormat.Json);
        seen.RemoteEndPoint.Should().Be(_client.LocalEndPoint);
    }

    [Fact]
    public void ADefaultRequestIsNoRequestAndSaysSo()
    {
        CoapRequest none = default;

        none.ToString().Should().Be("(none)");
        none.Invoking(r => r.Path).Should().Throw<InvalidOperationException>().WithMessage("*default value*");
        none.Invoking(r => r.GetQueryValue("a")).Should().Throw<InvalidOperationException>();
    }

    [Fact]
    public async Task ARetransmittedConfirmableRequestIsAnsweredAgainWithoutCallingTheHandlerTwice()
    {
        int calls = 0;
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapPost("/counter", _ => CoapResponse.Content("call " + Interlocked.Increment(ref calls))));
        using RawPeer peer = new(server.EndPoint);
        byte[] request = CoapMessageSerializer.Udp.Serialize(peer.Request(CoapMessageType.Confirmable, CoapCode.Post, "/counter", token: 0x42));

        await peer.SendAsync(request);
        RawPeer.Received first = await peer.ReceiveAsync();
        await peer.SendAsync(request);
        RawPeer.Received second = await peer.ReceiveAsync();

        first.Message.Type.Should().Be(CoapMessageType.Acknowledgement);
        first.Message.GetPayloadString().Should().Be("call 1");
        second.Bytes.Should().Equal(first.Bytes, "a duplicate gets the same ACK again (RFC 7252 section 4.5)");
        calls.Should().Be(1);
    }

    [Fact]
    public async Task ANonConfirmableRequestIsAnsweredWithANonConfirmableResponseCarryingItsToken()
    {
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapGet("/x", _ => CoapResponse.Content("x")));
        using RawPeer peer = new(server.EndPoint);
        CoapMessage request = peer.Request(CoapMessageType.NonConfirmable, CoapCode.Get, "/x", token: 0x77);

        await peer.SendAsync(request);
        CoapMessage response = (await peer.ReceiveAsync()).Message;

        response.Type.Should().Be(CoapMessageType.NonConfirmable);
        response.Code.Should().Be(CoapCode.Content);
        response.Token.ToArray().Should().Equal(0x77);
        response.GetPayloadString().Should().Be("x");
    }

    [Fact]
    public async Task OurNonConfirmableClientIsServedToo()
    {
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapGet("/x", _ => CoapResponse.Content("x")));
        await using CoapClient client = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0), UseNonConfirmable = true });

        CoapResponse response = await client.GetAsync(server.Uri("/x"));

        response.Message.Type.Should().Be(CoapMessageType.NonConfirmable);
        response.GetPayloadString().Should().Be("x");
    }

    [Fact]
    public async Task OurClientDiscoversTheRoutesSynchronouslyAndAsynchronously()
    {
        await using LoopbackServer server = LoopbackServer.Start(s =>
        {
            s.MapGet("/sensors/temp", _ => CoapResponse.Content("21")).WithResourceType("temperature-c").WithInterface("sensor").Produces(CoapContentFormat.TextPlain).WithSize(8).Observable();
            s.MapGet("/actuators/led", _ => CoapResponse.Content("off")).WithTitle("LED \"1\"").WithResourceType("light", "led");
            s.MapGet("/hidden", _ => CoapResponse.Content("h")).HideFromDiscovery();
        });

        IReadOnlyList<CoapLink> all = _client.Discover(server.Uri("/"));
        IReadOnlyList<CoapLink> lights = await _client.DiscoverAsync(server.Uri("/"), "rt=light");

        all.Select(link => link.Target).Should().Equal("/sensors/temp", "/actuators/led");
        all[0].ResourceTypes.Should().Equal("temperature-c");
        all[0].InterfaceDescriptions.Should().Equal("sensor");
        all[0].ContentFormats.Should().Equal(CoapContentFormat.TextPlain);
        all[0].Size.Should().Be(8u);
        all[0].IsObservable.Should().BeTrue();
        all[1].Title.Should().Be("LED \"1\"", "a quote in a title survives the round trip");
        all[1].ResourceTypes.Should().Equal("light", "led");
        lights.Select(link => link.Target).Should().Equal("/actuators/led");
    }

    private Task<CoapResponse> SendWithAcceptAsync(LoopbackServer server, string path, ushort accept)
    {
        CoapMessage request = CoapMessage.CreateRequest(CoapCode.Get, server.Uri(path));
        request.Accept = accept;
        return _client.SendAsync(request, server.EndPoint);
    }
}
