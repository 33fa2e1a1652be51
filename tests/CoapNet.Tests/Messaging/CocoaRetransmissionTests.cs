using System.Net;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Messaging.Retransmission;
using CoapNet.Tests.Infrastructure;
using static CoapNet.Tests.Messaging.MessagingHarness;

namespace CoapNet.Tests.Messaging;

/// <summary>
/// CoCoA (draft-ietf-core-cocoa-03) against RTO sequences computed by hand: the blind RTO, the strong and weak estimators
/// (RFC 6298 with K = 4 and K = 1, weighted 0.5 and 0.25 into the RTO), the variable back-off, the 32 s bound and ageing.
/// The jitter is pinned to its low end (a random source that always draws 0), so every timeout is the RTO itself.
/// </summary>
public class CocoaRetransmissionTests
{
    private static readonly CoapPeer Peer = new("coap", new IPEndPoint(IPAddress.Parse("10.0.0.2"), 5683));

    [Fact]
    public void BlindItStartsAtTwoSecondsAndBacksOffLikeRfc7252UpTo32Seconds()
    {
        (CoapPeerRetransmission state, _) = Create();

        TimeSpan first = state.GetInitialTimeout(new FixedRandom(0));

        first.Should().Be(TimeSpan.FromSeconds(2));
        BackOffs(state, first, 6).Should().Equal(Seconds(4, 8, 16, 32, 32, 32), "a first timeout of 2 s backs off by 2, bounded at 32 s");
        state.RetransmissionTimeout.Should().Be(TimeSpan.FromSeconds(2));
    }

    [Fact]
    public void TheFirstTimeoutIsTheRtoDitheredUpToAckRandomFactor()
    {
        (CoapPeerRetransmission state, _) = Create();

        state.GetInitialTimeout(new FixedRandom(0.5)).Should().Be(TimeSpan.FromSeconds(2.5), "2 s x (1 + 0.5 x (1.5 - 1))");
    }

    [Fact]
    public void StrongSamplesFollowRfc6298WithKFourWeightedHalfIntoTheRto()
    {
        (CoapPeerRetransmission state, _) = Create();

        // 1st: SRTT 0.3, RTTVAR 0.15, E = 0.3 + 4 x 0.15 = 0.9; RTO = 0.5 x 0.9 + 0.5 x 2 = 1.45.
        // 2nd: RTTVAR 0.1125, SRTT 0.3, E = 0.75; RTO = 0.5 x 0.75 + 0.5 x 1.45 = 1.1.
        // 3rd: RTTVAR 0.084375, E = 0.6375; RTO = 0.5 x 0.6375 + 0.5 x 1.1 = 0.86875.
        Rtos(state, (0.3, 0), (0.3, 0), (0.3, 0)).Should().Equal(Seconds(1.45, 1.1, 0.86875));

        // A changed round trip moves SRTT by 1/8 and RTTVAR by 1/4 of the difference: 0.5 s after SRTT 0.3 gives
        // RTTVAR 0.75 x 0.084375 + 0.25 x 0.2 = 0.11328125, SRTT 0.325, E = 0.778125; RTO = 0.5 x 0.778125 + 0.434375.
        Rtos(state, (0.5, 0)).Should().Equal(Seconds(0.8234375));
    }

    [Fact]
    public void WeakSamplesAfterOneOrTwoRetransmissionsUseKOneWeightedAQuarter()
    {
        (CoapPeerRetransmission state, _) = Create();

        // 1st weak: SRTT 2.5, RTTVAR 1.25, E = 2.5 + 1 x 1.25 = 3.75; RTO = 0.25 x 3.75 + 0.75 x 2 = 2.4375.
        // 2nd weak: RTTVAR 0.75 x 1.25 + 0.25 x 0.5 = 1.0625, SRTT 2.4375, E = 3.5; RTO = 0.875 + 0.75 x 2.4375 = 2.703125.
        Rtos(state, (2.5, 1), (2.0, 2)).Should().Equal(Seconds(2.4375, 2.703125));

        // The strong estimator is separate: its first sample starts from its own first measurement.
        // SRTT 0.5, RTTVAR 0.25, E = 1.5; RTO = 0.5 x 1.5 + 0.5 x 2.703125 = 2.1015625.
        Rtos(state, (0.5, 0)).Should().Equal(Seconds(2.1015625));
    }

