using System.Net;
using CoapNet.Messages;
using CoapNet.Transports;

namespace CoapNet.Tests.Infrastructure;

public class InMemoryNetworkTests
{
    private static readonly IPEndPoint A = InMemoryNetwork.EndPoint("10.0.0.1");
    private static readonly IPEndPoint B = InMemoryNetwork.EndPoint("10.0.0.2:5684");

    [Fact]
    public void QueuedDatagramsArriveInOrderOnlyWhenPumped()
    {
        InMemoryNetwork network = new();
        Recorder atB = new();
        using InMemoryTransport a = network.CreateTransport(A);
        using InMemoryTransport b = network.CreateTransport(B);
        b.Start(atB);

        a.Send([1], B);
        a.Send([2], B);
        atB.Datagrams.Should().BeEmpty();
        network.InFlightCount.Should().Be(2);

        network.DeliverNext().Should().BeTrue();
        atB.Datagrams.Should().Equal([(A, "01")]);
        network.DeliverAll().Should().Be(1);
        atB.Datagrams.Should().Equal([(A, "01"), (A, "02")]);
        network.DeliverNext().Should().BeFalse();
    }

    [Fact]
    public void ImmediateDeliveryHappensInsideTheSend()
    {
        InMemoryNetwork network = new() { DeliversImmediately = true };
        Recorder atB = new();
        using InMemoryTransport a = network.CreateTransport(A);
        using InMemoryTransport b = network.CreateTransport(B);
        b.Start(atB);

        a.Send([7], B);

        atB.Datagrams.Should().Equal([(A, "07")]);
        network.InFlightCount.Should().Be(0);
    }

    [Fact]
    public void EverySendIsRecordedWithTimeAddressesAndParsedMessage()
    {
        ManualTimeProvider time = new();
        InMemoryNetwork network = new(time);
        using InMemoryTransport a = network.CreateTransport(A);
        byte[] ping = [0x40, 0x00, 0x12, 0x34];

        time.Advance(TimeSpan.FromSeconds(4));
        a.Send(ping, B);
        a.Send([0xFF], B);

        IReadOnlyList<Datagram> sent = network.Sent;
        sent.Should().HaveCount(2);
        sent[0].Should().BeEquivalentTo(new { Sequence = 1, Time = TimeSpan.FromSeconds(4), From = A, To = B, LinkOrdinal = 1, Dropped = false });
        sent[0].Bytes.Should().Equal(ping);
        sent[0].Parsed.Type.Should().Be(CoapMessageType.Confirmable);
        sent[0].Parsed.MessageId.Should().Be(0x1234);
        sent[1].Message.Should().BeNull();
        sent[1].LinkOrdinal.Should().Be(2);
        network.SentBetween(A, B).Should().HaveCount(2);
        network.SentBetween(B, A).Should().BeEmpty();
    }

    [Fact]
    public void DropFiltersDiscardTheChosenDatagrams()
    {
        InMemoryNetwork network = new();
        Recorder atB = new();
        using InMemoryTransport a = network.CreateTransport(A);
        using InMemoryTransport b = network.CreateTransport(B);
        b.Start(atB);
        NetworkLink link = network.Link(A, B).DropNth(2).DropWhere(d => d.Bytes[0] == 5);

        for (byte i = 1; i <= 6; i++)
        {
            a.Send([i], B);
        }

        link.DropNext(1);
        a.Send([7], B);
        a.Send([8], B);
        network.DeliverAll();

        atB.Datagrams.Select(d => d.Hex).Should().Equal("01", "03", "04", "06", "08");
        network.Sent.Where(d => d.Dropped).Select(d => d.Bytes[0]).Should().Equal(2, 5, 7);
        link.DatagramCount.Should().Be(8);

        link.DropAll();
        a.Send([9], B);
        link.Restore();
        a.Send([10], B);
        network.DeliverAll();
        atB.Datagrams.Select(d => d.Hex).Should().EndWith(["0A"]).And.NotContain("09");
    }

    [Fact]
    public void AFilterAppliesToOneDirectionOnly()
    {
        InMemoryNetwork network = new();
        Recorder atA = new();
        using InMemoryTransport a = network.CreateTransport(A);
        using InMemoryTransport b = network.CreateTransport(B);
        a.Start(atA);
        network.Link(A, B).DropAll();

        b.Send([1], A);
        network.DeliverAll();

        atA.Datagrams.Should().ContainSingle();
    }

    [Fact]
    public void AnAddressIsBoundOnceAtATime()
    {
        InMemoryNetwork network = new();
        InMemoryTransport first = network.CreateTransport(A);

        Action again = () => network.CreateTransport(A);
        again.Should().Throw<InvalidOperationException>();

        first.Dispose();
        using InMemoryTransport second = network.CreateTransport(A);
        second.LocalEndPoint.Should().Be(A);
    }

    [Fact]
    public void ADatagramToNobodyIsRecordedAndLost()
    {
        InMemoryNetwork network = new();
        using InMemoryTransport a = network.CreateTransport(A);

        a.Send([1], B);

        network.DeliverAll().Should().Be(1);
        network.Sent.Should().ContainSingle();
    }

    [Fact]
    public void ASendAfterDisposeIsRefused()
    {
        InMemoryNetwork network = new();
        InMemoryTransport a = network.CreateTransport(A);
        a.Dispose();

        Action send = () => a.Send([1], B);

        send.Should().Throw<ObjectDisposedException>();
    }

    [Fact]
    public void WaitForSentReturnsOnceAnotherThreadHasSent()
    {
        InMemoryNetwork network = new();
        using InMemoryTransport a = network.CreateTransport(A);

        Thread sender = new(() => a.Send([1], B)) { IsBackground = true };
        sender.Start();

        network.WaitForSent(1, TimeSpan.FromSeconds(10)).Should().BeTrue();
        network.WaitForSent(2, TimeSpan.FromMilliseconds(1)).Should().BeFalse();
        sender.Join();
    }

    private sealed class Recorder : IDatagramReceiver
    {
        public List<(IPEndPoint From, string Hex)> Datagrams { get; } = [];

        public void OnDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote) => Datagrams.Add((remote, Convert.ToHexString(datagram)));
    }
}
