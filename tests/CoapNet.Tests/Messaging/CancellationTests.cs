using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;
using static CoapNet.Tests.Messaging.MessagingHarness;

namespace CoapNet.Tests.Messaging;

/// <summary>A canceled request ends at once: no more retransmissions, its NSTART slot handed on.</summary>
public class CancellationTests
{
    [Fact]
    public async Task CancelingWhileWaitingForTheAcknowledgementStopsRetransmission()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        using CancellationTokenSource cancel = new();
        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint, cancel.Token);
        h.Advance(TimeSpan.FromSeconds(3));
        server.Received.Should().HaveCount(2);

        await cancel.CancelAsync();

        request.IsCanceled.Should().BeTrue();
        Func<Task> outcome = () => request.Done();
        (await outcome.Should().ThrowAsync<TaskCanceledException>()).Which.CancellationToken.Should().Be(cancel.Token);
        h.Advance(TimeSpan.FromMinutes(10));
        server.Received.Should().HaveCount(2);
    }

    [Fact]
    public async Task CancelingReleasesTheSlotForTheNextRequest()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        using CancellationTokenSource cancel = new();
        _ = client.SendRequestAsync(Get("first"), server.EndPoint, cancel.Token);
        Task<CoapMessage> second = client.SendRequestAsync(Get("second"), server.EndPoint);
        h.Network.DeliverAll();

        await cancel.CancelAsync();
        h.Network.DeliverAll();

        server.Received.Select(r => r.Parsed.UriPath).Should().Equal("/first", "/second");
        server.SendPiggybacked(server.Last.Parsed, client.LocalEndPoint, CoapCode.Content, "ok");
        h.Network.DeliverAll();
        (await second.Done()).GetPayloadString().Should().Be("ok");
    }

    [Fact]
    public async Task CancelingWhileWaitingForASeparateResponseEndsTheExchange()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        using CancellationTokenSource cancel = new();
        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint, cancel.Token);
        h.Network.DeliverAll();
        CoapMessage sent = server.Last.Parsed;
        server.SendAck(sent.MessageId, client.LocalEndPoint);
        h.Network.DeliverAll();

        await cancel.CancelAsync();
        Func<Task> outcome = () => request.Done();
        await outcome.Should().ThrowAsync<OperationCanceledException>();

        // The exchange is gone: its late response matches nothing and is reset.
        server.SendSeparate(sent.Token, 0x4444, client.LocalEndPoint, CoapCode.Content);
        h.Network.DeliverAll();
        server.Last.Bytes.Should().Equal(EmptyMessageBytes.Reset(0x4444));
    }

    [Fact]
    public async Task ATokenCanceledInVirtualTimeCancelsAtThatTime()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        using CancellationTokenSource cancel = new(TimeSpan.FromSeconds(10), h.Time);
        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint, cancel.Token);

        h.Advance(TimeSpan.FromSeconds(10) - TimeSpan.FromTicks(1));
        request.IsCompleted.Should().BeFalse();
        int sentBeforeCancel = server.Received.Count;
        h.Advance(TimeSpan.FromTicks(1));

        Func<Task> outcome = () => request.Done();
        await outcome.Should().ThrowAsync<OperationCanceledException>();
        h.Advance(TimeSpan.FromMinutes(10));
        server.Received.Should().HaveCount(sentBeforeCancel);
    }

    [Fact]
    public async Task AnAlreadyCanceledTokenSendsNothingAndKeepsTheSlotFree()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);

        Task<CoapMessage> canceled = client.SendRequestAsync(Get("never"), server.EndPoint, new CancellationToken(canceled: true));
        Task<CoapMessage> next = client.SendRequestAsync(Get("next"), server.EndPoint);
        h.Network.DeliverAll();

        Func<Task> outcome = () => canceled.Done();
        await outcome.Should().ThrowAsync<OperationCanceledException>();
        server.Received.Should().ContainSingle().Which.Parsed.UriPath.Should().Be("/next");
        server.SendPiggybacked(server.Last.Parsed, client.LocalEndPoint, CoapCode.Content);
        h.Network.DeliverAll();
        await next.Done();
    }

    [Fact]
    public async Task CancelingAfterTheResponseChangesNothing()
    {
        using MessagingHarness h = new();
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Echo());
        CoapEndpoint client = h.Endpoint(ClientAddress);
        using CancellationTokenSource cancel = new();
        Task<CoapMessage> request = client.SendRequestAsync(Get("done"), server.LocalEndPoint, cancel.Token);
        h.Network.DeliverAll();

        await cancel.CancelAsync();

        (await request.Done()).GetPayloadString().Should().Be("/done");
    }
}
