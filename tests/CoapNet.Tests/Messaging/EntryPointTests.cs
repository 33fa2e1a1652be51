using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;
using static CoapNet.Tests.Messaging.MessagingHarness;

namespace CoapNet.Tests.Messaging;

/// <summary>
/// The request behaviours that both entry points share, written once and run through
/// <see cref="AsyncEntryPointTests"/> and <see cref="SyncEntryPointTests"/>. A sync call's outcome
/// reaches the test from its own thread, hence the bounded waits.
/// </summary>
public abstract class EntryPointTests(RequestEntryPoint entryPoint)
{
    private static readonly TimeSpan HangBound = RequestEntryPoint.HangBound;

    [Fact]
    public async Task APiggybackedResponseIsReturned()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<CoapMessage> request = entryPoint.SendRequest(h, client, Get(), server.EndPoint);
        h.Network.DeliverAll();

        server.SendPiggybacked(server.Last.Parsed, client.LocalEndPoint, CoapCode.Content, "piggybacked");
        h.Network.DeliverAll();

        (await request.WaitAsync(HangBound)).GetPayloadString().Should().Be("piggybacked");
    }

    [Fact]
    public async Task ASeparateResponseIsReturnedAfterTheEmptyAcknowledgement()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<CoapMessage> request = entryPoint.SendRequest(h, client, Get(), server.EndPoint);
        h.Network.DeliverAll();
        CoapMessage sent = server.Last.Parsed;

        server.SendAck(sent.MessageId, client.LocalEndPoint);
        h.Advance(TimeSpan.FromSeconds(60));
        server.SendSeparate(sent.Token, 0x3333, client.LocalEndPoint, CoapCode.Content, "separate");
        h.Network.DeliverAll();

        (await request.WaitAsync(HangBound)).GetPayloadString().Should().Be("separate");
        server.Last.Bytes.Should().Equal(EmptyMessageBytes.EmptyAck(0x3333));
    }

    [Fact]
    public async Task SilenceEndsInATimeoutAfterFiveTransmissions()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<CoapMessage> request = entryPoint.SendRequest(h, client, Get(), server.EndPoint);

        h.Advance(TimeSpan.FromSeconds(93));

        Func<Task> outcome = () => request.WaitAsync(HangBound);
        await outcome.Should().ThrowAsync<CoapTimeoutException>();
        server.Received.Should().HaveCount(5);
    }

    [Fact]
    public async Task AResetEndsInAResetException()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<CoapMessage> request = entryPoint.SendRequest(h, client, Get(), server.EndPoint);
        h.Network.DeliverAll();

        server.SendReset(server.Last.Parsed.MessageId, client.LocalEndPoint);
        h.Network.DeliverAll();

        Func<Task> outcome = () => request.WaitAsync(HangBound);
        await outcome.Should().ThrowAsync<CoapResetException>();
    }

    [Fact]
    public async Task CancellationEndsTheRequestAndItsRetransmission()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        using CancellationTokenSource cancel = new();
        Task<CoapMessage> request = entryPoint.SendRequest(h, client, Get(), server.EndPoint, cancel.Token);

        await cancel.CancelAsync();
        h.Advance(TimeSpan.FromMinutes(10));

        Func<Task> outcome = () => request.WaitAsync(HangBound);
        await outcome.Should().ThrowAsync<OperationCanceledException>();
        server.Received.Should().ContainSingle();
    }

    [Fact]
    public async Task AnInvalidRequestIsRefusedBeforeAnythingIsSent()
    {
        using MessagingHarness h = new();
        CoapEndpoint client = h.Endpoint(ClientAddress);

        Func<Task> outcome = () => entryPoint.SendRequest(h, client, new CoapMessage { Code = CoapCode.Content }, At(ServerAddress)).WaitAsync(HangBound);

        await outcome.Should().ThrowAsync<ArgumentException>();
        h.Network.Sent.Should().BeEmpty();
    }

    [Fact]
    public async Task APingReturnsTheRoundTripTime()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<TimeSpan> ping = entryPoint.Ping(h, client, server.EndPoint);
        h.Network.DeliverAll();

        h.Time.Advance(TimeSpan.FromMilliseconds(250));
        server.SendReset(server.Last.Parsed.MessageId, client.LocalEndPoint);
        h.Network.DeliverAll();

        (await ping.WaitAsync(HangBound)).Should().Be(TimeSpan.FromMilliseconds(250));
    }

    [Fact]
    public async Task AnUnansweredPingTimesOut()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<TimeSpan> ping = entryPoint.Ping(h, client, server.EndPoint);

        h.Advance(TimeSpan.FromSeconds(93));

        Func<Task> outcome = () => ping.WaitAsync(HangBound);
        await outcome.Should().ThrowAsync<CoapTimeoutException>();
        server.Received.Should().HaveCount(5);
    }
}

public class AsyncEntryPointTests() : EntryPointTests(RequestEntryPoint.Async);

public class SyncEntryPointTests() : EntryPointTests(RequestEntryPoint.Sync);
