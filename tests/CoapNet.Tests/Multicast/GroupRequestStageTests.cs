using CoapNet.Messages;
using CoapNet.Multicast;
using CoapNet.NoResponse;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Multicast;

/// <summary>
/// A group endpoint's answers in virtual time (RFC 7252 section 8.2, draft-ietf-core-groupcomm-bis section 3.1.2): what
/// reaches the peer, and when, for requests the endpoint takes to have come by multicast.
/// </summary>
public sealed class GroupRequestStageTests : IDisposable
{
    private static readonly TimeSpan Leisure = TimeSpan.FromSeconds(2);
    private readonly VirtualTimeServer _fixture;
    private readonly List<int> _handled = [];
    private int _level = 1;

    public GroupRequestStageTests()
    {
        _fixture = new VirtualTimeServer(
            server =>
            {
                server.MapGet("/lamp", _ =>
                {
                    _handled.Add(1);
                    return CoapResponse.Content("on");
                }).WithResourceType("light");
                server.MapGet("/broken", _ => CoapResponse.Diagnostic(CoapCode.InternalServerError, "no"));
                server.MapGet("/level", _ => _level >= 0
                    ? CoapResponse.Content(_level.ToString(System.Globalization.CultureInfo.InvariantCulture))
                    : CoapResponse.Diagnostic(CoapCode.NotFound, "gone")).Observable();
            },
            configure: options =>
            {
                options.Endpoint.Random = new Random(7);
                options.Endpoint.UseGroupRequests(new CoapMulticastOptions { Leisure = Leisure, RequestsPerSecond = 1, Burst = 2 });
            });
    }

    [Fact]
    public void AResponseWaitsARandomPointWithinTheLeisure()
    {
        Get("/lamp", 1);
        _fixture.Settle();
        _handled.Should().HaveCount(1);
        _fixture.Peer.Received.Should().BeEmpty("the response waits for its point within the leisure");

        _fixture.Time.Advance(Leisure);
        _fixture.Settle();
        _fixture.Peer.Received.Should().ContainSingle().Which.Parsed.Code.Should().Be(CoapCode.Content);
        _fixture.Peer.Last.Parsed.Type.Should().Be(CoapMessageType.NonConfirmable);
    }

    [Fact]
    public void TheDelaysSpreadOverTheLeisure()
    {
        // Many requests from sources of their own (each under its rate): the time of each answer is where it fell.
        List<TimeSpan> arrivals = [];
        List<TestPeer> peers = [];
        for (int i = 0; i < 40; i++)
        {
            TestPeer peer = new(_fixture.Network, $"10.0.1.{i + 1}");
            peers.Add(peer);
            peer.Send(Request("/lamp", (ushort)(i + 1)), VirtualTimeServer.Address);
        }

        _fixture.Settle();
        TimeSpan step = TimeSpan.FromMilliseconds(50);
        for (TimeSpan t = TimeSpan.Zero; t <= Leisure; t += step)
        {
            int before = peers.Count(p => p.Received.Count > 0);
            _fixture.Time.Advance(step);
            _fixture.Settle();
            int after = peers.Count(p => p.Received.Count > 0);
            for (int k = before; k < after; k++)
            {
                arrivals.Add(_fixture.Time.Elapsed);
            }
        }

        arrivals.Should().HaveCount(40, "every member answers within the leisure");
        (arrivals.Max() - arrivals.Min()).Should().BeGreaterThan(Leisure / 2, "the answers are spread over the leisure, not sent together");
        peers.ForEach(p => p.Dispose());
    }

    [Fact]
    public void AnErrorIsNotSentToAGroupRequest()
    {
        Get("/broken", 1);
        Get("/missing", 2);
        _fixture.Settle();
        _fixture.Time.Advance(Leisure);
        _fixture.Settle();

        _fixture.Peer.Received.Should().BeEmpty();
    }

    [Fact]
    public void AnErrorIsSentWhenNoResponseAsksForErrors()
    {
        // RFC 7967 section 2.1: value 2 declines only 2.xx, so 4.xx and 5.xx are wanted.
        CoapMessage request = Request("/missing", 1);
        request.NoResponse = CoapNoResponse.Success;
        _fixture.Send(request);
        _fixture.Settle();
        _fixture.Time.Advance(Leisure);
        _fixture.Settle();

        _fixture.Peer.Received.Should().ContainSingle().Which.Parsed.Code.Should().Be(CoapCode.NotFound);
    }

