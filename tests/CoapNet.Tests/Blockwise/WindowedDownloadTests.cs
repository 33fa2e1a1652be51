using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.Tests.Blockwise;

/// <summary>
/// A Block2 download with several requests outstanding (BlockwiseOptions.MaxBlocksInFlight), between our client and
/// server over a simulated link in virtual time: the window opens once Size2 is known, NSTART still bounds it (RFC 7252
/// section 4.7), and blocks that arrive out of order are put back in order.
/// </summary>
public class WindowedDownloadTests
{
    private static readonly LinkProfile TenthOfASecond = new() { Delay = TimeSpan.FromMilliseconds(100) };

    [Fact]
    public void AfterTheFirstBlockTheWindowsRequestsGoOutTogether()
    {
        TransferOutcome outcome = Download(window: 4, nstart: 4, TenthOfASecond, TenthOfASecond);

        outcome.Completed.Should().BeTrue(outcome.Failure);
        outcome.Requests.Should().Be(20);
        List<Datagram> requests = Requests(outcome);
        requests.Skip(1).Take(4).Select(d => d.Parsed.Block2!.Value.Number).Should().Equal(1, 2, 3, 4);
        requests.Skip(1).Take(4).Select(d => d.Time).Distinct().Should().Equal(TimeSpan.FromMilliseconds(200));
        MaxOutstanding(outcome).Should().Be(4);

        // Block 0, then 19 blocks four at a time: five more round trips of 200 ms, against 19 one after the other.
        outcome.CompletionTime.Should().Be(TimeSpan.FromMilliseconds(200 * 6));
    }

    [Fact]
    public void NStartBoundsTheWindow()
    {
        TransferOutcome outcome = Download(window: 8, nstart: 2, TenthOfASecond, TenthOfASecond);

        outcome.Completed.Should().BeTrue(outcome.Failure);
        MaxOutstanding(outcome).Should().Be(2, "NSTART 2 holds back what the window of 8 would send");
        outcome.CompletionTime.Should().Be(TimeSpan.FromMilliseconds(200 * 11), "block 0, then 19 blocks two at a time");
    }

    [Fact]
    public void WithoutAWindowBlocksGoOneAfterTheOtherAsBefore()
    {
        TransferOutcome outcome = Download(window: 1, nstart: 4, TenthOfASecond, TenthOfASecond);

        MaxOutstanding(outcome).Should().Be(1);
        outcome.CompletionTime.Should().Be(TimeSpan.FromMilliseconds(200 * 20));
    }

    [Fact]
    public void BlocksThatArriveOutOfOrderArePutBackInOrder()
    {
        LinkProfile lossy = TenthOfASecond with { Loss = GilbertElliott.Constant(0.2), ExtraDelayMax = TimeSpan.FromMilliseconds(5) };

        TransferOutcome outcome = Download(window: 4, nstart: 4, lossy, lossy);

        outcome.Completed.Should().BeTrue("the body is compared with the resource byte for byte: {0}", outcome.Failure);
        List<int> arrived = outcome.Trace
            .Where(d => d.From.Equals(TransferSimulation.ServerAddress) && !d.Dropped && d.Message?.Block2 is not null)
            .OrderBy(d => d.ArrivesAt)
            .Select(d => d.Parsed.Block2!.Value.Number)
            .ToList();
        arrived.Should().NotBeInAscendingOrder("a lost block is retransmitted after later ones arrived");
        arrived.Distinct().Should().HaveCount(20);
    }

    [Fact]
    public void WithoutSize2TheWindowAsksAheadUntilABlockSaysItIsTheLast()
    {
        // On a path with an MTU the server sends Size2 only when asked: the window asks ahead, learns the end from block
        // 19 (M clear), and ends the requests past it; the rounds are those of a window that knew the size.
        TransferOutcome outcome = TransferSimulation.Run(new TransferSetup
        {
            BodyBytes = 20 * 256,
            BlocksInFlight = 4,
            Parameters = CoapTransmissionParameters.Default with { NStart = 4 },
            Uplink = TenthOfASecond,
            Downlink = TenthOfASecond,
            PathMtu = 1500,
            TokenLength = 2,
            Seed = 5,
        });

        outcome.Completed.Should().BeTrue("the body is compared with the resource byte for byte: {0}", outcome.Failure);
        outcome.Trace.Where(d => d.From.Equals(TransferSimulation.ServerAddress) && d.Message?.Block2 is not null)
            .Should().OnlyContain(d => d.Parsed.Size2 == null, "no Size2 unasked toward a path with an MTU");
        List<int> asked = [.. Requests(outcome).Select(d => d.Parsed.Block2!.Value.Number)];
        asked.Where(n => n > 19).Should().HaveCount(3, "at most the window less one past the end");
        asked.Should().OnlyHaveUniqueItems("nothing was lost, so nothing was asked twice");
        outcome.CompletionTime.Should().Be(TimeSpan.FromMilliseconds(200 * 6), "block 0, then 19 blocks four at a time, as with Size2");
    }

    private static TransferOutcome Download(int window, int nstart, LinkProfile up, LinkProfile down) => TransferSimulation.Run(new TransferSetup
    {
        BodyBytes = 20 * 256,
        BlocksInFlight = window,
        Parameters = CoapTransmissionParameters.Default with { NStart = nstart },
        Uplink = up,
        Downlink = down,
        Seed = 5,
    });

    private static List<Datagram> Requests(TransferOutcome outcome)
        => outcome.Trace.Where(d => d.From.Equals(TransferSimulation.ClientAddress) && d.Message is { Code.IsRequest: true }).ToList();

    /// <summary>The most requests the client had sent and not yet had answered at any one time, from the trace.</summary>
    private static int MaxOutstanding(TransferOutcome outcome)
    {
        List<(TimeSpan At, int Change)> events = [];
        HashSet<ushort> sent = [];
        HashSet<ushort> answered = [];
        foreach (Datagram d in outcome.Trace)
        {
            if (d.From.Equals(TransferSimulation.ClientAddress) && d.Message is { Code.IsRequest: true } request && sent.Add(request.MessageId))
            {
                events.Add((d.Time, +1));
            }
            else if (d.From.Equals(TransferSimulation.ServerAddress) && !d.Dropped && d.Message is { Type: CoapMessageType.Acknowledgement } ack && answered.Add(ack.MessageId))
            {
                events.Add((d.ArrivesAt!.Value, -1));
            }
        }

        int outstanding = 0, max = 0;
        foreach ((_, int change) in events.OrderBy(e => e.At).ThenBy(e => e.Change))
        {
            outstanding += change;
            max = Math.Max(max, outstanding);
        }

        return max;
    }
}