    [Fact]
    public void AnAcknowledgementAfterThreeRetransmissionsIsNoSample()
    {
        (CoapPeerRetransmission state, _) = Create();

        Rtos(state, (0.3, 0), (9.0, 3), (20.0, 4)).Should().Equal(Seconds(1.45, 1.45, 1.45));
    }

    [Fact]
    public void TheStrongOnlyVariantIgnoresWeakSamples()
    {
        (CoapPeerRetransmission state, _) = Create(new CocoaOptions { WeakEstimator = false });

        Rtos(state, (2.5, 1), (0.3, 0), (2.0, 2)).Should().Equal(Seconds(2, 1.45, 1.45));
    }

    [Fact]
    public void TheBackOffFactorIsThreeBelowOneSecondAndOneAndAHalfAboveThree()
    {
        (CoapPeerRetransmission fast, _) = Create();
        Rtos(fast, (0.3, 0), (0.3, 0), (0.3, 0));
        TimeSpan first = fast.GetInitialTimeout(new FixedRandom(0));
        first.Should().Be(TimeSpan.FromSeconds(0.86875));
        BackOffs(fast, first, 5).Should().Equal(Seconds(2.60625, 7.81875, 23.45625, 32, 32));

        // Weak 6 s: SRTT 6, RTTVAR 3, E = 9; RTO = 0.25 x 9 + 0.75 x 2 = 3.75.
        (CoapPeerRetransmission slow, _) = Create();
        Rtos(slow, (6.0, 2)).Should().Equal(Seconds(3.75));
        first = slow.GetInitialTimeout(new FixedRandom(0));
        first.Should().Be(TimeSpan.FromSeconds(3.75));
        BackOffs(slow, first, 6).Should().Equal(Seconds(5.625, 8.4375, 12.65625, 18.984375, 28.4765625, 32));
    }

    [Fact]
    public void TheFactorFollowsTheFirstTimeoutAsDitheredNotTheOneThatExpired()
    {
        (CoapPeerRetransmission state, _) = Create();

        // 2 s x 1.5 = 3 s: still the middle range, so doubled all the way, although 6 s and 12 s are past 3 s.
        TimeSpan first = state.GetInitialTimeout(new FixedRandom(1));
        first.Should().Be(TimeSpan.FromSeconds(3));
        BackOffs(state, first, 3).Should().Equal(Seconds(6, 12, 24));
    }

    [Fact]
    public void ASmallRtoNotUpdatedFor16TimesItselfIsDoubled()
    {
        (CoapPeerRetransmission state, ManualTimeProvider time) = Create();
        Rtos(state, (0.3, 0), (0.3, 0), (0.3, 0));

        // 16 x 0.86875 = 13.9 s.
        time.Advance(TimeSpan.FromSeconds(13.8));
        state.GetInitialTimeout(new FixedRandom(0)).Should().Be(TimeSpan.FromSeconds(0.86875), "not yet past 16 x RTO");
        state.OnUnacknowledged(0);
        time.Advance(TimeSpan.FromSeconds(0.2));
        state.GetInitialTimeout(new FixedRandom(0)).Should().Be(TimeSpan.FromSeconds(1.7375));
    }

