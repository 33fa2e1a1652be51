using System.Net;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Messaging.Retransmission;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Messaging;

/// <summary>
/// CoCoA's congestion window (CocoaOptions.CongestionWindow, issue 40): NSTART is its ceiling; it starts at one message,
/// doubles per round trip in slow start, then grows by one per round trip, and keeps 0.8 of itself, once per RTO, when a
/// message times out; the message layer holds each peer to it as it moves. Policy state driven by hand, and a windowed
/// download over a simulated link in virtual time.
/// </summary>
public class CongestionWindowTests
{
    private static readonly CoapPeer Peer = new("coap", new IPEndPoint(IPAddress.Parse("10.0.0.2"), 5683));

    [Fact]
    public void ItStartsAtOneMessageAndGrowsByOneForEachAcknowledgedUpToNStart()
    {
        (CoapPeerRetransmission state, _) = Create(nstart: 6);

        List<int> sizes = [state.NStart];
        for (int i = 0; i < 7; i++)
        {
            Acknowledge(state);
            sizes.Add(state.NStart);
        }

        sizes.Should().Equal(1, 2, 3, 4, 5, 6, 6, 6);
    }

    [Fact]
    public void ATimeoutKeepsFourFifthsOnceARoundAndGrowthIsThenOneARoundTrip()
    {
        (CoapPeerRetransmission state, ManualTimeProvider time) = Create(nstart: 20);
        for (int i = 0; i < 9; i++)
        {
            Acknowledge(state);
        }

        state.NStart.Should().Be(10);
        TimeSpan first = state.GetInitialTimeout(new FixedRandom(0));
        state.GetNextTimeout(first, first, 1);
        state.NStart.Should().Be(8, "10 x 0.8");

        state.GetNextTimeout(first, first, 1);
        state.NStart.Should().Be(8, "a second timeout within the same RTO is the same burst of losses");

        time.Advance(TimeSpan.FromSeconds(3));
        state.GetNextTimeout(first, first, 1);
        state.NStart.Should().Be(6, "a round later: 8 x 0.8 = 6.4");

        // Past the threshold (6.4): one more message per window of acknowledgements, not one per acknowledgement.
        for (int i = 0; i < 6; i++)
        {
            Acknowledge(state);
        }

        state.NStart.Should().Be(7);
    }

    [Fact]
    public void TheWindowNeverFallsBelowOneMessage()
    {
        (CoapPeerRetransmission state, ManualTimeProvider time) = Create(nstart: 4);
        TimeSpan first = state.GetInitialTimeout(new FixedRandom(0));
        for (int i = 0; i < 10; i++)
        {
            state.GetNextTimeout(first, first, 1);
            time.Advance(TimeSpan.FromSeconds(40));
        }

        state.NStart.Should().Be(1);
    }

    [Fact]
    public void WithoutItNStartIsFixed()
    {
        CoapPeerRetransmission state = CoapRetransmissionPolicy.Cocoa().CreatePeerState(Peer, CoapTransmissionParameters.Default with { NStart = 6 }, new ManualTimeProvider());

        state.NStart.Should().Be(6);
        TimeSpan first = state.GetInitialTimeout(new FixedRandom(0));
        state.GetNextTimeout(first, first, 1);
        state.NStart.Should().Be(6);
    }

    [Fact]
    public void TheMessageLayerLetsOutOneTwoFourThenEightRequestsARoundTrip()
    {
        // A Block2 window of 8 over a link of 100 ms each way: the window doubles each round trip (slow start), and the
        // message layer starts as many of the queued block requests as it allows when the acknowledgements free their slots.
        TransferOutcome outcome = TransferSimulation.Run(WindowOfEight(blocks: 40, congestionWindow: true));

        outcome.Completed.Should().BeTrue(outcome.Failure);
        List<int> perRound = [.. outcome.Trace
            .Where(d => d.From.Equals(TransferSimulation.ClientAddress) && d.Message is { Code.IsRequest: true })
            .GroupBy(d => d.Time)
            .OrderBy(g => g.Key)
            .Select(g => g.Count())];
        perRound.Take(5).Should().Equal(1, 2, 4, 8, 8);
    }

    [Theory]
    [InlineData(true, 6)]
    [InlineData(false, 7)]
    public void ALossShrinksTheWindowAndFewerRequestsGoOutTheNextRoundTrip(bool window, int afterwards)
    {
        // The first response carrying block 16 is lost while 8 are outstanding: its request times out, the window keeps 6.4
        // of 8 and grows by a seventh for each of the 7 answers of that round, so 6 new requests go out beside the one
        // retransmitted, where a fixed NSTART of 8 sends 7.
        bool lost = false;
        TransferOutcome outcome = TransferSimulation.Run(WindowOfEight(blocks: 300, window) with
        {
            DropFromServer = d => d.Message?.Block2?.Number == 16 && !lost && (lost = true),
        });

        outcome.Completed.Should().BeTrue(outcome.Failure);
        List<Datagram> requests = [.. outcome.Trace.Where(d => d.From.Equals(TransferSimulation.ClientAddress) && d.Message is { Code.IsRequest: true })];
        TimeSpan timeout = requests.GroupBy(d => d.Parsed.MessageId).Where(g => g.Count() > 1).Select(g => g.ElementAt(1).Time).Single();
        List<int> rounds = [.. requests.Where(d => d.Time > timeout).GroupBy(d => d.Time).OrderBy(g => g.Key).Select(g => g.Count())];
        rounds[0].Should().Be(afterwards);
    }

    private static (CoapPeerRetransmission State, ManualTimeProvider Time) Create(int nstart)
    {
        ManualTimeProvider time = new();
        CocoaOptions options = new() { WeakEstimator = false, CongestionWindow = true };
        return (CoapRetransmissionPolicy.Cocoa(options).CreatePeerState(Peer, CoapTransmissionParameters.Default with { NStart = nstart }, time), time);
    }

    /// <summary>A download of <paramref name="blocks"/> 256-byte blocks, 8 requests in flight and NSTART 8, over a link of 100 ms each way.</summary>
    private static TransferSetup WindowOfEight(int blocks, bool congestionWindow)
    {
        LinkProfile tenth = new() { Delay = TimeSpan.FromMilliseconds(100) };
        return new TransferSetup
        {
            BodyBytes = blocks * 256,
            BlocksInFlight = 8,
            Parameters = CoapTransmissionParameters.Default with { NStart = 8 },
            Policy = CoapRetransmissionPolicy.Cocoa(new CocoaOptions { WeakEstimator = false, CongestionWindow = congestionWindow }),
            Uplink = tenth,
            Downlink = tenth,
            Seed = 1,
        };
    }

    private static void Acknowledge(CoapPeerRetransmission state)
    {
        state.GetInitialTimeout(new FixedRandom(0));
        state.OnAcknowledged(TimeSpan.FromMilliseconds(500), 0);
    }
}
