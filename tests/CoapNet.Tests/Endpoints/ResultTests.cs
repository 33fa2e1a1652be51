using System.Text.Json;
using CoapNet.Endpoints;
using CoapNet.Messages;

namespace CoapNet.Tests.Endpoints;

/// <summary>Returned objects negotiated by Accept (JSON, CBOR, 4.06), typed results, and the implicit codes of each method.</summary>
public sealed class ResultTests : IDisposable
{
    private static readonly Lamp Desk = new(1, "desk", true, 0.5);
    private readonly HandlerHost _host = new();

    public void Dispose() => _host.Dispose();

    [Fact]
    public void AnObjectIsCborWhenTheRequestAcceptsCborAndWhenItNamesNoFormat()
    {
        _host.Server.MapGet("/lamps/{id:int}", (int id) => Desk with { Id = id });

        CoapMessage cbor = _host.Send(CoapCode.Get, "/lamps/5", r => r.Accept = CoapContentFormat.Cbor);
        CoapMessage unnamed = _host.Send(CoapCode.Get, "/lamps/6");

        cbor.ContentFormat.Should().Be(CoapContentFormat.Cbor);
        CoapCbor.Deserialize<Lamp>(cbor.Payload).Should().Be(Desk with { Id = 5 });
        unnamed.ContentFormat.Should().Be(CoapContentFormat.Cbor, "CBOR is the default format");
        CoapCbor.Deserialize<Lamp>(unnamed.Payload).Should().Be(Desk with { Id = 6 });
    }

    [Fact]
    public void TheCborOfAnObjectIsAMapKeyedByItsPropertyNames()
    {
        _host.Server.MapGet("/desk", () => Desk);

        CoapMessage response = _host.Send(CoapCode.Get, "/desk");

        // {"Id": 1, "Name": "desk", "On": true, "Brightness": 0.5}, by RFC 8949's encoding rules.
        Convert.ToHexString(response.Payload.Span).Should().Be(Convert.ToHexString(ExpectedDeskCbor()));
    }

    [Fact]
    public void AnObjectOnlyCoapResultsContentNamesHasACborContractToo()
    {
        _host.Server.MapGet("/owner", () => CoapResults.Content(new LampOwner("ada", 3)));

        CoapMessage cbor = _host.Send(CoapCode.Get, "/owner", r => r.Accept = CoapContentFormat.Cbor);
        CoapMessage json = _host.Send(CoapCode.Get, "/owner", r => r.Accept = CoapContentFormat.Json);

        cbor.ContentFormat.Should().Be(CoapContentFormat.Cbor);
        CoapCbor.Deserialize<LampOwner>(cbor.Payload).Should().Be(new LampOwner("ada", 3));
        json.Code.Should().Be(CoapCode.Content, "the generator wrote the JSON metadata of the type CoapResults.Content names");
        json.GetPayloadString().Should().Be("""{"name":"ada","lamps":3}""");
    }

    [Fact]
    public void AnAcceptNeitherFormatFitsIsNotAcceptable()
    {
        _host.Server.MapGet("/desk", () => Desk);

        CoapMessage response = _host.Send(CoapCode.Get, "/desk", r => r.Accept = CoapContentFormat.TextPlain);

        response.Code.Should().Be(CoapCode.NotAcceptable);
    }

    [Fact]
    public void TheDefaultFormatCanBeJson()
    {
        using HandlerHost host = new(options => options.Handlers.DefaultContentFormat = CoapContentFormat.Json);
        host.Server.MapGet("/desk", () => Desk);

        host.Send(CoapCode.Get, "/desk").ContentFormat.Should().Be(CoapContentFormat.Json);
    }

    [Fact]
    public void DiscoveryListsTheFormatsAnEndpointProduces()
    {
        _host.Server.MapGet("/desk", () => Desk).WithResourceType("lamp");

        string links = _host.Send(CoapCode.Get, "/.well-known/core").GetPayloadString();

        links.Should().Contain("</desk>").And.Contain("rt=\"lamp\"").And.Contain("ct=\"60 50\"");
    }

    [Fact]
    public void TypedResultsCarryTheirCodesLocationsAndDiagnostics()
    {
        _host.Server.MapPost("/lamps", () => CoapResults.Created("/lamps/8?v=1", Desk with { Id = 8 }));
        _host.Server.MapDelete("/lamps/{id:int}", (int id) => id == 1 ? CoapResults.Deleted() : CoapResults.NotFound($"No lamp {id}."));
        _host.Server.MapPut("/lamps/{id:int}", (int id) => CoapResults.Problem(CoapCode.ServiceUnavailable, "Maintenance."));

        CoapMessage created = _host.Send(CoapCode.Post, "/lamps", r => r.Accept = CoapContentFormat.Json);
        CoapMessage deleted = _host.Send(CoapCode.Delete, "/lamps/1");
        CoapMessage notFound = _host.Send(CoapCode.Delete, "/lamps/2");
        CoapMessage problem = _host.Send(CoapCode.Put, "/lamps/2");

        created.Code.Should().Be(CoapCode.Created);
        created.LocationPath.Should().Be("/lamps/8");
        created.LocationQuery.Should().Be("v=1");
        created.ContentFormat.Should().Be(CoapContentFormat.Json);
        deleted.Code.Should().Be(CoapCode.Deleted);
        notFound.Code.Should().Be(CoapCode.NotFound);
        notFound.GetPayloadString().Should().Be("No lamp 2.");
        problem.Code.Should().Be(CoapCode.ServiceUnavailable);
        problem.GetPayloadString().Should().Be("Maintenance.");
        problem.ContentFormat.Should().BeNull();
    }

