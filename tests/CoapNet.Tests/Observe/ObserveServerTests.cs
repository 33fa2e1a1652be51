using System.Net;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Observe;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Observe;

/// <summary>
/// RFC 7641 on the server, in virtual time on the in-memory network, with raw peers as observers:
/// registration, strictly increasing 24-bit sequence values, deregistration by Observe=1, by RST and by
/// a timed-out CON notification, error notifications, the queue of one per observer, and the bounds. The server's
/// handlers run on a <see cref="ManualTaskScheduler"/>, so each step settles on the test's thread: no wait, no poll.
/// </summary>
public sealed class ObserveServerTests : IAsyncLifetime
{
    private static readonly IPEndPoint ServerAddress = InMemoryNetwork.EndPoint("10.0.0.2");
    private readonly ManualTimeProvider _time = new();
    private readonly ManualTaskScheduler _scheduler = new();
    private readonly InMemoryNetwork _network;
    private readonly List<TestPeer> _peers = [];
    private CoapServer? _server;
    private int _counter;
    private volatile bool _gone;

    public ObserveServerTests() => _network = new InMemoryNetwork(_time) { DeliversImmediately = true };

    private CoapServer Server => _server!;

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync()
    {
        if (_server is not null)
        {
            _scheduler.Settle(_network);
            await _server.DisposeAsync();
        }

        foreach (TestPeer peer in _peers)
        {
            peer.Dispose();
        }
    }

    [Fact]
    public void AGetWithObserveZeroRegistersAndEachChangeSendsANotificationWithAHigherSequenceValue()
    {
        Start();
        TestPeer observer = Peer("10.0.0.1");

        CoapMessage registration = Register(observer, "/counter", token: 0x11);
        registration.Code.Should().Be(CoapCode.Content);
        registration.Observe.Should().NotBeNull("RFC 7641 section 4.1: the response that adds the observer carries Observe");
        Server.Observations.Should().Be(1);

        List<CoapMessage> notifications = [];
        for (int i = 1; i <= 3; i++)
        {
            Interlocked.Increment(ref _counter);
            Server.NotifyObservers("/counter").Should().Be(1);
            notifications.Add(WaitForMessage(observer, m => m.Code == CoapCode.Content && m.GetPayloadString() == i.ToString(System.Globalization.CultureInfo.InvariantCulture)));
        }

        notifications.Select(n => Convert.ToHexString(n.Token.ToArray()) + " " + n.Type).Should().AllBe("11 NonConfirmable");
        List<uint> values = [registration.Observe!.Value, .. notifications.Select(n => n.Observe!.Value)];
        values.Should().BeInAscendingOrder().And.OnlyHaveUniqueItems();
    }

    [Fact]
    public void AChangeWhileTheRegistrationsResponseIsOnItsWayDownIsNotifiedAfterThatResponseNotBeforeIt()
    {
        // The resource changes after the registration was recorded and before its response left: on TCP a notification
        // sent at once would reach the client ahead of the response, newer state first (seen in CI, 2026-11-28).
        Start(stages: options => options.UseStage("ChangeOnTheWayDown", _ => new ChangeOnTheWayDown(this), CoapStagePosition.Below(CoapStageNames.Observe)));
        TestPeer observer = Peer("10.0.0.1");

        CoapMessage registration = Register(observer, "/counter", token: 0x1A);
        CoapMessage notification = WaitForMessage(observer, m => m.Type == CoapMessageType.NonConfirmable && m.Observe is not null);

        registration.GetPayloadString().Should().Be("0");
        notification.GetPayloadString().Should().Be("1", "one notification with the state that changed follows the response");
        List<string> order = [.. observer.Received.Select(d => d.Message).Where(m => m?.Observe is not null).Select(m => m!.GetPayloadString())];
        order.Should().Equal(["0", "1"], "the response that establishes the observation goes down first");
        notification.Observe!.Value.Should().BeGreaterThan(registration.Observe!.Value);
    }

