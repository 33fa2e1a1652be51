using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using CoapNet.Endpoints;
using CoapNet.Messages;

namespace CoapNet.Tests.Endpoints;

/// <summary>
/// JSON the way ASP.NET Core's minimal APIs do it, with nothing configured: web defaults (camelCase, names matched
/// without regard to case), metadata the source generator wrote, and a body that does not bind answered 4.00 with why.
/// </summary>
public sealed class JsonTests : IDisposable
{
    private static readonly Lamp Desk = new(1, "desk", true, 0.5);
    private readonly HandlerHost _host = new();

    public void Dispose() => _host.Dispose();

    [Fact]
    public void AJsonResponseIsCamelCaseWithNoResolverConfigured()
    {
        _host.Server.MapGet("/lamps/{id:int}", (int id) => Desk with { Id = id });

        CoapMessage response = _host.Send(CoapCode.Get, "/lamps/4", r => r.Accept = CoapContentFormat.Json);

        response.Code.Should().Be(CoapCode.Content);
        response.ContentFormat.Should().Be(CoapContentFormat.Json);
        response.GetPayloadString().Should().Be("""{"id":4,"name":"desk","on":true,"brightness":0.5}""");
    }

    [Fact]
    public void ACamelCaseBodyBindsAndNamesMatchWithoutRegardToCase()
    {
        Lamp? lamp = null;
        LampPatch? patch = null;
        _host.Server.MapPost("/lamps", (Lamp posted) => { lamp = posted; });
        _host.Server.MapPatch("/lamps/{id:int}", (int id, LampPatch sent) => { patch = sent; });

        CoapMessage posted = Send(CoapCode.Post, "/lamps", """{"id":9,"name":"hall","on":false,"brightness":1}""");
        CoapMessage patched = Send(CoapCode.Patch, "/lamps/9", """{"name":"porch","ON":true,"Tags":["a","b"],"secret":"sent"}""");

        posted.Code.Should().Be(CoapCode.Changed);
        lamp.Should().Be(new Lamp(9, "hall", false, 1));
        patched.Code.Should().Be(CoapCode.Changed);
        patch!.Name.Should().Be("porch");
        patch.On.Should().BeTrue("names match without regard to case");
        patch.Tags.Should().Equal("a", "b");
        patch.Secret.Should().Be("kept", "[JsonIgnore] leaves it out of JSON too");
    }

    [Fact]
    public void RequiredAndInitOnlyMembersBindAndAMissingRequiredOneIsABadRequestSayingWhich()
    {
        LampOrder? order = null;
        _host.Server.MapPost("/orders", (LampOrder sent) => { order = sent; });

        CoapMessage complete = Send(CoapCode.Post, "/orders", """{"name":"desk","level":80,"color":2}""");
        LampOrder? full = order;
        Send(CoapCode.Post, "/orders", """{"name":"hall"}""");
        LampOrder? partial = order;
        CoapMessage missing = Send(CoapCode.Post, "/orders", """{"level":80}""");

        complete.Code.Should().Be(CoapCode.Changed);
        full!.Name.Should().Be("desk");
        full.Level.Should().Be(80);
        full.Color.Should().Be(LampColor.Red);
        partial!.Level.Should().Be(50, "an init-only member the body does not have keeps its initializer's value");
        missing.Code.Should().Be(CoapCode.BadRequest);
        missing.GetPayloadString().Should().Contain("'sent'").And.Contain("'name'", "the diagnostic names the member that is missing, by its JSON name");
    }

    [Theory]
    [InlineData("""{"lamp":"desk","minutes":30}""", 29, "chime")]
    [InlineData("""{"lamp":"desk","minutes":30,"sound":"bell"}""", 29, "bell")]
    [InlineData("""{"lamp":"desk","minutes":30,"WARNAT":5}""", 5, "chime")]
    [InlineData("""{"sound":"bell","warnAt":5,"minutes":30,"lamp":"desk"}""", 5, "bell")]
    public void ARecordsInitOnlyMembersTheBodyLacksKeepInitializersThatReadItsConstructor(string body, int warnAt, string sound)
    {
        LampTimer? received = null;
        _host.Server.MapPost("/timers", (LampTimer timer) => { received = timer; });

        CoapMessage response = Send(CoapCode.Post, "/timers", body);

        response.Code.Should().Be(CoapCode.Changed);
        received.Should().Be(new LampTimer("desk", 30) { WarnAt = warnAt, Sound = sound });
    }

