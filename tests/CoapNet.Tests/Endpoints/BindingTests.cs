using System.Text;
using CoapNet.Endpoints;
using CoapNet.Messages;
using CoapNet.Server;
using Microsoft.Extensions.DependencyInjection;

namespace CoapNet.Tests.Endpoints;

/// <summary>Each binding source of a handler with parameters, and each binding failure: 4.00 with a diagnostic naming the parameter.</summary>
public sealed class BindingTests : IDisposable
{
    private readonly HandlerHost _host = new();

    public void Dispose() => _host.Dispose();

    [Fact]
    public void ARouteValueIsBoundByItsConstraintAndAnotherSegmentIsNotFound()
    {
        _host.Server.MapGet("/lamps/{id:int}", (int id) => $"lamp {id}");

        CoapMessage found = _host.Send(CoapCode.Get, "/lamps/7");
        CoapMessage missing = _host.Send(CoapCode.Get, "/lamps/seven");

        found.Code.Should().Be(CoapCode.Content);
        found.GetPayloadString().Should().Be("lamp 7");
        found.ContentFormat.Should().Be(CoapContentFormat.TextPlain);
        missing.Code.Should().Be(CoapCode.NotFound, "the constraint keeps text from the route, as no such resource exists");
    }

    [Fact]
    public void ARouteValueThatDoesNotParseIsABadRequestNamingTheParameter()
    {
        _host.Server.MapGet("/rooms/{number}", (long number) => number.ToString(System.Globalization.CultureInfo.InvariantCulture));

        CoapMessage response = _host.Send(CoapCode.Get, "/rooms/twelve");

        response.Code.Should().Be(CoapCode.BadRequest);
        response.ContentFormat.Should().BeNull("a diagnostic payload has no Content-Format (RFC 7252 section 5.5.2)");
        response.GetPayloadString().Should().Contain("'number'").And.Contain("Int64").And.Contain("twelve");
    }

    [Fact]
    public void SimpleTypesBindFromRouteValuesByTheirOwnParsing()
    {
        Guid id = Guid.NewGuid();
        _host.Server.MapGet("/things/{id:guid}/{on:bool}/{level:double}/{color}", (Guid id, bool on, double level, LampColor color)
            => string.Create(System.Globalization.CultureInfo.InvariantCulture, $"{id} {on} {level} {color}"));

        CoapMessage response = _host.Send(CoapCode.Get, $"/things/{id}/true/0.25/warm");

        response.GetPayloadString().Should().Be($"{id} True 0.25 Warm");
    }

    [Fact]
    public void AnEnumValueThatIsNoMemberIsABadRequestListingTheMembers()
    {
        _host.Server.MapGet("/paint/{color}", (LampColor color) => color.ToString());

        CoapMessage response = _host.Send(CoapCode.Get, "/paint/blue");

        response.Code.Should().Be(CoapCode.BadRequest);
        response.GetPayloadString().Should().Contain("'color'").And.Contain("White, Warm, Red");
    }

    [Fact]
    public void QueryArgumentsBindByNameOrByFromQueryAndOptionalOnesMayBeAbsent()
    {
        _host.Server.MapGet("/search", (string name, int? page, [FromQuery(Name = "q")] string? text)
            => $"{name}|{page?.ToString(System.Globalization.CultureInfo.InvariantCulture) ?? "none"}|{text ?? "none"}");

        _host.Send(CoapCode.Get, "/search?name=desk&page=2&q=lit").GetPayloadString().Should().Be("desk|2|lit");
        _host.Send(CoapCode.Get, "/search?name=desk").GetPayloadString().Should().Be("desk|none|none");
    }

    [Fact]
    public void AMissingRequiredQueryArgumentIsABadRequestNamingIt()
    {
        _host.Server.MapGet("/search", (string name, int? page) => name);

        CoapMessage missing = _host.Send(CoapCode.Get, "/search?page=1");
        CoapMessage malformed = _host.Send(CoapCode.Get, "/search?name=a&page=first");

        missing.Code.Should().Be(CoapCode.BadRequest);
        missing.GetPayloadString().Should().Contain("'name' is required").And.Contain("Uri-Query");
        malformed.Code.Should().Be(CoapCode.BadRequest);
        malformed.GetPayloadString().Should().Contain("'page'").And.Contain("first");
    }

