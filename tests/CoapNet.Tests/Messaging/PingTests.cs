using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;
using static CoapNet.Tests.Messaging.MessagingHarness;

namespace CoapNet.Tests.Messaging;

/// <summary>RFC 7252 section 4.3: a CoAP ping is an empty CON, answered with RST.</summary>
public class PingTests
{
    [Fact]
    public void AnEmptyConfirmableIsAnsweredWithAResetWithTheSameMessageId()
    {
        using MessagingHarness h = new();
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Echo());
        TestPeer client = h.Peer(ClientAddress);

        client.SendBytes(EmptyMessageBytes.EmptyConfirmable(0xA1B2), server.LocalEndPoint);
        h.Network.DeliverAll();

        client.Received.Should().ContainSingle().Which.Bytes.Should().Equal(EmptyMessageBytes.Reset(0xA1B2));
    }

    [Fact]
    public void AnEndpointWithoutAHandlerAnswersPingsToo()
    {
        using MessagingHarness h = new();
        CoapEndpoint server = h.Endpoint(ServerAddress);
        TestPeer client = h.Peer(ClientAddress);

        client.SendBytes(EmptyMessageBytes.EmptyConfirmable(1), server.LocalEndPoint);
        client.SendBytes(EmptyMessageBytes.EmptyConfirmable(1), server.LocalEndPoint);
        h.Network.DeliverAll();

        client.Received.Select(r => r.Bytes).Should().BeEquivalentTo([EmptyMessageBytes.Reset(1), EmptyMessageBytes.Reset(1)]);
    }

    [Fact]
    public async Task PingCompletesOnTheResetWithTheRoundTripTime()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<TimeSpan> ping = client.PingAsync(server.EndPoint);
        h.Network.DeliverAll();
        ushort messageId = server.Last.Parsed.MessageId;
        server.Last.Bytes.Should().Equal(EmptyMessageBytes.EmptyConfirmable(messageId));

        h.Time.Advance(TimeSpan.FromSeconds(1.5));
        server.SendReset(messageId, client.LocalEndPoint);
        h.Network.DeliverAll();

        (await ping.Done()).Should().Be(TimeSpan.FromSeconds(1.5));
        h.Advance(TimeSpan.FromMinutes(10));
        server.Received.Should().ContainSingle();
    }

    [Fact]
    public async Task PingAcceptsAnAcknowledgementAsAnAnswer()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<TimeSpan> ping = client.PingAsync(server.EndPoint);
        h.Network.DeliverAll();

        server.SendAck(server.Last.Parsed.MessageId, client.LocalEndPoint);
        h.Network.DeliverAll();

        (await ping.Done()).Should().Be(TimeSpan.Zero);
    }

    [Fact]
    public async Task PingBetweenTwoEndpointsCompletes()
    {
        using MessagingHarness h = new();
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Echo());
        CoapEndpoint client = h.Endpoint(ClientAddress);

        Task<TimeSpan> ping = client.PingAsync(server.LocalEndPoint);
        h.Network.DeliverAll();

        (await ping.Done()).Should().Be(TimeSpan.Zero);
        h.Network.Sent.Select(d => d.Parsed.Type).Should().Equal(CoapMessageType.Confirmable, CoapMessageType.Reset);
    }

    [Fact]
    public async Task PingTimesOutAfterTheRetransmissionsWhenNothingAnswers()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<TimeSpan> ping = client.PingAsync(server.EndPoint);
        h.Advance(TimeSpan.FromSeconds(3));
        IReadOnlyList<Datagram> sent = h.Between(client.LocalEndPoint, server.EndPoint);
        sent.Should().HaveCount(2);
        TimeSpan initial = sent[1].Time - sent[0].Time;

        h.Time.AdvanceTo((initial * 31) - TimeSpan.FromTicks(1));
        ping.IsCompleted.Should().BeFalse();
        h.Time.Advance(TimeSpan.FromTicks(1));

        Func<Task> outcome = () => ping.Done();
        (await outcome.Should().ThrowAsync<CoapTimeoutException>()).Which.RemoteEndPoint.Should().Be(server.EndPoint);
        h.Network.DeliverAll();
        server.Received.Should().HaveCount(5).And.AllSatisfy(r => r.Bytes.Should().Equal(server.Received[0].Bytes));
    }

    [Fact]
    public async Task AResetFromAnotherEndpointDoesNotAnswerThePing()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        TestPeer stranger = h.Peer("10.0.0.3");
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<TimeSpan> ping = client.PingAsync(server.EndPoint);
        h.Network.DeliverAll();

        stranger.SendReset(server.Last.Parsed.MessageId, client.LocalEndPoint);
        h.Advance(TimeSpan.FromMinutes(10));

        Func<Task> outcome = () => ping.Done();
        await outcome.Should().ThrowAsync<CoapTimeoutException>();
    }

    [Fact]
    public async Task CancelingAPingStopsItsRetransmission()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        using CancellationTokenSource cancel = new();
        Task<TimeSpan> ping = client.PingAsync(server.EndPoint, cancel.Token);
        h.Network.DeliverAll();

        await cancel.CancelAsync();
        h.Advance(TimeSpan.FromMinutes(10));

        Func<Task> outcome = () => ping.Done();
        await outcome.Should().ThrowAsync<OperationCanceledException>();
        server.Received.Should().ContainSingle();
    }

    [Fact]
    public async Task AnAlreadyCanceledPingSendsNothing()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);

        Task<TimeSpan> ping = client.PingAsync(server.EndPoint, new CancellationToken(canceled: true));
        h.Advance(TimeSpan.FromMinutes(10));

        Func<Task> outcome = () => ping.Done();
        await outcome.Should().ThrowAsync<OperationCanceledException>();
        h.Network.Sent.Should().BeEmpty();
    }
}
