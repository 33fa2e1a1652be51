using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Simulation;

/// <summary>
/// The simulated link's statistics against its parameters, seen from the receiving peer: what arrived, and when (the
/// clock a delivery runs at). Every run is seeded, so each bound below is checked on one fixed sample; the bounds are
/// four standard deviations of that sample's statistic wide.
/// </summary>
public sealed class SimulatedLinkTests : IDisposable
{
    private readonly ManualTimeProvider _time = new();
    private readonly InMemoryNetwork _network;
    private readonly TestPeer _sender;
    private readonly TestPeer _receiver;
    private readonly List<(TimeSpan At, int Length)> _arrivals = [];

    public SimulatedLinkTests()
    {
        _network = new InMemoryNetwork(_time);
        _sender = new TestPeer(_network, "10.0.0.1");
        _receiver = new TestPeer(_network, "10.0.0.2") { OnReceived = (_, d) => _arrivals.Add((_time.Elapsed, d.Bytes.Length)) };
    }

    [Fact]
    public void ConstantLossDropsItsShareOfDatagramsIndependently()
    {
        SimulatedLink link = Simulate(new LinkProfile { Loss = GilbertElliott.Constant(0.1) });

        SendSpaced(20_000, 72, TimeSpan.FromMilliseconds(10));

        // Binomial(20000, 0.1): sd = 0.0021.
        double lost = 1 - (_arrivals.Count / 20_000.0);
        lost.Should().BeApproximately(0.1, 4 * 0.0021);
        link.Statistics.Losses.Should().Be(20_000 - _arrivals.Count, "what the receiver missed is what the link lost");
        ConditionalLoss().Should().BeApproximately(0.1, 4 * Math.Sqrt(0.1 * 0.9 / 2000), "a constant rate has no memory");
    }

    [Fact]
    public void TwoStateLossHasItsAverageAndItsBursts()
    {
        GilbertElliott model = GilbertElliott.Alternating(0.02, 0.8, 0.18, meanBadRun: 3);
        model.AverageLoss.Should().BeApproximately(0.18, 1e-12);
        model.MeanBadRun.Should().BeApproximately(3, 1e-12);
        SimulatedLink link = Simulate(new LinkProfile { Loss = model });

        SendSpaced(50_000, 72, TimeSpan.FromMilliseconds(10));

        // The chain's samples are correlated, so the bounds are wider than a binomial's: runs of 3 in 50,000 packets.
        (1 - (_arrivals.Count / 50_000.0)).Should().BeApproximately(0.18, 0.012);
        (link.Statistics.PacketsInBadState / 50_000.0).Should().BeApproximately(model.BadShare, 0.015);

        // P(lost | the previous was lost): each packet's loss in its state, then a step of the chain (good to bad with
        // p, bad to good with r), then the next packet's loss in the new state.
        double p = model.GoodToBad, r = model.BadToGood, g = model.GoodLoss, b = model.BadLoss, bad = model.BadShare;
        double bothLost = ((1 - bad) * g * (((1 - p) * g) + (p * b))) + (bad * b * ((r * g) + ((1 - r) * b)));
        ConditionalLoss().Should().BeApproximately(bothLost / 0.18, 0.03, "a loss in the bad state is likely followed by another");
        ConditionalLoss().Should().BeGreaterThan(0.5, "far above the 18 % average: the losses come in bursts");
    }