    [Fact]
    public void ALargeRtoNotUpdatedFor4TimesItselfMovesBackTowardTheDefaultStepByStep()
    {
        (CoapPeerRetransmission state, ManualTimeProvider time) = Create();

        // Weak 10 s: SRTT 10, RTTVAR 5, E = 15; RTO = 0.25 x 15 + 1.5 = 5.25.
        Rtos(state, (10.0, 1)).Should().Equal(Seconds(5.25));

        // After 4 x 5.25 = 21 s: 1 + 0.5 x 5.25 = 3.625; after 4 x 3.625 = 14.5 s more: 1 + 1.8125 = 2.8125, and there it stays.
        time.Advance(TimeSpan.FromSeconds(21.5));
        state.RetransmissionTimeout.Should().Be(TimeSpan.FromSeconds(5.25), "ageing is applied when a message starts");
        state.GetInitialTimeout(new FixedRandom(0)).Should().Be(TimeSpan.FromSeconds(3.625));
        state.OnUnacknowledged(0);
        time.Advance(TimeSpan.FromSeconds(100));
        state.GetInitialTimeout(new FixedRandom(0)).Should().Be(TimeSpan.FromSeconds(2.8125), "both steps were due within 100 s, the second 14.5 s after the first");
    }

    [Fact]
    public void WithSeveralOutstandingTheBlindRtoIsTwoSecondsPerMessage()
    {
        (CoapPeerRetransmission state, _) = Create(parameters: CoapTransmissionParameters.Default with { NStart = 3 });

        state.NStart.Should().Be(3);
        Initials(state, 3).Should().Equal(Seconds(2, 4, 6));

        // Two end without an answer; the next one shares the link with one other.
        state.OnUnacknowledged(1);
        state.OnUnacknowledged(4);
        Initials(state, 1).Should().Equal(Seconds(4));

        // Once a round trip is known the estimate replaces the blind rule: 0.5 x 0.9 + 0.5 x 2 = 1.45.
        state.OnAcknowledged(TimeSpan.FromSeconds(0.3), 0);
        Initials(state, 1).Should().Equal(Seconds(1.45));
    }

    [Fact]
    public void TheBoundCapsTheEstimateTheFirstTimeoutAndTheBackOff()
    {
        (CoapPeerRetransmission state, _) = Create(new CocoaOptions { MaxTimeout = TimeSpan.FromSeconds(10) });

        TimeSpan first = state.GetInitialTimeout(new FixedRandom(0));
        BackOffs(state, first, 3).Should().Equal(Seconds(4, 8, 10));

        // Weak 30 s: E = 45; 0.25 x 45 + 1.5 = 12.75, bounded at 10 s.
        Rtos(state, (30.0, 1)).Should().Equal(Seconds(10));
        state.GetInitialTimeout(new FixedRandom(1)).Should().Be(TimeSpan.FromSeconds(10), "10 s x 1.5 is bounded too");
    }

    [Fact]
    public void MaxRetransmitAndNStartComeFromTheEndpointsParameters()
    {
        (CoapPeerRetransmission state, _) = Create(parameters: CoapTransmissionParameters.Default with { MaxRetransmit = 20, NStart = 2 });

        state.MaxRetransmit.Should().Be(20);
        state.NStart.Should().Be(2);
    }

    [Fact]
    public void AMaxTimeoutBelowOneSecondIsRefusedByName()
    {
        Action create = () => CoapRetransmissionPolicy.Cocoa(new CocoaOptions { MaxTimeout = TimeSpan.FromMilliseconds(500) });

        create.Should().Throw<ArgumentException>().WithParameterName(nameof(CocoaOptions.MaxTimeout));
    }

    [Fact]
    public void OnTheWireTheLearnedRtoTimesTheNextRequestsRetransmissions()
    {
        using MessagingHarness h = new();
        (TestPeer server, CoapEndpoint client) = CocoaClient(h);

        // A piggybacked answer after 300 ms: a strong sample, RTO 1.45 s.
        _ = client.SendRequestAsync(Get("first"), server.EndPoint);
        h.Network.DeliverAll();
        h.Time.Advance(TimeSpan.FromMilliseconds(300));
        server.SendPiggybacked(server.Last.Parsed, client.LocalEndPoint, CoapCode.Content);
        h.Network.DeliverAll();

        // The next request is never answered: sent, then again after 1.45 s, 2.9 s and 5.8 s (a first timeout of 1-3 s doubles).
        TimeSpan start = h.Time.Elapsed;
        _ = client.SendRequestAsync(Get("second"), server.EndPoint);
        h.Advance(TimeSpan.FromSeconds(1.45 + 2.9 + 5.8 + 0.001));
        h.Between(client.LocalEndPoint, server.EndPoint).Skip(1).Select(d => d.Time - start)
            .Should().Equal(Seconds(0, 1.45, 4.35, 10.15));
    }

