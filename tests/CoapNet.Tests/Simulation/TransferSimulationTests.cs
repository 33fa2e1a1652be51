using CoapNet.Messaging;
using CoapNet.Messaging.Retransmission;
using CoapNet.QBlock;

namespace CoapNet.Tests.Simulation;

/// <summary>The real client and server over the simulated NB-IoT link of seed 002, in virtual time.</summary>
public class TransferSimulationTests
{
    [Fact]
    public void OnACleanLinkEachBlockTakesOneRoundTripOfTheLinksDelaysAndTransmissionTimes()
    {
        TransferOutcome outcome = TransferSimulation.Run(new TransferSetup
        {
            Uplink = NbIot.Uplink(GilbertElliott.None),
            Downlink = NbIot.Downlink(GilbertElliott.None),
            Seed = 1,
        });

        outcome.Completed.Should().BeTrue(outcome.Failure);
        outcome.Requests.Should().Be(400, "102,400 bytes in 256-byte blocks, one request each and no retransmission");

        // Stop and wait: every request waits for the previous block. Per round trip 200 + 400 ms of delay, 20 to 40 ms of
        // extra delay, and the transmission of the request (60 kbit/s) and the response (30 kbit/s) as the link carried them.
        double transmissions = (outcome.Uplink.Bytes * 8 / 60_000.0) + (outcome.Downlink.Bytes * 8 / 30_000.0);
        outcome.CompletionTime!.Value.TotalSeconds.Should().BeInRange(transmissions + (400 * 0.62), transmissions + (400 * 0.64));
        outcome.Uplink.Losses.Should().Be(0);
        outcome.Downlink.BufferDrops.Should().Be(0, "one packet in flight never fills the buffer");
    }

    [Fact]
    public void ARunIsTheSameForTheSameSeedAndDifferentForAnother()
    {
        static TransferOutcome Run(int seed) => TransferSimulation.Run(new TransferSetup
        {
            BodyBytes = 20_480,
            Policy = CoapRetransmissionPolicy.Cocoa(),
            Uplink = NbIot.Uplink(NbIot.Loss("high", 2)),
            Downlink = NbIot.Downlink(NbIot.Loss("high", 2)),
            Seed = seed,
        });

        TransferOutcome first = Run(7);
        TransferOutcome again = Run(7);
        TransferOutcome other = Run(8);

        first.Completed.Should().BeTrue(first.Failure);
        first.Requests.Should().BeGreaterThan(80, "18 % loss costs retransmissions");
        again.CompletionTime.Should().Be(first.CompletionTime);
        again.Trace.Select(d => (d.Time, d.ArrivesAt, d.Drop, d.Bytes.Length)).Should().Equal(first.Trace.Select(d => (d.Time, d.ArrivesAt, d.Drop, d.Bytes.Length)));
        again.TraceDigest.Should().Be(first.TraceDigest, "the same bytes at the same times, tokens aside");
        other.TraceDigest.Should().NotBe(first.TraceDigest);
    }

    [Fact]
    public void TheDefaultBackOffBoundedAt60SecondsStillGivesUpAfterMaxRetransmit()
    {
        // The server never answers (its direction loses everything): 2-3 s doubled to 60 s at most, 4 retransmissions.
        TransferOutcome outcome = TransferSimulation.Run(new TransferSetup
        {
            BodyBytes = 1024,
            Parameters = CoapTransmissionParameters.Default,
            Policy = new BoundedBackOffPolicy(CoapRetransmissionPolicy.Rfc7252, TimeSpan.FromSeconds(60)),
            Downlink = new LinkProfile { Loss = GilbertElliott.Constant(1) },
            Seed = 3,
        });

        outcome.Completed.Should().BeFalse();
        outcome.CompletionTime.Should().BeNull();
        outcome.Requests.Should().Be(5);
        outcome.Failure.Should().Contain("4 retransmissions");
    }