    [Fact]
    public void TheSequenceWrapsAt24BitsAndStaysNewerByTheRuleOfSection34()
    {
        Start();
        Server.ObservationRegistry.FirstSequence = (1 << 24) - 3;
        TestPeer observer = Peer("10.0.0.1");

        uint first = Register(observer, "/counter", token: 0x12).Observe!.Value;
        List<uint> values = [first];
        for (int i = 1; i <= 4; i++)
        {
            Interlocked.Increment(ref _counter);
            Server.NotifyObservers("/counter");
            values.Add(WaitForMessage(observer, m => m.Observe is not null && m.GetPayloadString() == i.ToString(System.Globalization.CultureInfo.InvariantCulture)).Observe!.Value);
        }

        values.Should().Equal((1u << 24) - 2, (1u << 24) - 1, 0u, 1u, 2u);
        for (int i = 1; i < values.Count; i++)
        {
            ObserveSequence.IsNewer(values[i - 1], 0, values[i], 0, long.MaxValue / 2).Should().BeTrue($"{values[i]} follows {values[i - 1]}");
        }
    }

    [Fact]
    public void ObserveOneDeregistersAndTheObserverGetsNoMoreNotifications()
    {
        Start();
        TestPeer observer = Peer("10.0.0.1");
        Register(observer, "/counter", token: 0x13);

        CoapMessage answer = Register(observer, "/counter", token: 0x13, observe: 1);

        answer.Code.Should().Be(CoapCode.Content);
        answer.Observe.Should().BeNull("RFC 7641 section 3.6: the deregistration is answered as a plain GET");
        Server.Observations.Should().Be(0);
        Server.NotifyObservers("/counter").Should().Be(0);
    }

    [Fact]
    public void AResetInReplyToANonNotificationRemovesTheObserver()
    {
        Start();
        TestPeer observer = Peer("10.0.0.1");
        Register(observer, "/counter", token: 0x14);
        Interlocked.Increment(ref _counter);
        Server.NotifyObservers("/counter");
        CoapMessage notification = WaitForMessage(observer, m => m.Type == CoapMessageType.NonConfirmable && m.Observe is not null);

        observer.SendReset(notification.MessageId, ServerAddress);

        Server.Observations.Should().Be(0, "RFC 7641 section 3.6: RST rejects the notification and ends the observation");
    }

    [Fact]
    public void AnObserverThatStopsAcknowledgingConfirmableNotificationsIsRemovedAfterTheRetransmissions()
    {
        Start(new ObserveOptions { ConfirmableNotifications = true });
        TestPeer observer = Peer("10.0.0.1");
        Register(observer, "/counter", token: 0x15);
        Server.NotifyObservers("/counter");
        WaitForMessage(observer, m => m.Type == CoapMessageType.Confirmable && m.Observe is not null);

        // MAX_TRANSMIT_WAIT is 93 s: past it, the fourth retransmission has gone unanswered.
        for (int i = 0; i < 10; i++)
        {
            _time.Advance(TimeSpan.FromSeconds(15));
        }

        observer.Received.Count(d => d.Parsed.Type == CoapMessageType.Confirmable && d.Parsed.Observe is not null).Should().Be(5, "the notification and its 4 retransmissions");
        Server.Observations.Should().Be(0, "RFC 7641 section 4.5: an unacknowledged CON notification removes the observer");
    }

    [Fact]
    public void AfterConfirmableEveryNonNotificationsOneGoesAsConAndAnObserverThatIsGoneIsRemoved()
    {
        Start(new ObserveOptions { ConfirmableEvery = 3 });
        TestPeer observer = Peer("10.0.0.1");
        Register(observer, "/counter", token: 0x1A);
        for (int i = 1; i <= 4; i++)
        {
            Interlocked.Increment(ref _counter);
            Server.NotifyObservers("/counter");
            WaitForMessage(observer, m => m.Observe is not null && m.GetPayloadString() == i.ToString(System.Globalization.CultureInfo.InvariantCulture));
        }

        observer.Received.Where(d => d.Parsed.Observe is not null && d.Parsed.Code == CoapCode.Content && d.Parsed.Type != CoapMessageType.Acknowledgement)
            .Select(d => d.Parsed.Type).Should().Equal(CoapMessageType.NonConfirmable, CoapMessageType.NonConfirmable, CoapMessageType.NonConfirmable, CoapMessageType.Confirmable);

        // The observer went away without deregistering: its CON notification is never acknowledged.
        for (int i = 0; i < 10; i++)
        {
            _time.Advance(TimeSpan.FromSeconds(15));
        }

        Server.Observations.Should().Be(0);
    }