    [Fact]
    public void NoResultIsTheMethodsSuccessCode()
    {
        int calls = 0;
        _host.Server.MapGet("/ping", () => { calls++; });
        _host.Server.MapPut("/ping", () => { calls++; });
        _host.Server.MapDelete("/ping", async () => { calls++; await Task.CompletedTask; });

        _host.Send(CoapCode.Get, "/ping").Code.Should().Be(CoapCode.Content);
        _host.Send(CoapCode.Put, "/ping").Code.Should().Be(CoapCode.Changed);
        _host.Send(CoapCode.Delete, "/ping").Code.Should().Be(CoapCode.Deleted);
        calls.Should().Be(3);
    }

    [Fact]
    public void AnAsyncHandlersObjectIsNegotiatedLikeASynchronousOnes()
    {
        TaskCompletionSource<Lamp> gate = new();
        _host.Server.MapGet("/later", async () => await gate.Task);

        _host.Server.Start();
        _host.Peer.Send(Request(1), HandlerHost.ServerAddress);
        _host.Settle();
        gate.SetResult(Desk);
        _host.Settle();

        CoapMessage response = _host.Peer.Received.Select(d => d.Parsed).Last();
        response.Code.Should().Be(CoapCode.Content);
        response.ContentFormat.Should().Be(CoapContentFormat.Json);
        JsonSerializer.Deserialize(response.Payload.Span, EndpointJsonContext.Default.Lamp).Should().Be(Desk);

        static CoapMessage Request(ushort id)
        {
            CoapMessage request = HandlerHost.Request(CoapCode.Get, "/later");
            request.MessageId = id;
            request.Token = new byte[] { 0x51 };
            request.Accept = CoapContentFormat.Json;
            return request;
        }
    }

    [Fact]
    public void ALargeObjectGoesBlockWiseUnchanged()
    {
        Lamp[] many = [.. Enumerable.Range(0, 100).Select(i => Desk with { Id = i })];
        _host.Server.MapGet("/many", () => many);

        CoapMessage first = _host.Send(CoapCode.Get, "/many", r => r.Accept = CoapContentFormat.Json);

        first.Block2.Should().NotBeNull("RFC 7959: the block-wise stage cuts a typed result like any other body");
        first.Block2!.Value.More.Should().BeTrue();
        first.Payload.Length.Should().Be(first.Block2.Value.Size);
        first.Size2.Should().Be((uint)JsonSerializer.SerializeToUtf8Bytes(many, EndpointJsonContext.Default.LampArray).Length);
    }

    [Fact]
    public void DeeplyNestedCborIsABadRequestNotAStackOverflow()
    {
        int depth = -1;
        _host.Server.MapPost("/trees", (Tree tree) => depth = tree.Depth());
        System.Formats.Cbor.CborWriter writer = new();
        for (int i = 0; i < 200; i++)
        {
            writer.WriteStartMap(1);
            writer.WriteTextString("Children");
            writer.WriteStartArray(1);
        }

        writer.WriteStartMap(0);
        writer.WriteEndMap();
        for (int i = 0; i < 200; i++)
        {
            writer.WriteEndArray();
            writer.WriteEndMap();
        }

        CoapMessage response = _host.Send(CoapCode.Post, "/trees", r =>
        {
            r.ContentFormat = CoapContentFormat.Cbor;
            r.Payload = writer.Encode();
        });

        // The generated reader recurses once per level; CborReader stops at 64 levels, whatever the peer sends.
        response.Code.Should().Be(CoapCode.BadRequest);
        response.GetPayloadString().Should().Contain("'tree'").And.Contain("depth");
        depth.Should().Be(-1);
    }

    [Fact]
    public void AHandlerThatThrowsIsAServerErrorNotACrash()
    {
        _host.Server.MapGet("/broken/{id:int}", (int id) => id == 0 ? throw new InvalidOperationException("broken") : Desk);

        _host.Send(CoapCode.Get, "/broken/0").Code.Should().Be(CoapCode.InternalServerError);
        _host.Send(CoapCode.Get, "/broken/1").Code.Should().Be(CoapCode.Content);
    }

    private static byte[] ExpectedDeskCbor()
    {
        System.Formats.Cbor.CborWriter writer = new();
        writer.WriteStartMap(4);
        writer.WriteTextString("Id");
        writer.WriteInt32(1);
        writer.WriteTextString("Name");
        writer.WriteTextString("desk");
        writer.WriteTextString("On");
        writer.WriteBoolean(true);
        writer.WriteTextString("Brightness");
        writer.WriteDouble(0.5);
        writer.WriteEndMap();
        return writer.Encode();
    }
}