    [Fact]
    public void ATypeWithInitOnlyMembersIsWrittenInCamelCaseAndIsRefusedWhenNotAnObject()
    {
        _host.Server.MapPost("/timers", (LampTimer timer) => timer);
        _host.Server.MapPut("/dim", (LampDim dim) => dim);

        CoapMessage timer = _host.Send(CoapCode.Post, "/timers", r =>
        {
            r.ContentFormat = CoapContentFormat.Json;
            r.Accept = CoapContentFormat.Json;
            r.Payload = """{"lamp":"desk","minutes":10}"""u8.ToArray();
        });
        CoapMessage dim = _host.Send(CoapCode.Put, "/dim", r =>
        {
            r.ContentFormat = CoapContentFormat.Json;
            r.Accept = CoapContentFormat.Json;
            r.Payload = """{"level":3}"""u8.ToArray();
        });
        CoapMessage nullDim = Send(CoapCode.Put, "/dim", "null");
        CoapMessage arrayTimer = Send(CoapCode.Post, "/timers", "[1]");

        timer.GetPayloadString().Should().Be("""{"lamp":"desk","minutes":10,"warnAt":9,"sound":"chime"}""");
        dim.GetPayloadString().Should().Be("""{"level":3,"steps":4}""");
        nullDim.Code.Should().Be(CoapCode.BadRequest);
        nullDim.GetPayloadString().Should().Contain("'dim'").And.Contain(typeof(LampDim).FullName!, "System.Text.Json's reason names the handler's type");
        arrayTimer.Code.Should().Be(CoapCode.BadRequest);
        arrayTimer.GetPayloadString().Should().Contain("'timer'").And.Contain(typeof(LampTimer).FullName!);
    }

    [Fact]
    public void ABodyThatDoesNotBindIsABadRequestWithTheReason()
    {
        _host.Server.MapPost("/lamps", (Lamp lamp) => CoapResults.Changed());

        CoapMessage response = Send(CoapCode.Post, "/lamps", """{"id":"seven","name":"hall"}""");

        response.Code.Should().Be(CoapCode.BadRequest);
        response.GetPayloadString().Should().StartWith("The payload is not a valid Lamp for 'lamp': ").And.Contain("$.id", "System.Text.Json's reason names where the body went wrong");
    }

    [Fact]
    public void TheNamesCanBeThePropertiesOwn()
    {
        using HandlerHost host = new(options => options.Handlers.ConfigureJson(json => json.PropertyNamingPolicy = null));
        host.Server.MapGet("/desk", () => Desk);

        host.Send(CoapCode.Get, "/desk", r => r.Accept = CoapContentFormat.Json).GetPayloadString()
            .Should().Be("""{"Id":1,"Name":"desk","On":true,"Brightness":0.5}""");
    }

    [Fact]
    public void AnApplicationsContextFollowsTheServersNames()
    {
        // The user set a context made with System.Text.Json's defaults and got PascalCase, binding camelCase to null.
        using HandlerHost host = new(options => options.Handlers.JsonTypeInfoResolver = PascalJsonContext.Default);
        Lamp? received = null;
        host.Server.MapGet("/desk", () => Desk);
        host.Server.MapPost("/lamps", (Lamp lamp) => { received = lamp; });

        string written = host.Send(CoapCode.Get, "/desk", r => r.Accept = CoapContentFormat.Json).GetPayloadString();
        host.Send(CoapCode.Post, "/lamps", r =>
        {
            r.ContentFormat = CoapContentFormat.Json;
            r.Payload = """{"id":2,"name":"hall","on":true,"brightness":0.25}"""u8.ToArray();
        });

        written.Should().Be("""{"id":1,"name":"desk","on":true,"brightness":0.5}""");
        received.Should().Be(new Lamp(2, "hall", true, 0.25));
    }

    [Fact]
    public void ConfiguringJsonOnceAHandlerIsMappedIsRefused()
    {
        CoapHandlerOptions? handlers = null;
        using HandlerHost host = new(options => handlers = options.Handlers);
        host.Server.MapGet("/desk", () => Desk);

        handlers.Invoking(h => h!.ConfigureJson(json => json.PropertyNamingPolicy = null))
            .Should().Throw<InvalidOperationException>().WithMessage("*before mapping*");
    }

    [Fact]
    public void TheGeneratorsMetadataAloneReadsAndWritesTheHandlersTypesWithoutReflection()
    {
        // Only what the source generator registered (for this assembly's handlers), as in a Native AOT server: a type it
        // did not describe would throw here instead of falling back to reflection.
        JsonSerializerOptions generated = new(JsonSerializerDefaults.Web) { TypeInfoResolver = CoapJson.Generated };
        Tree tree = new() { Children = [new Tree(), new Tree { Children = [new Tree()] }] };

        string lamps = JsonSerializer.Serialize(new[] { Desk }, Info<Lamp[]>(generated));
        string patch = JsonSerializer.Serialize(new LampPatch { Name = "n", On = null, Tags = ["t"] }, Info<LampPatch>(generated));
        Tree read = JsonSerializer.Deserialize(JsonSerializer.Serialize(tree, Info<Tree>(generated)), Info<Tree>(generated))!;
        Lamp[] array = JsonSerializer.Deserialize("""[{"ID":3,"name":"x","on":false,"brightness":2}]""", Info<Lamp[]>(generated))!;

        lamps.Should().Be("""[{"id":1,"name":"desk","on":true,"brightness":0.5}]""");
        patch.Should().Be("""{"name":"n","on":null,"tags":["t"]}""");
        read.Depth().Should().Be(3);
        array.Should().Equal(new Lamp(3, "x", false, 2));
    }

    private static JsonTypeInfo<T> Info<T>(JsonSerializerOptions options) => (JsonTypeInfo<T>)options.GetTypeInfo(typeof(T));

    private CoapMessage Send(CoapCode method, string path, string json) => _host.Send(method, path, r =>
    {
        r.ContentFormat = CoapContentFormat.Json;
        r.Payload = Encoding.UTF8.GetBytes(json);
    });
}