    [Fact]
    public void TheRequestThePeerAndTheCancellationTokenAreBound()
    {
        CancellationToken seen = default;
        _host.Server.MapGet("/who", async (CoapRequest request, Channels.CoapPeer peer, CancellationToken cancellationToken) =>
        {
            seen = cancellationToken;
            await Task.CompletedTask;
            return $"{request.Method.Name} {request.Path} from {peer.EndPoint}";
        });

        CoapMessage response = _host.Send(CoapCode.Get, "/who");

        response.GetPayloadString().Should().Be("GET /who from 10.0.0.1:5683");
        seen.CanBeCanceled.Should().BeTrue("an async handler gets the server's token, canceled when a stop stops waiting");
    }

    [Fact]
    public void AJsonPayloadIsBoundByItsContentFormat()
    {
        _host.Server.MapPost("/lamps", (Lamp lamp) => CoapResults.Created($"/lamps/{lamp.Id}"));

        CoapMessage response = _host.Send(CoapCode.Post, "/lamps", r =>
        {
            r.ContentFormat = CoapContentFormat.Json;
            r.Payload = Encoding.UTF8.GetBytes("""{"Id":9,"Name":"hall","On":false,"Brightness":1}""");
        });

        response.Code.Should().Be(CoapCode.Created);
        response.LocationPath.Should().Be("/lamps/9");
    }

    [Fact]
    public void ACborPayloadIsBoundByItsContentFormat()
    {
        Lamp? received = null;
        _host.Server.MapPut("/lamps/{id:int}", (int id, Lamp lamp) => received = lamp with { Id = id });

        CoapMessage response = _host.Send(CoapCode.Put, "/lamps/3", r =>
        {
            r.ContentFormat = CoapContentFormat.Cbor;
            r.Payload = CoapCbor.Serialize(new Lamp(0, "porch", true, 0.75));
        });

        response.Code.Should().Be(CoapCode.Changed);
        received.Should().Be(new Lamp(3, "porch", true, 0.75));
    }

    [Fact]
    public void APayloadOfAnotherFormatIsUnsupportedAndABrokenOneIsABadRequestNamingTheParameter()
    {
        _host.Server.MapPost("/lamps", (Lamp lamp) => CoapResults.Changed());

        CoapMessage text = _host.Send(CoapCode.Post, "/lamps", r =>
        {
            r.ContentFormat = CoapContentFormat.TextPlain;
            r.Payload = "lamp"u8.ToArray();
        });
        CoapMessage broken = _host.Send(CoapCode.Post, "/lamps", r =>
        {
            r.ContentFormat = CoapContentFormat.Json;
            r.Payload = "{\"Id\":"u8.ToArray();
        });
        CoapMessage badCbor = _host.Send(CoapCode.Post, "/lamps", r =>
        {
            r.ContentFormat = CoapContentFormat.Cbor;
            r.Payload = new byte[] { 0xA1, 0x62, 0x49 };
        });
        CoapMessage empty = _host.Send(CoapCode.Post, "/lamps", r => r.ContentFormat = CoapContentFormat.Json);

        text.Code.Should().Be(CoapCode.UnsupportedContentFormat);
        broken.Code.Should().Be(CoapCode.BadRequest);
        broken.GetPayloadString().Should().Contain("'lamp'");
        badCbor.Code.Should().Be(CoapCode.BadRequest);
        badCbor.GetPayloadString().Should().Contain("'lamp'");
        empty.Code.Should().Be(CoapCode.BadRequest);
        empty.GetPayloadString().Should().Contain("'lamp'").And.Contain("empty");
    }

    [Fact]
    public void PropertiesWithSettersAndJsonNamesRoundTripThroughCbor()
    {
        LampPatch? received = null;
        _host.Server.MapPatch("/lamps/{id:int}", (int id, LampPatch patch) => { received = patch; });

        CoapMessage response = _host.Send(CoapCode.Patch, "/lamps/1", r =>
        {
            r.ContentFormat = CoapContentFormat.Cbor;
            r.Payload = CoapCbor.Serialize(new LampPatch { Name = "renamed", On = null, Tags = ["a", "b"], Secret = "sent" });
        });

        response.Code.Should().Be(CoapCode.Changed);
        received!.Name.Should().Be("renamed");
        received.On.Should().BeNull();
        received.Tags.Should().Equal("a", "b");
        received.Secret.Should().Be("kept", "[JsonIgnore] leaves it out of the contract");
    }