    [Fact]
    public void AnAcknowledgedConfirmableNotificationKeepsTheObserver()
    {
        Start(new ObserveOptions { ConfirmableNotifications = true });
        TestPeer observer = Peer("10.0.0.1");
        observer.OnReceived = AcknowledgeConfirmable;
        Register(observer, "/counter", token: 0x16);
        Server.NotifyObservers("/counter");
        WaitForMessage(observer, m => m.Type == CoapMessageType.Confirmable && m.Observe is not null);

        _time.Advance(TimeSpan.FromSeconds(120));

        Server.Observations.Should().Be(1);
        observer.Received.Count(d => d.Parsed.Type == CoapMessageType.Confirmable).Should().Be(1, "acknowledged: never retransmitted");
    }

    [Fact]
    public void AnErrorNotificationEndsTheObservationAndCarriesNoObserveOption()
    {
        Start();
        TestPeer observer = Peer("10.0.0.1");
        Register(observer, "/counter", token: 0x17);

        _gone = true;
        Server.NotifyObservers("/counter");

        CoapMessage last = WaitForMessage(observer, m => m.Code == CoapCode.NotFound);
        last.Observe.Should().BeNull("RFC 7641 section 4.2: a notification with an error code has no Observe option");
        Server.Observations.Should().Be(0);
    }

    [Fact]
    public void ANewGetWithoutObserveAndTheSameTokenDeregisters()
    {
        Start();
        TestPeer observer = Peer("10.0.0.1");
        Register(observer, "/counter", token: 0x18);

        Register(observer, "/counter", token: 0x18, observe: null);

        Server.Observations.Should().Be(0);
    }

    [Fact]
    public void AReRegistrationWithTheSameTokenReplacesTheEntryAndTheSequenceKeepsRising()
    {
        Start();
        TestPeer observer = Peer("10.0.0.1");
        uint first = Register(observer, "/counter", token: 0x19).Observe!.Value;

        uint second = Register(observer, "/counter", token: 0x19).Observe!.Value;

        Server.Observations.Should().Be(1, "RFC 7641 section 4.1: an entry with the same endpoint and token is replaced, not added");
        second.Should().BeGreaterThan(first);
    }

    [Fact]
    public void ObservationsAreBoundedInTotalAndPerPeerAndARefusalIsAPlainResponse()
    {
        Start(new ObserveOptions { MaxObservations = 3, MaxObservationsPerPeer = 2 });
        TestPeer a = Peer("10.0.0.1");
        TestPeer b = Peer("10.0.0.3");
        TestPeer c = Peer("10.0.0.4");

        Register(a, "/counter", 0x21).Observe.Should().NotBeNull();
        Register(a, "/counter", 0x22).Observe.Should().NotBeNull();
        CoapMessage thirdOfA = Register(a, "/counter", 0x23);
        Register(b, "/counter", 0x24).Observe.Should().NotBeNull();
        CoapMessage overTotal = Register(c, "/counter", 0x25);

        thirdOfA.Code.Should().Be(CoapCode.Content);
        thirdOfA.Observe.Should().BeNull("past the per-peer bound the GET is answered without Observe");
        overTotal.Observe.Should().BeNull("past the total bound too");
        Server.Observations.Should().Be(3);
    }

    [Fact]
    public void ObservationsAreBoundedPerIdentityWhichForAnUnsecuredPeerIsItsAddressWhateverItsPort()
    {
        Start(new ObserveOptions { MaxObservationsPerIdentity = 2 });
        TestPeer a = Peer("10.0.0.1:5001");
        TestPeer b = Peer("10.0.0.1:5002");
        TestPeer c = Peer("10.0.0.3");

        // Two ports of one address are one device without an identity; another address is another device.
        (TestPeer Peer, byte Token)[] registrations = [(a, 0x31), (b, 0x32), (b, 0x33), (c, 0x34)];
        bool[] observed = [.. registrations.Select(r => Register(r.Peer, "/counter", r.Token).Observe is not null)];
        Register(a, "/counter", 0x31, observe: 1);
        bool afterDeregistration = Register(b, "/counter", 0x35).Observe is not null;

        observed.Should().Equal([true, true, false, true], "past the device's bound the GET is answered plainly (RFC 7641 section 4.1)");
        afterDeregistration.Should().BeTrue("a deregistration gives its place back to the device");
        Server.Observations.Should().Be(3);
    }