    [Theory]
    [InlineData("rt=light", true)]
    [InlineData("rt=heater", false)]
    [InlineData("if=sensor", false)]
    public void ADiscoveryAnswersOnlyWhenItsFilterMatches(string query, bool answered)
    {
        CoapMessage request = Request("/.well-known/core", 1);
        request.Options.Add(new CoapOptionEntry(CoapOptionNumber.UriQuery, System.Text.Encoding.UTF8.GetBytes(query)));
        _fixture.Send(request);
        _fixture.Settle();
        _fixture.Time.Advance(Leisure);
        _fixture.Settle();

        if (answered)
        {
            _fixture.Peer.Received.Should().ContainSingle().Which.Parsed.GetPayloadString().Should().Contain("</lamp>");
        }
        else
        {
            _fixture.Peer.Received.Should().BeEmpty();
        }
    }

    [Fact]
    public void ASourcePastItsRateIsNotAnsweredUntilItsBucketRefills()
    {
        for (ushort id = 1; id <= 4; id++)
        {
            Get("/lamp", id);
        }

        _fixture.Settle();
        _fixture.Time.Advance(Leisure);
        _fixture.Settle();
        _fixture.Peer.Received.Should().HaveCount(2, "a burst of 2, then 1 per second");
        _handled.Should().HaveCount(2, "a request over the rate does not reach the handler");

        // Two seconds later (the leisure) two more tokens have come.
        Get("/lamp", 5);
        _fixture.Settle();
        _fixture.Time.Advance(Leisure);
        _fixture.Settle();
        _fixture.Peer.Received.Should().HaveCount(3);
    }

    [Fact]
    public void IPv6SourcesShareOneRatePerSlash64AndIPv4SourcesHaveOneEach()
    {
        // A burst of 2 (the fixture's): two hosts of one /64 take it together; a host of another /64, and IPv4 neighbours, each have their own.
        using TestPeer first = new(_fixture.Network, "[2001:db8:1:2::10]:5683");
        using TestPeer second = new(_fixture.Network, "[2001:db8:1:2::20]:5683");
        using TestPeer elsewhere = new(_fixture.Network, "[2001:db8:1:3::10]:5683");
        using TestPeer v4a = new(_fixture.Network, "10.0.2.1");
        using TestPeer v4b = new(_fixture.Network, "10.0.2.2");
        first.Send(Request("/lamp", 1), VirtualTimeServer.Address);
        second.Send(Request("/lamp", 2), VirtualTimeServer.Address);
        second.Send(Request("/lamp", 3), VirtualTimeServer.Address);
        elsewhere.Send(Request("/lamp", 4), VirtualTimeServer.Address);
        for (ushort id = 5; id <= 6; id++)
        {
            v4a.Send(Request("/lamp", id), VirtualTimeServer.Address);
            v4b.Send(Request("/lamp", (ushort)(id + 2)), VirtualTimeServer.Address);
        }

        _fixture.Settle();
        _fixture.Time.Advance(Leisure);
        _fixture.Settle();

        (first.Received.Count + second.Received.Count).Should().Be(2, "2001:db8:1:2::/64 is one source: its burst of 2 is shared, and the third request is over it");
        elsewhere.Received.Should().ContainSingle("another /64 is another source");
        v4a.Received.Should().HaveCount(2, "an IPv4 address is a source of its own");
        v4b.Received.Should().HaveCount(2, "its neighbour's requests are not counted against it");
    }

