using System.Net;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;
using static CoapNet.Tests.Messaging.MessagingHarness;

namespace CoapNet.Tests.Messaging;

/// <summary>RFC 7252 section 4.2: confirmable messages, exponential back-off, ACK and RST.</summary>
public class RetransmissionTests
{
    private static readonly TimeSpan Tick = TimeSpan.FromTicks(1);

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(42)]
    public async Task RetransmitsFourTimesWithDoublingTimeoutsThenTimesOut(int seed)
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress, h.Options(seed: seed));

        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint);

        // The first timeout is random in [ACK_TIMEOUT, ACK_TIMEOUT x ACK_RANDOM_FACTOR] = [2 s, 3 s].
        h.Time.Advance(TimeSpan.FromSeconds(3));
        IReadOnlyList<Datagram> sent = h.Between(client.LocalEndPoint, server.EndPoint);
        sent.Should().HaveCount(2);
        TimeSpan initial = sent[1].Time - sent[0].Time;
        initial.Should().BeGreaterThanOrEqualTo(TimeSpan.FromSeconds(2)).And.BeLessThanOrEqualTo(TimeSpan.FromSeconds(3));

        // Then doubled at each retransmission; the request gives up after the fourth one's timeout: 1+2+4+8+16 = 31 initial timeouts.
        h.Time.AdvanceTo(sent[0].Time + (initial * 31) - Tick);
        request.IsCompleted.Should().BeFalse();
        sent = h.Between(client.LocalEndPoint, server.EndPoint);
        sent.Select(d => d.Time - sent[0].Time).Should().Equal(TimeSpan.Zero, initial, initial * 3, initial * 7, initial * 15);
        sent.Should().AllSatisfy(d => d.Bytes.Should().Equal(sent[0].Bytes));

        h.Time.Advance(Tick);
        request.IsFaulted.Should().BeTrue();
        (initial * 31).Should().BeLessThanOrEqualTo(CoapTransmissionParameters.Default.MaxTransmitWait);
        Func<Task> outcome = () => request.Done();
        (await outcome.Should().ThrowAsync<CoapTimeoutException>()).Which.RemoteEndPoint.Should().Be(server.EndPoint);

        h.Time.Advance(TimeSpan.FromMinutes(10));
        h.Between(client.LocalEndPoint, server.EndPoint).Should().HaveCount(5);
    }

    [Fact]
    public void TheInitialTimeoutIsRandomWithinTheRfcBounds()
    {
        List<TimeSpan> initials = [];
        for (int seed = 0; seed < 40; seed++)
        {
            using MessagingHarness h = new();
            TestPeer server = h.Peer(ServerAddress);
            CoapEndpoint client = h.Endpoint(ClientAddress, h.Options(seed: seed));
            _ = client.SendRequestAsync(Get(), server.EndPoint);
            h.Time.Advance(TimeSpan.FromSeconds(3));
            IReadOnlyList<Datagram> sent = h.Between(client.LocalEndPoint, server.EndPoint);
            initials.Add(sent[1].Time - sent[0].Time);
        }

        initials.Should().AllSatisfy(t => t.Should().BeGreaterThanOrEqualTo(TimeSpan.FromSeconds(2)).And.BeLessThanOrEqualTo(TimeSpan.FromSeconds(3)));
        initials.Min().Should().BeLessThan(TimeSpan.FromSeconds(2.25), "the jitter spreads over the whole range");
        initials.Max().Should().BeGreaterThan(TimeSpan.FromSeconds(2.75), "the jitter spreads over the whole range");
    }

    [Fact]
    public async Task CustomParametersSetTheScheduleExactly()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapTransmissionParameters parameters = new() { AckTimeout = TimeSpan.FromSeconds(1), AckRandomFactor = 1, MaxRetransmit = 2 };
        CoapEndpoint client = h.Endpoint(ClientAddress, h.Options(parameters));

        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint);
        h.Time.Advance(TimeSpan.FromSeconds(7) - Tick);

        h.Between(client.LocalEndPoint, server.EndPoint).Select(d => d.Time)
            .Should().Equal(TimeSpan.Zero, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(3));
        request.IsCompleted.Should().BeFalse();

        h.Time.Advance(Tick);
        Func<Task> outcome = () => request.Done();
        await outcome.Should().ThrowAsync<CoapTimeoutException>();
    }

    [Fact]
    public async Task ALargerRandomFactorAndMoreRetransmissionsStretchTheSchedule()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapTransmissionParameters parameters = new() { AckTimeout = TimeSpan.FromMilliseconds(500), AckRandomFactor = 2, MaxRetransmit = 6 };
        CoapEndpoint client = h.Endpoint(ClientAddress, h.Options(parameters));

        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint);
        h.Time.Advance(TimeSpan.FromSeconds(1));
        TimeSpan initial = h.Between(client.LocalEndPoint, server.EndPoint)[1].Time;
        initial.Should().BeGreaterThanOrEqualTo(TimeSpan.FromMilliseconds(500)).And.BeLessThanOrEqualTo(TimeSpan.FromSeconds(1));

        h.Time.AdvanceTo((initial * 127) - Tick);
        h.Between(client.LocalEndPoint, server.EndPoint).Select(d => d.Time)
            .Should().Equal(TimeSpan.Zero, initial, initial * 3, initial * 7, initial * 15, initial * 31, initial * 63);
        request.IsCompleted.Should().BeFalse();

        h.Time.Advance(Tick);
        Func<Task> outcome = () => request.Done();
        await outcome.Should().ThrowAsync<CoapTimeoutException>();
        (initial * 127).Should().BeLessThanOrEqualTo(parameters.MaxTransmitWait);
    }

    [Fact]
    public async Task WithNoRetransmissionsTheRequestTimesOutAfterTheFirstTimeout()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapTransmissionParameters parameters = new() { AckTimeout = TimeSpan.FromSeconds(2), AckRandomFactor = 1, MaxRetransmit = 0 };
        CoapEndpoint client = h.Endpoint(ClientAddress, h.Options(parameters));

        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint);
        h.Time.Advance(TimeSpan.FromSeconds(2));

        h.Between(client.LocalEndPoint, server.EndPoint).Should().ContainSingle();
        Func<Task> outcome = () => request.Done();
        await outcome.Should().ThrowAsync<CoapTimeoutException>();
    }

    [Fact]
    public async Task RetransmissionStopsAtThePiggybackedAcknowledgement()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint);
        h.Advance(TimeSpan.FromSeconds(3));
        server.Received.Should().HaveCount(2);

        server.SendPiggybacked(server.Last.Parsed, client.LocalEndPoint, CoapCode.Content, "here");
        h.Advance(TimeSpan.FromMinutes(10));

        (await request.Done()).GetPayloadString().Should().Be("here");
        h.Between(client.LocalEndPoint, server.EndPoint).Should().HaveCount(2);
    }

    [Fact]
    public void RetransmissionStopsAtAnEmptyAcknowledgement()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint);
        h.Network.DeliverAll();

        server.SendAck(server.Last.Parsed.MessageId, client.LocalEndPoint);
        h.Advance(TimeSpan.FromSeconds(90));

        h.Between(client.LocalEndPoint, server.EndPoint).Should().ContainSingle();
        request.IsCompleted.Should().BeFalse("the response is still to come separately");
    }

    [Fact]
    public async Task AResetFailsTheRequestAndStopsRetransmission()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint);
        h.Network.DeliverAll();

        server.SendReset(server.Last.Parsed.MessageId, client.LocalEndPoint);
        h.Advance(TimeSpan.FromMinutes(10));

        Func<Task> outcome = () => request.Done();
        (await outcome.Should().ThrowAsync<CoapResetException>()).Which.RemoteEndPoint.Should().Be(server.EndPoint);
        h.Between(client.LocalEndPoint, server.EndPoint).Should().ContainSingle();
    }

    [Fact]
    public async Task AnAcknowledgementWithAnotherMessageIdDoesNotStopRetransmission()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint);
        h.Network.DeliverAll();
        ushort messageId = server.Last.Parsed.MessageId;

        server.SendAck(unchecked((ushort)(messageId + 1)), client.LocalEndPoint);
        server.SendPiggybacked(WithMessageId(server.Last.Parsed, unchecked((ushort)(messageId - 1))), client.LocalEndPoint, CoapCode.Content);
        server.SendReset(unchecked((ushort)(messageId + 1)), client.LocalEndPoint);
        h.Advance(TimeSpan.FromMinutes(10));

        h.Between(client.LocalEndPoint, server.EndPoint).Should().HaveCount(5);
        Func<Task> outcome = () => request.Done();
        await outcome.Should().ThrowAsync<CoapTimeoutException>();
    }

    [Fact]
    public async Task AnAcknowledgementFromAnotherEndpointDoesNotStopRetransmission()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        TestPeer stranger = h.Peer("10.0.0.3");
        TestPeer samePortOtherHost = h.Peer("10.0.0.2:5684");
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint);
        h.Network.DeliverAll();
        CoapMessage sent = server.Last.Parsed;

        stranger.SendAck(sent.MessageId, client.LocalEndPoint);
        stranger.SendPiggybacked(sent, client.LocalEndPoint, CoapCode.Content, "not from the server");
        samePortOtherHost.SendAck(sent.MessageId, client.LocalEndPoint);
        stranger.SendReset(sent.MessageId, client.LocalEndPoint);
        h.Advance(TimeSpan.FromMinutes(10));

        h.Between(client.LocalEndPoint, server.EndPoint).Should().HaveCount(5);
        Func<Task> outcome = () => request.Done();
        await outcome.Should().ThrowAsync<CoapTimeoutException>();
    }

    [Fact]
    public async Task ALostRequestIsRecoveredByItsRetransmission()
    {
        using MessagingHarness h = new();
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Echo());
        CoapEndpoint client = h.Endpoint(ClientAddress);
        h.Network.Link(client.LocalEndPoint, server.LocalEndPoint).DropNth(1, 2);

        Task<CoapMessage> request = client.SendRequestAsync(Get("lossy"), server.LocalEndPoint);
        h.Advance(TimeSpan.FromSeconds(10));

        (await request.Done()).GetPayloadString().Should().Be("/lossy");
        h.AllBetween(client.LocalEndPoint, server.LocalEndPoint).Select(d => d.Dropped).Should().Equal(true, true, false);
    }

    [Fact]
    public async Task ALostAcknowledgementIsRecoveredByTheDuplicateItsRetransmissionTriggers()
    {
        using MessagingHarness h = new();
        int handled = 0;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Echo(_ => handled++));
        CoapEndpoint client = h.Endpoint(ClientAddress);
        h.Network.Link(server.LocalEndPoint, client.LocalEndPoint).DropNth(1);

        Task<CoapMessage> request = client.SendRequestAsync(Get("again"), server.LocalEndPoint);
        h.Advance(TimeSpan.FromSeconds(3));

        (await request.Done()).GetPayloadString().Should().Be("/again");
        handled.Should().Be(1);
        IReadOnlyList<Datagram> replies = h.AllBetween(server.LocalEndPoint, client.LocalEndPoint);
        replies.Should().HaveCount(2);
        replies[1].Bytes.Should().Equal(replies[0].Bytes);
    }

    private static CoapMessage WithMessageId(CoapMessage message, ushort messageId)
        => new() { Type = message.Type, Code = message.Code, MessageId = messageId, Token = message.Token };
}