    [Fact]
    public void AnUnobservableRouteAnswersWithoutObserve()
    {
        Start();
        TestPeer observer = Peer("10.0.0.1");

        CoapMessage response = Register(observer, "/plain", token: 0x26);

        response.Code.Should().Be(CoapCode.Content);
        response.Observe.Should().BeNull("RFC 7641 section 2: a server that cannot observe the resource answers plainly");
        Server.Observations.Should().Be(0);
    }

    [Fact]
    public void OneStalledObserverDoesNotDelayAThousandOthers()
    {
        Start(new ObserveOptions { ConfirmableNotifications = true, MaxObservations = 2000, MaxObservationsPerPeer = 200 });
        TestPeer stalled = Peer("10.0.0.250");
        Register(stalled, "/counter", token: 0xFF);
        List<TestPeer> others = [];
        for (int p = 0; p < 5; p++)
        {
            TestPeer peer = Peer($"10.0.1.{p + 1}");
            peer.OnReceived = AcknowledgeConfirmable;
            for (int t = 0; t < 200; t++)
            {
                Register(peer, "/counter", token: (byte)t, secondTokenByte: (byte)p);
            }

            others.Add(peer);
        }

        Server.Observations.Should().Be(1001);
        for (int change = 1; change <= 3; change++)
        {
            Interlocked.Increment(ref _counter);
            Server.NotifyObservers("/counter").Should().Be(1001);
            string expected = change.ToString(System.Globalization.CultureInfo.InvariantCulture);
            _scheduler.Settle(_network);
            foreach (TestPeer peer in others)
            {
                peer.Received.Count(d => d.Parsed.Observe is not null && d.Parsed.GetPayloadString() == expected).Should().Be(200, $"{peer.EndPoint} has all 200 notifications of change {change}");
            }
        }

        // The stalled observer has its first notification in flight and no queue: the changes since are one pending state.
        stalled.Received.Count(d => d.Parsed.Type == CoapMessageType.Confirmable && d.Parsed.Observe is not null).Should().Be(1);
    }

    [Fact]
    public void AStalledObserverGetsOnlyTheLatestStateOnceItAcknowledges()
    {
        Start(new ObserveOptions { ConfirmableNotifications = true });
        TestPeer observer = Peer("10.0.0.1");
        Register(observer, "/counter", token: 0x31);
        Interlocked.Increment(ref _counter);
        Server.NotifyObservers("/counter");
        CoapMessage inFlight = WaitForMessage(observer, m => m.Type == CoapMessageType.Confirmable && m.Observe is not null);
        for (int i = 0; i < 5; i++)
        {
            Interlocked.Increment(ref _counter);
            Server.NotifyObservers("/counter");
        }

        observer.SendAck(inFlight.MessageId, ServerAddress);

        CoapMessage latest = WaitForMessage(observer, m => m.Type == CoapMessageType.Confirmable && m.GetPayloadString() == "6");
        latest.Observe.Should().BeGreaterThan(inFlight.Observe!.Value);
        observer.Received.Count(d => d.Parsed.Type == CoapMessageType.Confirmable && d.Parsed.Observe is not null).Should().Be(2, "RFC 7641 section 4.5.2: five changes while one was in flight make one more notification");
    }

    [Fact]
    public void DiscoveryMarksObservableRoutesWithObs()
    {
        Start();
        TestPeer observer = Peer("10.0.0.1");
        CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get, MessageId = 0x999, Token = new byte[] { 1 } };
        request.UriPath = "/.well-known/core";
        observer.Send(request, ServerAddress);

        string links = WaitForMessage(observer, m => m.MessageId == 0x999).GetPayloadString();

