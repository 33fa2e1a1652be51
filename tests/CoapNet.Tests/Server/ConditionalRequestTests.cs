using System.Net;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Server;

namespace CoapNet.Tests.Server;

/// <summary>
/// Conditional requests (RFC 7252 section 5.10.8, and 5.10.6.2 for 2.03 Valid) through the server's pipeline: evaluated
/// against a route's or a resource's state before the handler, which does not run when a precondition fails, for
/// synchronous and asynchronous handlers alike; refused with 4.02 where there is no state to evaluate them against.
/// </summary>
public sealed class ConditionalRequestTests : IAsyncDisposable
{
    private static readonly byte[] Current = [0xC0, 0xFF, 0xEE];
    private static readonly byte[] Stale = [0x0B, 0x50, 0x1E, 0x7E];

    private readonly CoapClient _client = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) });
    private int _calls;

    public ValueTask DisposeAsync() => _client.DisposeAsync();

    public static TheoryData<bool> HandlerForms => [true, false];

    [Theory]
    [MemberData(nameof(HandlerForms))]
    public async Task AFailedPreconditionIsAnsweredPreconditionFailedAndTheHandlerDoesNotRun(bool synchronous)
    {
        await using LoopbackServer server = LoopbackServer.Start(s => Map(s, synchronous, _ => CoapResourceState.WithETag(Current)));

        CoapResponse createOnly = await SendAsync(server, CoapCode.Put, IfNoneMatch());
        CoapResponse staleVersion = await SendAsync(server, CoapCode.Put, IfMatch(Stale));
        CoapResponse staleDelete = await SendAsync(server, CoapCode.Delete, IfMatch(Stale), IfMatch(Stale[..2]));

        createOnly.Code.Should().Be(CoapCode.PreconditionFailed);
        createOnly.GetPayloadString().Should().Be("If-None-Match: the resource exists.");
        staleVersion.Code.Should().Be(CoapCode.PreconditionFailed);
        staleDelete.Code.Should().Be(CoapCode.PreconditionFailed);
        _calls.Should().Be(0, "RFC 7252 section 5.10.8: the server MUST NOT perform the method when a precondition fails");
    }

    [Theory]
    [MemberData(nameof(HandlerForms))]
    public async Task APreconditionThatHoldsRunsTheHandler(bool synchronous)
    {
        CoapResourceState state = CoapResourceState.WithETag(Current);
        await using LoopbackServer server = LoopbackServer.Start(s => Map(s, synchronous, _ => state));

        CoapResponse currentVersion = await SendAsync(server, CoapCode.Put, IfMatch(Stale), IfMatch(Current));
        CoapResponse anyVersion = await SendAsync(server, CoapCode.Put, IfMatch([]));
        state = CoapResourceState.Missing;
        CoapResponse create = await SendAsync(server, CoapCode.Put, IfNoneMatch());
        CoapResponse unconditional = await SendAsync(server, CoapCode.Put);

        currentVersion.Code.Should().Be(CoapCode.Changed, "one If-Match ETag is the current one");
        anyVersion.Code.Should().Be(CoapCode.Changed, "an empty If-Match holds for any current representation");
        create.Code.Should().Be(CoapCode.Changed, "If-None-Match holds when there is no current representation");
        unconditional.Code.Should().Be(CoapCode.Changed);
        _calls.Should().Be(4);
    }

    [Fact]
    public async Task IfMatchOnAMissingResourceFailsEvenWhenEmpty()
    {
        await using LoopbackServer server = LoopbackServer.Start(s => Map(s, synchronous: true, _ => CoapResourceState.Missing));

        CoapResponse reply = await SendAsync(server, CoapCode.Put, IfMatch([]));

        reply.Code.Should().Be(CoapCode.PreconditionFailed);
        reply.GetPayloadString().Should().Be("If-Match: the resource does not exist.");
        _calls.Should().Be(0);
    }

    [Fact]
    public async Task AResourceWhoseEntityTagIsUnknownFailsIfMatchWithAnETagButNotAnEmptyOne()
    {
        await using LoopbackServer server = LoopbackServer.Start(s => Map(s, synchronous: false, _ => CoapResourceState.Present));

        CoapResponse withTag = await SendAsync(server, CoapCode.Put, IfMatch(Current));
        CoapResponse empty = await SendAsync(server, CoapCode.Put, IfMatch([]));
        CoapResponse createOnly = await SendAsync(server, CoapCode.Put, IfNoneMatch());

        withTag.Code.Should().Be(CoapCode.PreconditionFailed);
        empty.Code.Should().Be(CoapCode.Changed);
        createOnly.Code.Should().Be(CoapCode.PreconditionFailed);
    }

    [Theory]
    [MemberData(nameof(HandlerForms))]
    public async Task AGetWithTheCurrentETagIsValidWithTheStatesMaxAgeAndNoPayload(bool synchronous)
    {
        await using LoopbackServer server = LoopbackServer.Start(s => Map(s, synchronous, _ => CoapResourceState.WithETag(Current, maxAge: 30)));

        CoapResponse valid = await SendAsync(server, CoapCode.Get, ETag(Stale), ETag(Current));
        CoapResponse stale = await SendAsync(server, CoapCode.Get, ETag(Stale));

        valid.Code.Should().Be(CoapCode.Valid);
        valid.Message.ETag!.Value.ToArray().Should().Equal(Current, "RFC 7252 section 5.9.1.3: 2.03 carries the ETag that is valid");
        valid.Message.MaxAge.Should().Be(30u, "the cache refreshes its stored response with this Max-Age");
        valid.Payload.IsEmpty.Should().BeTrue();
        stale.Code.Should().Be(CoapCode.Content);
        stale.GetPayloadString().Should().Be("representation");
        _calls.Should().Be(1, "only the GET with a stale ETag needed the representation");
    }

    [Fact]
    public async Task AnObserveRegistrationWithTheCurrentETagGetsTheRepresentation()
    {
        // 2.03 notifications would leave an observer with nothing to show: a GET with Observe gets 2.05 whatever its ETags.
        await using LoopbackServer server = LoopbackServer.Start(s => Map(s, synchronous: true, _ => CoapResourceState.WithETag(Current)).Observable());
        CoapMessage register = Request(server, CoapCode.Get, ETag(Current));
        register.Observe = 0;

        CoapResponse response = await _client.SendAsync(register, server.EndPoint);

        response.Code.Should().Be(CoapCode.Content);
        response.GetPayloadString().Should().Be("representation");
    }

    [Fact]
    public async Task IfMatchOrIfNoneMatchWhereThereIsNoStateIsBadOptionAndAnETagIsIgnored()
    {
        await using LoopbackServer server = LoopbackServer.Start(s =>
        {
            Map(s, synchronous: true, state: null);
            s.MapGet("/declines", _ => CoapResponse.Content("x")).WithState(_ => null);
        });

        CoapResponse ifMatch = await SendAsync(server, CoapCode.Put, IfMatch(Current));
        CoapResponse ifNoneMatch = await SendAsync(server, CoapCode.Put, IfNoneMatch());
        CoapResponse etag = await SendAsync(server, CoapCode.Get, ETag(Current));
        CoapResponse declined = await _client.SendAsync(Request(server, CoapCode.Get, "/declines", IfMatch([])), server.EndPoint);

        ifMatch.Code.Should().Be(CoapCode.BadOption, "RFC 7252 section 5.4.1: a critical option the target cannot honour is not ignored");
        ifMatch.GetPayloadString().Should().Contain("If-Match");
        ifNoneMatch.Code.Should().Be(CoapCode.BadOption);
        ifNoneMatch.GetPayloadString().Should().Contain("If-None-Match");
        etag.Code.Should().Be(CoapCode.Content, "an ETag is elective: without state it is simply not used");
        declined.Code.Should().Be(CoapCode.BadOption, "a route whose state function returns null exposes no state for this request");
        _calls.Should().Be(1);
    }

    [Fact]
    public async Task AStateFunctionThatThrowsIsInternalServerErrorAndTheServerGoesOn()
    {
        await using LoopbackServer server = LoopbackServer.Start(s => Map(s, synchronous: true, _ => throw new InvalidOperationException("store offline")));

        CoapResponse failed = await SendAsync(server, CoapCode.Put, IfMatch(Current));
        CoapResponse next = await SendAsync(server, CoapCode.Put);

        failed.Code.Should().Be(CoapCode.InternalServerError);
        next.Code.Should().Be(CoapCode.Changed, "a request without conditions does not ask for the state");
        _calls.Should().Be(1);
    }

    [Fact]
    public async Task AResourceClassGivesItsStateByOverridingGetState()
    {
        Valve valve = new();
        Plain plain = new();
        await using LoopbackServer server = LoopbackServer.Start(s =>
        {
            s.MapResource("/valve", valve);
            s.MapResource("/plain", plain);
        });

        CoapResponse stale = await _client.SendAsync(Request(server, CoapCode.Put, "/valve", IfMatch(Stale)), server.EndPoint);
        CoapResponse current = await _client.SendAsync(Request(server, CoapCode.Put, "/valve", IfMatch(Current)), server.EndPoint);
        CoapResponse valid = await _client.SendAsync(Request(server, CoapCode.Get, "/valve", ETag(Current)), server.EndPoint);
        CoapResponse noState = await _client.SendAsync(Request(server, CoapCode.Put, "/plain", IfMatch(Current)), server.EndPoint);

        stale.Code.Should().Be(CoapCode.PreconditionFailed);
        current.Code.Should().Be(CoapCode.Changed);
        valid.Code.Should().Be(CoapCode.Valid);
        noState.Code.Should().Be(CoapCode.BadOption, "a resource that does not override GetState exposes no state");
        valve.Puts.Should().Be(1);
        plain.Puts.Should().Be(0);
    }

    [Fact]
    public async Task AnUploadWithIfMatchToATargetWithoutStateIsRefusedAtItsFirstBlock()
    {
        // RFC 7959 section 2.5 lets the server answer any block finally: the body is not sent and held for nothing.
        await using LoopbackServer server = LoopbackServer.Start(s => Map(s, synchronous: true, state: null));
        using RawPeer peer = new(server.EndPoint);
        CoapMessage first = peer.Request(CoapMessageType.Confirmable, CoapCode.Put, "/thing", token: 7);
        first.Options.Add(CoapOptionNumber.IfMatch, Current);
        first.Block1 = new CoapBlock(0, more: true, sizeExponent: 6);
        first.Payload = new byte[1024];

        await peer.SendAsync(first);
        RawPeer.Received reply = await peer.ReceiveAsync();

        reply.Message.Code.Should().Be(CoapCode.BadOption, "the first block is refused at once, not answered 2.31 Continue");
        reply.Message.GetPayloadString().Should().Contain("If-Match");
        _calls.Should().Be(0);
    }

    [Fact]
    public void EvaluateConditionsIsTheServersEvaluationForAHandlerToRunUnderItsOwnLock()
    {
        CoapRequest request = default;
        FluentActions.Invoking(() => request.EvaluateConditions(CoapResourceState.Missing)).Should().Throw<InvalidOperationException>("a default CoapRequest is no request");
        FluentActions.Invoking(() => CoapResourceState.WithETag([])).Should().Throw<ArgumentException>().WithMessage("*1 to 8 bytes*");
        FluentActions.Invoking(() => CoapResourceState.WithETag(new byte[9])).Should().Throw<ArgumentException>().WithMessage("*1 to 8 bytes*");
        CoapResourceState.WithETag(Current).Should().Be(CoapResourceState.WithETag([0xC0, 0xFF, 0xEE]));
        CoapResourceState.WithETag(Current).Should().NotBe(CoapResourceState.Present);
        CoapResourceState.Missing.Exists.Should().BeFalse();
        CoapResourceState.Present.ETag.Should().BeNull();
        CoapResourceState.WithETag(Current).ToString().Should().Be("present, ETag C0FFEE");
    }

    private CoapRouteBuilder Map(CoapServer server, bool synchronous, Func<CoapRequest, CoapResourceState?>? state)
    {
        CoapRouteBuilder route;
        if (synchronous)
        {
            route = server.MapGet("/thing", _ => Called(CoapResponse.Content("representation")));
            server.MapPut("/thing", _ => Called(new CoapResponse(CoapCode.Changed)));
            server.MapDelete("/thing", _ => Called(new CoapResponse(CoapCode.Deleted)));
        }
        else
        {
            route = server.MapGet("/thing", async (_, ct) => { await Task.Yield(); return Called(CoapResponse.Content("representation")); });
            server.MapPut("/thing", async (_, ct) => { await Task.Yield(); return Called(new CoapResponse(CoapCode.Changed)); });
            server.MapDelete("/thing", async (_, ct) => { await Task.Yield(); return Called(new CoapResponse(CoapCode.Deleted)); });
        }

        return state is null ? route : route.WithState(state);
    }

    private CoapResponse Called(CoapResponse response)
    {
        Interlocked.Increment(ref _calls);
        return response;
    }

    private Task<CoapResponse> SendAsync(LoopbackServer server, CoapCode method, params (CoapOptionNumber Number, byte[] Value)[] options)
        => _client.SendAsync(Request(server, method, "/thing", options), server.EndPoint);

    private static CoapMessage Request(LoopbackServer server, CoapCode method, params (CoapOptionNumber Number, byte[] Value)[] options)
        => Request(server, method, "/thing", options);

    private static CoapMessage Request(LoopbackServer server, CoapCode method, string path, params (CoapOptionNumber Number, byte[] Value)[] options)
    {
        CoapMessage request = CoapMessage.CreateRequest(method, server.Uri(path));
        foreach ((CoapOptionNumber number, byte[] value) in options)
        {
            request.Options.Add(number, value);
        }

        return request;
    }

    private static (CoapOptionNumber, byte[]) IfMatch(byte[] etag) => (CoapOptionNumber.IfMatch, etag);

    private static (CoapOptionNumber, byte[]) IfNoneMatch() => (CoapOptionNumber.IfNoneMatch, []);

    private static (CoapOptionNumber, byte[]) ETag(byte[] etag) => (CoapOptionNumber.ETag, etag);

    private sealed class Valve : CoapResource
    {
        public int Puts { get; private set; }

        public override CoapResourceState? GetState(CoapRequest request) => CoapResourceState.WithETag(Current);

        public override CoapResponse Get(CoapRequest request) => CoapResponse.Content("open");

        public override CoapResponse Put(CoapRequest request)
        {
            Puts++;
            return new CoapResponse(CoapCode.Changed);
        }
    }

    private sealed class Plain : CoapResource
    {
        public int Puts { get; private set; }

        public override CoapResponse Put(CoapRequest request)
        {
            Puts++;
            return new CoapResponse(CoapCode.Changed);
        }
    }
}