    [Fact]
    public void ACellsDevicesShareOneBottleneckAndEachGetsTheWholeImage()
    {
        TransferSetup setup = new()
        {
            BodyBytes = 20 * 256,
            Uplink = NbIot.Uplink(GilbertElliott.None),
            Downlink = NbIot.Downlink(GilbertElliott.None),
            PathMtu = 296,
            TokenLength = 2,
            Immutable = true,
            Seed = 3,
        };

        TransferOutcome alone = TransferSimulation.Run(setup);
        CellOutcome three = TransferSimulation.RunCell(setup with { Clients = 3 });
        CellOutcome twelve = TransferSimulation.RunCell(setup with { Clients = 12 });

        three.Failures.Should().OnlyContain(f => f == null);
        three.CompletionTimes.Should().HaveCount(3).And.OnlyContain(t => t != null);
        three.Downlink.Datagrams.Should().Be(3 * alone.Downlink.Datagrams, "one queue carries every device's blocks");
        three.CompletionTimes.Max()!.Value.TotalSeconds.Should().BeLessThan(alone.CompletionTime!.Value.TotalSeconds * 1.2, "three stop-and-wait downloads use little of the link");
        twelve.Failures.Should().OnlyContain(f => f == null);
        twelve.CompletionTimes.Min()!.Value.Should().BeGreaterThan(alone.CompletionTime!.Value * 1.2, "twelve at once fill the 30 kbit/s link: each waits for the others' blocks");
        TransferSimulation.RunCell(setup with { Clients = 3 }).Should().BeEquivalentTo(three, "a run is a function of its seed");
    }

    [Fact]
    public void ACellInWhichADeviceGivesUpEndsWhereItLastSentOnEveryRun()
    {
        // Device 0 hears nothing: it sends its request at 0 and once more after ACK_TIMEOUT (2-3 s), and gives up after the
        // doubled timeout (6-9 s in all). Its task fails on the thread pool, which the virtual clock does not wait for, so the
        // cell's duration is its last send, not the moment the failure happens to be seen; device 1 is done long before.
        TransferSetup setup = new()
        {
            BodyBytes = 8 * 256,
            Parameters = CoapTransmissionParameters.Default with { MaxRetransmit = 1 },
            Clients = 2,
            DropFromServer = _ => true,
            Seed = 5,
        };

        CellOutcome outcome = TransferSimulation.RunCell(setup);

        outcome.Failures[0].Should().NotBeNull();
        outcome.CompletionTimes[1].Should().NotBeNull().And.BeLessThan(TimeSpan.FromSeconds(1));
        outcome.Duration.Should().BeGreaterThanOrEqualTo(TimeSpan.FromSeconds(2)).And.BeLessThanOrEqualTo(TimeSpan.FromSeconds(3), "the retransmission is the last send");
        TransferSimulation.RunCell(setup).Duration.Should().Be(outcome.Duration, "a run is a function of its seed");
    }

    [Fact]
    public void AQBlock2DownloadReportsItsProgressAndNeedsARequestPerSetNotPerBlock()
    {
        // The simulation times a download by its progress reports (GetAsync with a reporter): Q-Block2 must report each
        // block as block-wise does, not hand the transfer back to block-wise because a reporter was given.
        TransferOutcome outcome = TransferSimulation.Run(new TransferSetup
        {
            QBlock = new QBlockOptions { Enabled = true, MaxPayloads = 4 },
            Uplink = NbIot.Uplink(GilbertElliott.None),
            Downlink = NbIot.Downlink(GilbertElliott.None),
            Seed = 1,
        });

        outcome.Completed.Should().BeTrue(outcome.Failure);
        outcome.Requests.Should().Be(100, "400 blocks in sets of MAX_PAYLOADS 4: the request for the body and a 'Continue' after each whole set (RFC 9177 section 4.4)");
        outcome.Trace.Should().Contain(d => d.Message != null && d.Message.Options.Contains(CoapNet.Messages.CoapOptionNumber.QBlock2));
        outcome.Trace.Should().OnlyContain(d => d.Message == null || d.Message.Block2 == null, "no RFC 7959 Block2 is used");
        outcome.Downlink.BufferDrops.Should().Be(0, "a set of 4 blocks of 313 bytes, two fragments each on the 296-byte MTU, fits the 2,500-byte buffer");
    }
}