    [Fact]
    public void EachPacketTakesItsTransmissionTimeTheDelayAndAUniformExtraDelay()
    {
        Simulate(new LinkProfile
        {
            BitsPerSecond = 60_000,
            Delay = TimeSpan.FromMilliseconds(200),
            ExtraDelayMin = TimeSpan.FromMilliseconds(10),
            ExtraDelayMax = TimeSpan.FromMilliseconds(20),
        });

        List<TimeSpan> sentAt = SendSpaced(1000, 72, TimeSpan.FromSeconds(1));

        // 100 bytes (72 and 28 of headers) at 60 kbit/s: 13.333 ms; then 200 ms and 10-20 ms. Uniform: mean 15 ms, sd 2.887 ms.
        _arrivals.Should().HaveCount(1000);
        double[] delays = _arrivals.Select((a, i) => (a.At - sentAt[i]).TotalMilliseconds).ToArray();
        delays.Min().Should().BeGreaterThanOrEqualTo(223.333 - 0.001);
        delays.Max().Should().BeLessThanOrEqualTo(233.334);
        delays.Average().Should().BeApproximately(228.333, 4 * 2.887 / Math.Sqrt(1000));
        delays.Count(d => d < 228.333).Should().BeInRange(500 - 63, 500 + 63, "half below the middle of the uniform range");
    }

    [Fact]
    public void TheBottleneckSendsOnePacketAfterAnotherAndDropsWhatItsBufferCannotHold()
    {
        SimulatedLink link = Simulate(new LinkProfile { BitsPerSecond = 8000, BufferBytes = 1000 });

        // Ten packets of 200 bytes at once into 1,000 bytes of buffer at 1,000 bytes a second: five fit, five are refused.
        for (int i = 0; i < 10; i++)
        {
            _sender.SendBytes(new byte[172], _receiver.EndPoint);
        }

        // Once the first has left (at 200 ms) there is room for one more, which leaves after the fifth.
        _time.Advance(TimeSpan.FromMilliseconds(250));
        _sender.SendBytes(new byte[172], _receiver.EndPoint);
        _time.Advance(TimeSpan.FromSeconds(10));

        _arrivals.Select(a => a.At.TotalMilliseconds).Should().Equal(200, 400, 600, 800, 1000, 1200);
        _network.Sent.Select(d => d.Drop).Should().Equal([.. Enumerable.Repeat(LinkDrop.None, 5), .. Enumerable.Repeat(LinkDrop.Buffer, 5), LinkDrop.None]);
        link.Statistics.BufferDrops.Should().Be(5);
        link.Statistics.MaxQueuedBytes.Should().Be(1000);
    }

    [Fact]
    public void AQueueBuildsUpAndDrainsAtTheRate()
    {
        Simulate(new LinkProfile { BitsPerSecond = 8000, BufferBytes = 1000 });

        _sender.SendBytes(new byte[172], _receiver.EndPoint);
        _sender.SendBytes(new byte[172], _receiver.EndPoint);
        _time.Advance(TimeSpan.FromMilliseconds(300));
        _sender.SendBytes(new byte[172], _receiver.EndPoint);
        _time.Advance(TimeSpan.FromSeconds(1));

        // The third waits for the second, which leaves at 400 ms: 600 ms.
        _arrivals.Select(a => a.At.TotalMilliseconds).Should().Equal(200, 400, 600);
    }

    [Fact]
    public void ADatagramLargerThanTheMtuTravelsAsFragmentsAndIsLostWithAnyOfThem()
    {
        SimulatedLink link = Simulate(new LinkProfile { Mtu = 296, BitsPerSecond = 8000, Loss = GilbertElliott.Constant(0.5) });

        // 300 bytes: an IPv4 packet of 328, cut into 292 (20 + 272) and 56 (20 + 36): 348 bytes on the link, 348 ms.
        List<TimeSpan> sentAt = SendSpaced(4000, 300, TimeSpan.FromSeconds(1));

        link.Statistics.Packets.Should().Be(8000);
        link.Statistics.Bytes.Should().Be(4000 * 348);

        // Both fragments must arrive: 1/4 of the datagrams, each whole, when its second fragment does.
        (_arrivals.Count / 4000.0).Should().BeApproximately(0.25, 4 * Math.Sqrt(0.25 * 0.75 / 4000));
        _arrivals.Should().OnlyContain(a => a.Length == 300);
        List<Datagram> delivered = _network.Sent.Where(d => !d.Dropped).ToList();
        delivered.Select(d => d.ArrivesAt!.Value - d.Time).Should().OnlyContain(t => t == TimeSpan.FromMilliseconds(348));
        _network.Sent.Where(d => d.Dropped).Should().OnlyContain(d => d.Drop == LinkDrop.Loss);
        sentAt.Should().HaveCount(4000);
    }

