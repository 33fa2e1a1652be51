using System.Net;
using CoapNet.Channels;
using CoapNet.Endpoints;
using CoapNet.Messages;

namespace CoapNet.Tests.Endpoints;

/// <summary>Filters (before, after, short-circuit), route groups and authorization (4.01, 4.03), on endpoints and groups.</summary>
public sealed class PipelineTests : IDisposable
{
    private static readonly CoapPeerIdentity Operator = CoapPeerIdentity.FromPreSharedKey("operator"u8);
    private static readonly CoapPeerIdentity Guest = CoapPeerIdentity.FromPreSharedKey("guest"u8);
    private readonly List<string> _steps = [];
    private CoapPeerIdentity? _identity;
    private readonly HandlerHost _host;

    public PipelineTests()
    {
        _host = new HandlerHost(identities: _ => _identity);
    }

    public void Dispose() => _host.Dispose();

    [Fact]
    public void FiltersRunAroundTheHandlerOutermostGroupFirstAndSeeItsResponse()
    {
        CoapRouteGroupBuilder lamps = _host.Server.MapGroup("/lamps").AddFilter(async (context, next) =>
        {
            _steps.Add("group before");
            CoapResponse response = await next(context);
            _steps.Add("group after " + response.Code.Name);
            return response;
        });
        lamps.MapGet("/{id:int}", (int id) =>
        {
            _steps.Add("handler " + id);
            return "lamp";
        }).AddFilter(async (context, next) =>
        {
            _steps.Add("endpoint before");
            CoapResponse response = await next(context);
            response.Message.MaxAge = 30;
            _steps.Add("endpoint after");
            return response;
        });

        CoapMessage answer = _host.Send(CoapCode.Get, "/lamps/3");

        _steps.Should().Equal("group before", "endpoint before", "handler 3", "endpoint after", "group after Content");
        answer.MaxAge.Should().Be(30, "a filter after the handler changed the response");
    }

    [Fact]
    public void AFilterThatDoesNotCallNextAnswersInsteadOfTheHandler()
    {
        _host.Server.MapDelete("/lamps/{id:int}", (int id) =>
        {
            _steps.Add("handler");
            return CoapResults.Deleted();
        }).AddFilter((context, next) => context.Request.GetQueryValue("confirm") is null
            ? ValueTask.FromResult(CoapResults.BadRequest("Say ?confirm to delete.").ToResponse(context))
            : next(context));

        CoapMessage refused = _host.Send(CoapCode.Delete, "/lamps/1");
        CoapMessage done = _host.Send(CoapCode.Delete, "/lamps/1?confirm");

        refused.Code.Should().Be(CoapCode.BadRequest);
        refused.GetPayloadString().Should().Be("Say ?confirm to delete.");
        done.Code.Should().Be(CoapCode.Deleted);
        _steps.Should().Equal("handler");
    }

    [Fact]
    public void GroupsPrefixTheirEndpointsNestAndCarryTheirDiscoveryAttributes()
    {
        CoapRouteGroupBuilder building = _host.Server.MapGroup("/building").WithInterface("core.s");
        CoapRouteGroupBuilder floor = building.MapGroup("/floor/{level:int}");
        floor.MapGet("/lamps/{id:int}", (int level, int id) => $"{level}.{id}");
        building.MapGet("/status", () => "open");
        building.WithResourceType("building");

        _host.Send(CoapCode.Get, "/building/floor/2/lamps/7").GetPayloadString().Should().Be("2.7");
        _host.Send(CoapCode.Get, "/floor/2/lamps/7").Code.Should().Be(CoapCode.NotFound);
        string links = _host.Send(CoapCode.Get, "/.well-known/core").GetPayloadString();
        links.Should().Contain("</building/status>").And.Contain("if=\"core.s\"").And.Contain("rt=\"building\"", "an attribute added later reaches the endpoints already mapped");
    }

    [Fact]
    public void AnEndpointInAGroupListsItsInstancesUnderTheGroupsPrefix()
    {
        _host.Server.MapGroup("/floor/{level:int}").MapGet("/lamps/{id:int}", (int level, int id) => $"{level}.{id}")
            .WithResourceType("lamp").ListInstances(() => [["1", "4"], ["2", "9"]]);

        string links = _host.Send(CoapCode.Get, "/.well-known/core").GetPayloadString();

        links.Should().Be("</floor/1/lamps/4>;rt=\"lamp\",</floor/2/lamps/9>;rt=\"lamp\"");
    }