    [Fact]
    public void AtItsBoundTheTableForgetsARefilledSourceAndRefusesANewcomerWhileEveryTrackedSourceIsLimited()
    {
        using VirtualTimeServer bounded = new(
            server => server.MapGet("/lamp", _ => CoapResponse.Content("on")),
            configure: options => options.Endpoint.UseGroupRequests(new CoapMulticastOptions { Leisure = TimeSpan.Zero, RequestsPerSecond = 1, Burst = 1, MaxTrackedSources = 2 }));
        using TestPeer a = new(bounded.Network, "10.0.3.1");
        using TestPeer b = new(bounded.Network, "10.0.3.2");
        using TestPeer c = new(bounded.Network, "10.0.3.3");

        a.Send(Request("/lamp", 1), VirtualTimeServer.Address);
        b.Send(Request("/lamp", 2), VirtualTimeServer.Address);
        bounded.Settle();
        c.Send(Request("/lamp", 3), VirtualTimeServer.Address);
        bounded.Settle();
        a.Received.Should().ContainSingle();
        b.Received.Should().ContainSingle();
        c.Received.Should().BeEmpty("the table is full and both sources in it are still limited: forgetting one would give it a fresh burst");

        // A second later a's bucket (seen longest ago) has refilled: it is forgotten, and the newcomer takes its place.
        bounded.Time.Advance(TimeSpan.FromSeconds(1));
        c.Send(Request("/lamp", 4), VirtualTimeServer.Address);
        bounded.Settle();
        c.Received.Should().ContainSingle("a source with a full bucket gives its place");
    }

    [Fact]
    public void NotificationsOfAnObservationAGroupRequestRegisteredGoAtOnceAndAnErrorOneToo()
    {
        CoapMessage registration = Request("/level", 1);
        registration.Observe = 0;
        _fixture.Send(registration);
        _fixture.Settle();
        _fixture.Time.Advance(Leisure);
        _fixture.Settle();
        _fixture.Peer.Received.Should().ContainSingle().Which.Parsed.Observe.Should().NotBeNull("the group GET registered an observation (RFC 7641 section 4.1)");

        _level = 2;
        _fixture.Server.NotifyObservers("/level").Should().Be(1);
        _fixture.Settle();
        _fixture.Peer.Received.Should().HaveCount(2, "a notification answers a change at this server, not the group request: it waits no leisure");
        _fixture.Peer.Last.Parsed.GetPayloadString().Should().Be("2");
        _fixture.Peer.Last.Parsed.Observe.Should().NotBeNull();

        _level = -1;
        _fixture.Server.NotifyObservers("/level").Should().Be(1);
        _fixture.Settle();
        _fixture.Peer.Received.Should().HaveCount(3, "an error notification is how the observer learns its observation ended (RFC 7641 section 4.2)");
        _fixture.Peer.Last.Parsed.Code.Should().Be(CoapCode.NotFound);
        _fixture.Server.Observations.Should().Be(0);
    }

    [Fact]
    public void TheLeisureComesFromRfc7252sFormulaOrItsDefault()
    {
        new CoapMulticastOptions().EffectiveLeisure().Should().Be(TimeSpan.FromSeconds(5));

        // RFC 7252 section 8.2: S * G / R, 100 bytes from 50 servers at 1250 bytes/s.
        new CoapMulticastOptions { GroupSizeEstimate = 50 }.EffectiveLeisure().Should().Be(TimeSpan.FromSeconds(4));
        new CoapMulticastOptions { GroupSizeEstimate = 50, Leisure = TimeSpan.FromSeconds(1) }.EffectiveLeisure().Should().Be(TimeSpan.FromSeconds(1));
    }

    [Fact]
    public void SettingsOutOfRangeAreRefusedWithTheirName()
    {
        CoapServerOptions server = new();

        FluentActions.Invoking(() => server.ListenMulticast(m => m.Groups.Add(System.Net.IPAddress.Parse("10.0.0.1"))))
            .Should().Throw<ArgumentException>().WithMessage("*10.0.0.1*not a multicast address*");
        FluentActions.Invoking(() => server.ListenMulticast(m => m.Leisure = TimeSpan.FromSeconds(-1)))
            .Should().Throw<ArgumentException>().WithMessage("*Leisure*");
        FluentActions.Invoking(() => server.ListenMulticast(m => m.Interfaces.Add("no-such-interface0")))
            .Should().Throw<ArgumentException>().WithMessage("*no-such-interface0*");
        server.ListenOptions.Should().BeEmpty();
    }

    public void Dispose() => _fixture.Dispose();

    private static CoapMessage Request(string path, ushort id)
    {
        CoapMessage request = CoapMessage.CreateRequest(CoapCode.Get, new Uri("coap://10.0.0.2" + path), CoapMessageType.NonConfirmable);
        request.MessageId = id;
        request.Token = new byte[] { 0x47, (byte)id };
        return request;
    }

    private void Get(string path, ushort id) => _fixture.Send(Request(path, id));
}