    [Fact]
    public void ALinkIsTheSameForTheSameSeedAndDifferentForAnother()
    {
        static List<(TimeSpan, bool)> Run(int seed)
        {
            ManualTimeProvider time = new();
            InMemoryNetwork network = new(time);
            using TestPeer a = new(network, "10.0.0.1");
            using TestPeer b = new(network, "10.0.0.2");
            network.Connect(a.EndPoint, b.EndPoint, NbIot.Uplink(NbIot.Loss("high", 3)), NbIot.Downlink(NbIot.Loss("high", 3)), seed);
            for (int i = 0; i < 500; i++)
            {
                a.SendBytes(new byte[40], b.EndPoint);
                b.SendBytes(new byte[280], a.EndPoint);
                time.Advance(TimeSpan.FromMilliseconds(50));
            }

            return network.Sent.Select(d => (d.ArrivesAt ?? TimeSpan.MinValue, d.Dropped)).ToList();
        }

        Run(42).Should().Equal(Run(42));
        Run(42).Should().NotEqual(Run(43));
    }

    [Fact]
    public void AProfileOutOfRangeIsRefusedByName()
    {
        NetworkLink link = _network.Link(_sender.EndPoint, _receiver.EndPoint);

        link.Invoking(l => l.Simulate(new LinkProfile { Mtu = 60 }, 1)).Should().Throw<ArgumentException>().WithParameterName(nameof(LinkProfile.Mtu));
        link.Invoking(l => l.Simulate(new LinkProfile { BitsPerSecond = 0 }, 1)).Should().Throw<ArgumentException>().WithParameterName(nameof(LinkProfile.BitsPerSecond));
        link.Invoking(l => l.Simulate(new LinkProfile { ExtraDelayMin = TimeSpan.FromMilliseconds(20), ExtraDelayMax = TimeSpan.FromMilliseconds(10) }, 1))
            .Should().Throw<ArgumentException>().WithParameterName(nameof(LinkProfile.ExtraDelayMax));
        FluentActions.Invoking(() => GilbertElliott.Alternating(0.02, 0.8, 0.9, 3)).Should().Throw<ArgumentException>();
        link.Model.Should().BeNull("a refused profile is not attached");
    }

    public void Dispose()
    {
        _sender.Dispose();
        _receiver.Dispose();
    }

    private SimulatedLink Simulate(LinkProfile profile) => _network.Link(_sender.EndPoint, _receiver.EndPoint).Simulate(profile, seed: 2024);

    /// <summary>Sends <paramref name="count"/> datagrams of <paramref name="length"/> bytes, one per <paramref name="spacing"/>, delivering as the clock moves.</summary>
    private List<TimeSpan> SendSpaced(int count, int length, TimeSpan spacing)
    {
        List<TimeSpan> sentAt = [];
        for (int i = 0; i < count; i++)
        {
            sentAt.Add(_time.Elapsed);
            byte[] bytes = new byte[length];
            System.Buffers.Binary.BinaryPrimitives.WriteInt32BigEndian(bytes, i);
            _sender.SendBytes(bytes, _receiver.EndPoint);
            _time.Advance(spacing);
        }

        _time.Advance(TimeSpan.FromMinutes(1));
        return sentAt;
    }

    /// <summary>Among the datagrams sent right after a lost one, the share that was lost too (from the network's record).</summary>
    private double ConditionalLoss()
    {
        IReadOnlyList<Datagram> sent = _network.Sent;
        int afterLoss = 0, lostAfterLoss = 0;
        for (int i = 1; i < sent.Count; i++)
        {
            if (sent[i - 1].Dropped)
            {
                afterLoss++;
                lostAfterLoss += sent[i].Dropped ? 1 : 0;
            }
        }

        return (double)lostAfterLoss / afterLoss;
    }
}