    [Fact]
    public void OnTheWireASampleAfterARetransmissionIsWeakFromTheFirstTransmission()
    {
        using MessagingHarness h = new();
        (TestPeer server, CoapEndpoint client) = CocoaClient(h);

        // The first copy is lost; the retransmission (at 2 s) is answered 0.5 s later: a weak sample of 2.5 s, RTO 2.4375.
        _ = client.SendRequestAsync(Get("first"), server.EndPoint);
        h.Network.DiscardInFlight();
        h.Advance(TimeSpan.FromSeconds(2.5));
        server.SendPiggybacked(server.Last.Parsed, client.LocalEndPoint, CoapCode.Content);
        h.Network.DeliverAll();

        TimeSpan start = h.Time.Elapsed;
        _ = client.SendRequestAsync(Get("second"), server.EndPoint);
        h.Advance(TimeSpan.FromSeconds(2.4375 + 0.001));
        h.Between(client.LocalEndPoint, server.EndPoint).Skip(2).Select(d => d.Time - start).Should().Equal(Seconds(0, 2.4375));
    }

    /// <summary>A scripted server and a CoCoA client on the harness, the client's jitter pinned to its low end.</summary>
    private static (TestPeer Server, CoapEndpoint Client) CocoaClient(MessagingHarness h)
        => (h.Peer(ServerAddress), h.Endpoint(ClientAddress, new CoapEndpointOptions
        {
            TimeProvider = h.Time,
            Random = new FixedRandom(0),
            RetransmissionPolicy = CoapRetransmissionPolicy.Cocoa(),
        }));

    private static (CoapPeerRetransmission State, ManualTimeProvider Time) Create(CocoaOptions? options = null, CoapTransmissionParameters? parameters = null)
    {
        ManualTimeProvider time = new();
        return (CoapRetransmissionPolicy.Cocoa(options).CreatePeerState(Peer, parameters ?? CoapTransmissionParameters.Default, time), time);
    }

    /// <summary>Starts a message, acknowledges it with each sample in turn, and returns the RTO after each.</summary>
    private static List<TimeSpan> Rtos(CoapPeerRetransmission state, params (double Seconds, int Retransmissions)[] samples)
    {
        List<TimeSpan> rtos = [];
        foreach ((double seconds, int retransmissions) in samples)
        {
            state.GetInitialTimeout(new FixedRandom(0));
            state.OnAcknowledged(TimeSpan.FromSeconds(seconds), retransmissions);
            rtos.Add(state.RetransmissionTimeout!.Value);
        }

        return rtos;
    }

    private static List<TimeSpan> BackOffs(CoapPeerRetransmission state, TimeSpan first, int count)
    {
        List<TimeSpan> timeouts = [];
        TimeSpan timeout = first;
        for (int i = 1; i <= count; i++)
        {
            timeout = state.GetNextTimeout(first, timeout, i);
            timeouts.Add(timeout);
        }

        return timeouts;
    }

    private static List<TimeSpan> Initials(CoapPeerRetransmission state, int count)
    {
        List<TimeSpan> timeouts = [];
        for (int i = 0; i < count; i++)
        {
            timeouts.Add(state.GetInitialTimeout(new FixedRandom(0)));
        }

        return timeouts;
    }

    private static TimeSpan[] Seconds(params double[] seconds) => seconds.Select(s => TimeSpan.FromTicks((long)Math.Round(s * TimeSpan.TicksPerSecond))).ToArray();
}