    [Fact]
    public void RequiredAndInitOnlyMembersBindFromCborAndAnAbsentInitOnlyOneKeepsItsInitializersValue()
    {
        LampOrder? received = null;
        _host.Server.MapPost("/orders", (LampOrder order) => { received = order; });

        // {"Name": "hall"}: no Level, whose initializer gives 50.
        CoapMessage response = _host.Send(CoapCode.Post, "/orders", r =>
        {
            r.ContentFormat = CoapContentFormat.Cbor;
            r.Payload = Convert.FromHexString("A1644E616D656468616C6C");
        });

        response.Code.Should().Be(CoapCode.Changed);
        received!.Name.Should().Be("hall");
        received.Level.Should().Be(50);
    }

    [Fact]
    public void AnInitOnlyMemberTheCborMapHasOverridesItsInitializer()
    {
        LampOrder? received = null;
        _host.Server.MapPost("/orders", (LampOrder order) => { received = order; });

        CoapMessage response = _host.Send(CoapCode.Post, "/orders", r =>
        {
            r.ContentFormat = CoapContentFormat.Cbor;
            r.Payload = Cbor(("Name", "hall"), ("Level", 80));
        });

        response.Code.Should().Be(CoapCode.Changed);
        received!.Level.Should().Be(80);
    }

    [Fact]
    public void ACborMapWithoutARequiredMemberIsABadRequestNamingIt()
    {
        bool called = false;
        _host.Server.MapPost("/orders", (LampOrder order) => { called = true; });

        CoapMessage response = _host.Send(CoapCode.Post, "/orders", r =>
        {
            r.ContentFormat = CoapContentFormat.Cbor;
            r.Payload = Cbor(("Level", 80));
        });

        response.Code.Should().Be(CoapCode.BadRequest);
        response.GetPayloadString().Should().Contain("'order'").And.Contain("'Name'", "C#'s required is the payload's, in CBOR as in JSON");
        called.Should().BeFalse();
    }

    [Theory]
    [InlineData(false, false, 29, "chime")]
    [InlineData(false, true, 29, "bell")]
    [InlineData(true, false, 5, "chime")]
    [InlineData(true, true, 5, "bell")]
    public void ARecordsInitOnlyMembersTheCborMapLacksKeepInitializersThatReadItsConstructor(bool warnAt, bool sound, int expectedWarnAt, string expectedSound)
    {
        LampTimer? received = null;
        _host.Server.MapPost("/timers", (LampTimer timer) => { received = timer; });
        List<(string, object)> members = [("Lamp", "desk"), ("Minutes", 30)];
        if (warnAt)
        {
            members.Add(("WarnAt", 5));
        }

        if (sound)
        {
            members.Add(("Sound", "bell"));
        }

        CoapMessage response = _host.Send(CoapCode.Post, "/timers", r =>
        {
            r.ContentFormat = CoapContentFormat.Cbor;
            r.Payload = Cbor([.. members]);
        });

        response.Code.Should().Be(CoapCode.Changed);
        received.Should().Be(new LampTimer("desk", 30) { WarnAt = expectedWarnAt, Sound = expectedSound });
    }

    [Fact]
    public void AStructsInitOnlyMemberTheCborMapLacksKeepsItsInitializer()
    {
        List<LampDim> received = [];
        _host.Server.MapPut("/dim", (LampDim dim) => { received.Add(dim); });

        _host.Send(CoapCode.Put, "/dim", r =>
        {
            r.ContentFormat = CoapContentFormat.Cbor;
            r.Payload = Cbor(("Level", 3));
        });
        _host.Send(CoapCode.Put, "/dim", r =>
        {
            r.ContentFormat = CoapContentFormat.Cbor;
            r.Payload = Cbor(("Level", 3), ("Steps", 2));
        });

        received.Should().Equal(new LampDim { Level = 3 }, new LampDim { Level = 3, Steps = 2 });
    }