        links.Should().Contain("</counter>;obs").And.NotContain("</plain>;obs");
    }

    private static void AcknowledgeConfirmable(TestPeer peer, ReceivedDatagram datagram)
    {
        if (datagram.Message is { Type: CoapMessageType.Confirmable } message)
        {
            peer.SendAck(message.MessageId, datagram.From);
        }
    }

    /// <summary>
    /// Runs the server until it is idle, then returns the last message <paramref name="peer"/> received that matches.
    /// With immediate delivery the peer's responder (an ACK for a CON notification) has answered, and the server taken
    /// the answer in, on this thread before this returns, so the test never moves the clock ahead of them.
    /// </summary>
    private CoapMessage WaitForMessage(TestPeer peer, Func<CoapMessage, bool> match)
    {
        _scheduler.Settle(_network);
        CoapMessage? found = peer.Received.Select(d => d.Message).LastOrDefault(m => m is not null && match(m));
        found.Should().NotBeNull($"{peer.EndPoint} receives the expected message; it received {string.Join(", ", peer.Received)}");
        return found!;
    }

    private int _messageId = 0x100;

    [Fact]
    public void NotifyingARequestPathReachesItsObserversOnlyAndFollowsARegistrationThatMovedToAnotherPath()
    {
        Start();
        TestPeer first = Peer("10.0.0.1");
        TestPeer second = Peer("10.0.0.3");
        Register(first, "/devices/a", token: 0x21).Code.Should().Be(CoapCode.Content);
        Register(second, "/devices/b", token: 0x22).Code.Should().Be(CoapCode.Content);

        // RFC 7641 section 4.1: the same token again replaces the registration, here for another device of the route.
        Register(first, "/devices/c", token: 0x21).Code.Should().Be(CoapCode.Content);
        Server.Observations.Should().Be(2);

        Server.NotifyObservers("/devices/a").Should().Be(0, "nobody observes /devices/a any more");
        Server.NotifyObservers("/devices/c").Should().Be(1);
        WaitForMessage(first, m => m.Code == CoapCode.Content && m.GetPayloadString() == "c 0").Token.ToArray().Should().Equal(0x21);
        Server.NotifyObservers("/devices/b").Should().Be(1);
        WaitForMessage(second, m => m.Code == CoapCode.Content && m.GetPayloadString() == "b 0").Token.ToArray().Should().Equal(0x22);
        Server.NotifyObservers("/devices/{id}").Should().Be(2, "the route template reaches every observer of the route");
    }

    private CoapMessage Register(TestPeer observer, string path, byte token, uint? observe = 0, byte secondTokenByte = 0)
    {
        ushort messageId = (ushort)Interlocked.Increment(ref _messageId);
        CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get, MessageId = messageId, Token = secondTokenByte == 0 ? new[] { token } : new[] { token, secondTokenByte } };
        request.UriPath = path;
        request.Observe = observe;
        observer.Send(request, ServerAddress);
        return WaitForMessage(observer, m => m.Type == CoapMessageType.Acknowledgement && m.MessageId == messageId && m.Code != CoapCode.Empty);
    }

    private TestPeer Peer(string address)
    {
        TestPeer peer = new(_network, address);
        _peers.Add(peer);
        return peer;
    }

    private void Start(ObserveOptions? observe = null, Action<CoapEndpointOptions>? stages = null)
    {
        CoapEndpointOptions endpoint = new() { TimeProvider = _time };
        stages?.Invoke(endpoint);
        _server = new CoapServer(new CoapServerOptions
        {
            Observe = observe ?? new ObserveOptions(),
            Scheduler = _scheduler,
            Endpoint = endpoint,
        }.Listen(_network.CreateTransport(ServerAddress)));
        _server.MapGet("/counter", _ => _gone ? new CoapResponse(CoapCode.NotFound) : CoapResponse.Content(Volatile.Read(ref _counter).ToString(System.Globalization.CultureInfo.InvariantCulture))).Observable();
        _server.MapGet("/plain", _ => CoapResponse.Content("plain"));
        _server.MapGet("/devices/{id}", r => CoapResponse.Content(r.GetRouteValue("id") + " " + Volatile.Read(ref _counter).ToString(System.Globalization.CultureInfo.InvariantCulture))).Observable();
        _server.Start();
    }

    /// <summary>
    /// Below Observe on the server: while the first response with Observe goes down, the counter changes and the server
    /// is told, and whatever that starts is run to the end before the response passes on, as a notifier on another
    /// thread could.
    /// </summary>
    private sealed class ChangeOnTheWayDown(ObserveServerTests test) : CoapStage
    {
        private int _done;

        public override void SendResponse(CoapExchange exchange, CoapMessage response, Action<CoapExchange, CoapMessage> next)
        {
            if (!exchange.IsFurtherResponse && response.Observe is not null && Interlocked.Exchange(ref _done, 1) == 0)
            {
                Interlocked.Increment(ref test._counter);
                test.Server.NotifyObservers("/counter");
                test._scheduler.RunUntilIdle();
            }

            next(exchange, response);
        }
    }
}