    [Fact]
    public void AProtectedEndpointAnswersUnauthorizedToAPeerWithoutIdentity()
    {
        _host.Server.MapGet("/secret", () =>
        {
            _steps.Add("handler");
            return "secret";
        }).RequireAuthorization();

        CoapMessage anonymous = _host.Send(CoapCode.Get, "/secret");

        anonymous.Code.Should().Be(CoapCode.Unauthorized);
        anonymous.GetPayloadString().Should().Contain("authenticated");
        _steps.Should().BeEmpty();
    }

    [Fact]
    public void APolicySeesThePeersIdentityAndRefusesWithForbidden()
    {
        CoapRouteGroupBuilder admin = _host.Server.MapGroup("/admin").RequireAuthorization((identity, _) => identity.Equals(Operator));
        admin.MapPut("/reboot", (CoapPeerIdentity? identity) => $"rebooted by {identity}");
        admin.MapGet("/status", () => "up").AllowAnonymous();

        _identity = Guest;
        CoapMessage guest = _host.Send(CoapCode.Put, "/admin/reboot");
        _identity = Operator;
        CoapMessage authorized = _host.Send(CoapCode.Put, "/admin/reboot");
        _identity = null;
        CoapMessage open = _host.Send(CoapCode.Get, "/admin/status");

        guest.Code.Should().Be(CoapCode.Forbidden);
        guest.GetPayloadString().Should().Contain("psk:guest");
        authorized.Code.Should().Be(CoapCode.Changed);
        authorized.GetPayloadString().Should().Be("rebooted by psk:operator");
        open.Code.Should().Be(CoapCode.Content, "AllowAnonymous lifts the group's requirement for this endpoint");
    }

    [Fact]
    public void FiltersAreFixedAtTheFirstRequest()
    {
        CoapEndpointBuilder endpoint = _host.Server.MapGet("/fixed", () => "x");
        _host.Send(CoapCode.Get, "/fixed");

        Action late = () => endpoint.AddFilter((context, next) => next(context));

        late.Should().Throw<InvalidOperationException>().WithMessage("*first request*");
    }

    [Fact]
    public void ATypedObservableResourceNotifiesItsObserversWithTheNewState()
    {
        Lamp state = new(1, "desk", false, 0);
        CoapEndpointBuilder lamp = _host.Server.MapGet("/lamp", () => state).Observable();

        CoapMessage registered = _host.Send(CoapCode.Get, "/lamp", r => r.Observe = 0);
        state = state with { On = true, Brightness = 1 };
        int notified = lamp.NotifyObservers();
        _host.Settle();

        registered.Observe.Should().NotBeNull();
        CoapCbor.Deserialize<Lamp>(registered.Payload).Should().Be(new Lamp(1, "desk", false, 0));
        notified.Should().Be(1);
        CoapMessage notification = _host.Peer.Received.Select(d => d.Parsed).Last(m => m.Code == CoapCode.Content);
        notification.Observe.Should().BeGreaterThan(registered.Observe!.Value);
        CoapCbor.Deserialize<Lamp>(notification.Payload).Should().Be(new Lamp(1, "desk", true, 1));
    }

    [Fact]
    public void ACallTheGeneratorDidNotCompileThrowsSayingWhatToDo()
    {
        // Called through a delegate, the call site is not one the generator sees, so nothing intercepts it.
        Func<ICoapEndpointRouteBuilder, string, Delegate, CoapEndpointBuilder> map = CoapEndpointRouteBuilderExtensions.MapGet;

        Action call = () => map(_host.Server, "/plain", (int id) => id);

        call.Should().Throw<InvalidOperationException>().WithMessage("*source generator*InterceptorsNamespaces*");
    }

    [Fact]
    public void TheHandlersOwnOverloadsStillTakeARequestAndReturnAResponse()
    {
        _host.Server.MapGet("/classic", request => CoapResponse.Content("classic " + request.Path));

        _host.Send(CoapCode.Get, "/classic").GetPayloadString().Should().Be("classic /classic");
    }
}