    [Fact]
    public void TextBytesAndStreamPayloadsAreBoundAsTheyAre()
    {
        _host.Server.MapPost("/text", ([FromBody] string text) => text.ToUpperInvariant());
        _host.Server.MapPost("/bytes", (byte[] body) => body.Length.ToString(System.Globalization.CultureInfo.InvariantCulture));
        _host.Server.MapPost("/stream", (Stream body) => new StreamReader(body).ReadToEnd());

        _host.Send(CoapCode.Post, "/text", r => r.Payload = "hello"u8.ToArray()).GetPayloadString().Should().Be("HELLO");
        _host.Send(CoapCode.Post, "/bytes", r => r.Payload = new byte[] { 1, 2, 3 }).GetPayloadString().Should().Be("3");
        _host.Send(CoapCode.Post, "/stream", r => r.Payload = "streamed"u8.ToArray()).GetPayloadString().Should().Be("streamed");
        _host.Send(CoapCode.Post, "/text", r => r.Payload = new byte[] { 0xFF, 0xFE }).Code.Should().Be(CoapCode.BadRequest);
    }

    /// <summary>A CBOR map of text keys to text or integer values, in the order given (RFC 8949 section 3.1).</summary>
    private static byte[] Cbor(params (string Key, object Value)[] members)
    {
        System.Formats.Cbor.CborWriter writer = new();
        writer.WriteStartMap(members.Length);
        foreach ((string key, object value) in members)
        {
            writer.WriteTextString(key);
            if (value is int number)
            {
                writer.WriteInt32(number);
            }
            else
            {
                writer.WriteTextString((string)value);
            }
        }

        writer.WriteEndMap();
        return writer.Encode();
    }
}

/// <summary>Services: a scope per request, disposed after it; registered types found without an attribute.</summary>
public sealed class ServiceBindingTests : IDisposable
{
    private readonly LampStoreData _data = new();
    private readonly ServiceProvider _services;
    private readonly HandlerHost _host;

    public ServiceBindingTests()
    {
        _services = new ServiceCollection().AddSingleton(_data).AddScoped<LampStore>().BuildServiceProvider();
        _host = new HandlerHost(options => options.Handlers.Services = _services);
    }

    public void Dispose()
    {
        _host.Dispose();
        _services.Dispose();
    }

    [Fact]
    public void ARegisteredTypeIsAServiceFromAScopeOfItsOwnPerRequest()
    {
        _host.Server.MapGet("/lamps/{id:int}", (int id, LampStore store) => store.Find(id) is { } lamp ? CoapResults.Content(lamp) : CoapResults.NotFound($"No lamp {id}."));

        CoapMessage found = _host.Send(CoapCode.Get, "/lamps/1", r => r.Accept = CoapContentFormat.Json);
        CoapMessage missing = _host.Send(CoapCode.Get, "/lamps/2");

        found.Code.Should().Be(CoapCode.Content);
        found.GetPayloadString().Should().Be("""{"id":1,"name":"desk","on":true,"brightness":0.5}""");
        missing.Code.Should().Be(CoapCode.NotFound);
        missing.GetPayloadString().Should().Be("No lamp 2.");
        _data.Created.Should().Be(2, "each request resolves the scoped store in a scope of its own");
        _data.Disposed.Should().Be(2, "the scope is disposed once the response is made");
    }

    [Fact]
    public void FromServicesBindsAServiceAndTheRestOfTheParametersStillBind()
    {
        _host.Server.MapPut("/lamps/{id:int}", ([FromServices] LampStore store, int id, Lamp lamp) => store.Save(lamp with { Id = id }));

        _host.Send(CoapCode.Put, "/lamps/5", r =>
        {
            r.ContentFormat = CoapContentFormat.Cbor;
            r.Payload = CoapCbor.Serialize(new Lamp(0, "garage", false, 0));
        }).Code.Should().Be(CoapCode.Changed);

        _data.Lamps[5].Should().Be(new Lamp(5, "garage", false, 0));
    }

    [Fact]
    public void FromServicesWithoutServicesFailsWhenMappedNotAtTheFirstRequest()
    {
        using HandlerHost bare = new();

        Action map = () => bare.Server.MapGet("/lamps", ([FromServices] LampStore store) => "x");

        map.Should().Throw<InvalidOperationException>().WithMessage("*'store'*Handlers.Services*");
    }
}
