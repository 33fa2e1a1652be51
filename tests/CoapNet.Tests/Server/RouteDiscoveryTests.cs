using CoapNet.LinkFormat;
using CoapNet.Messages;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Server;

/// <summary>
/// What a client learns of routes with parameters: the resources they name now in /.well-known/core (RFC 6690), and,
/// for a path with a trailing slash, which route matches it without one (RFC 7252 section 6.4), in virtual time.
/// </summary>
public sealed class RouteDiscoveryTests
{
    private readonly List<string> _lamps = ["1", "2"];
    private ushort _messageId;

    [Fact]
    public void ARouteWithAParameterListsTheResourcesItNamesNowWithItsAttributes()
    {
        using VirtualTimeServer fixture = new(server => server.MapGet("/lamps/{id:int}", _ => CoapResponse.Content("lamp"))
            .WithResourceType("lamp").Observable().ListInstances(() => _lamps));

        IReadOnlyList<CoapLink> before = Discover(fixture, "/.well-known/core");
        _lamps.Add("7");
        IReadOnlyList<CoapLink> after = Discover(fixture, "/.well-known/core");

        before.Select(link => link.Target).Should().Equal("/lamps/1", "/lamps/2");
        before.Should().OnlyContain(link => link.ResourceTypes.SequenceEqual(new[] { "lamp" }) && link.IsObservable);
        after.Select(link => link.Target).Should().Equal("/lamps/1", "/lamps/2", "/lamps/7");
    }

    [Fact]
    public void InstancesOfSeveralParametersAreEscapedAndFilteredLikeAnyLink()
    {
        using VirtualTimeServer fixture = new(server =>
        {
            server.MapGet("/rooms/{room}/sensors/{sensor}", _ => CoapResponse.Content("t"))
                .ListInstances(() => [["kitchen", "t1"], ["living room", "t2"]]);
            server.MapGet("/files/{*path}", _ => CoapResponse.Content("f")).ListInstances(() => ["a/b.txt"]);
        });

        Discover(fixture, "/.well-known/core").Select(link => link.Target)
            .Should().Equal("/rooms/kitchen/sensors/t1", "/rooms/living%20room/sensors/t2", "/files/a/b.txt");
        Discover(fixture, "/.well-known/core?href=/rooms/kitchen*").Select(link => link.Target).Should().Equal("/rooms/kitchen/sensors/t1");
    }

    [Fact]
    public void ARouteThatListsNoInstancesIsNotListed()
    {
        using VirtualTimeServer fixture = new(server =>
        {
            server.MapGet("/lamps/{id:int}", _ => CoapResponse.Content("lamp"));
            server.MapGet("/hello", _ => CoapResponse.Content("hi"));
        });

        Discover(fixture, "/.well-known/core").Select(link => link.Target).Should().Equal("/hello");
    }

    [Fact]
    public void AnInstanceItsConstraintRefusesFailsDiscoveryNamingIt()
    {
        using VirtualTimeServer fixture = new(server => server.MapGet("/lamps/{id:int}", _ => CoapResponse.Content("lamp")).ListInstances(() => ["desk"]));

        CoapMessage response = Get(fixture, "/.well-known/core");

        response.Code.Should().Be(CoapCode.InternalServerError, "a link to a path the route does not match would mislead the client");
    }

    [Fact]
    public void ListingInstancesOfTheWrongShapeIsRefusedWhenMapped()
    {
        using CoapServer server = new(LoopbackServer.Options());

        server.MapGet("/hello", _ => CoapResponse.Content("hi")).Invoking(r => r.ListInstances(() => [["x"]])).Should().Throw<ArgumentException>().WithMessage("*no parameter*");
        server.MapGet("/a/{b}/{c}", _ => CoapResponse.Content("x")).Invoking(r => r.ListInstances(() => ["x"])).Should().Throw<ArgumentException>().WithMessage("*2 parameters*");
    }

    [Fact]
    public void APathWithATrailingSlashIsNotFoundAndTheDiagnosticNamesTheRouteWithoutIt()
    {
        using VirtualTimeServer fixture = new(server =>
        {
            server.MapGet("/lamps", _ => CoapResponse.Content("all"));
            server.MapGet("/lamps/{id:int}", _ => CoapResponse.Content("one"));
        });

        CoapMessage list = GetSegments(fixture, "lamps", "");
        CoapMessage one = GetSegments(fixture, "lamps", "3", "");
        CoapMessage unknown = GetSegments(fixture, "pumps", "");

        list.Code.Should().Be(CoapCode.NotFound, "RFC 7252 section 6.4: /lamps/ and /lamps are two resources");
        list.GetPayloadString().Should().Contain("the route /lamps matches this path without it");
        one.Code.Should().Be(CoapCode.NotFound);
        one.GetPayloadString().Should().Contain("the route /lamps/{id:int} matches");
        unknown.Code.Should().Be(CoapCode.NotFound);
        unknown.Payload.IsEmpty.Should().BeTrue("no route matches it either way");
    }

    private IReadOnlyList<CoapLink> Discover(VirtualTimeServer fixture, string pathAndQuery)
    {
        int query = pathAndQuery.IndexOf('?', StringComparison.Ordinal);
        CoapMessage request = Request(query < 0 ? pathAndQuery : pathAndQuery[..query]);
        if (query >= 0)
        {
            request.UriQuery = pathAndQuery[(query + 1)..];
        }

        CoapMessage response = Exchange(fixture, request);
        response.Code.Should().Be(CoapCode.Content);
        return CoapLinkFormat.Parse(response.GetPayloadString());
    }

    private CoapMessage Get(VirtualTimeServer fixture, string path) => Exchange(fixture, Request(path));

    /// <summary>A GET whose Uri-Path options are exactly <paramref name="segments"/>, an empty one included (a trailing slash, RFC 7252 section 6.4).</summary>
    private CoapMessage GetSegments(VirtualTimeServer fixture, params string[] segments)
    {
        CoapMessage request = Request("/");
        request.SetUriPathSegments(segments);
        return Exchange(fixture, request);
    }

    private static CoapMessage Request(string path) => new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get, UriPath = path };

    private CoapMessage Exchange(VirtualTimeServer fixture, CoapMessage request)
    {
        request.MessageId = ++_messageId;
        request.Token = BitConverter.GetBytes(request.MessageId);
        fixture.Peer.ClearReceived();
        fixture.Send(request);
        fixture.Settle();
        return fixture.Peer.Received.Select(d => d.Parsed).Last(m => m.Code.IsResponse);
    }
}
