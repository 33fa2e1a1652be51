using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;
using static CoapNet.Tests.Messaging.MessagingHarness;

namespace CoapNet.Tests.Messaging;

/// <summary>RFC 7252 section 4.7: at most NSTART outstanding interactions per peer; the rest wait in order.</summary>
public class NStartTests
{
    [Fact]
    public async Task RequestsToOnePeerGoOutOneAtATimeInOrder()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        CoapMessage[] requests = [Get("0"), Get("1"), Get("2")];
        Task<CoapMessage>[] pending = requests.Select(r => client.SendRequestAsync(r, server.EndPoint)).ToArray();

        for (int i = 0; i < requests.Length; i++)
        {
            h.Network.DeliverAll();
            server.Received.Should().HaveCount(i + 1, "one request is outstanding at a time");
            CoapMessage onTheWire = server.Last.Parsed;
            onTheWire.Token.ToArray().Should().Equal(requests[i].Token.ToArray());
            pending.Skip(i).Should().AllSatisfy(t => t.IsCompleted.Should().BeFalse());

            server.SendPiggybacked(onTheWire, client.LocalEndPoint, CoapCode.Content, i.ToString(System.Globalization.CultureInfo.InvariantCulture));
        }

        h.Network.DeliverAll();
        (await Task.WhenAll(pending).Done()).Select(r => r.GetPayloadString()).Should().Equal("0", "1", "2");
    }

    [Fact]
    public async Task WithNStartTwoTwoRequestsAreOutstandingAtATime()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress, h.Options(CoapTransmissionParameters.Default with { NStart = 2 }));
        CoapMessage[] requests = [Get("0"), Get("1"), Get("2"), Get("3")];
        Task<CoapMessage>[] pending = requests.Select(r => client.SendRequestAsync(r, server.EndPoint)).ToArray();
        h.Network.DeliverAll();

        server.Received.Should().HaveCount(2);
        server.Received.Select(r => r.Parsed.UriPath).Should().Equal("/0", "/1");

        server.SendPiggybacked(server.Received[1].Parsed, client.LocalEndPoint, CoapCode.Content);
        h.Network.DeliverAll();
        server.Received.Select(r => r.Parsed.UriPath).Should().Equal("/0", "/1", "/2");

        server.SendPiggybacked(server.Received[0].Parsed, client.LocalEndPoint, CoapCode.Content);
        server.SendPiggybacked(server.Received[2].Parsed, client.LocalEndPoint, CoapCode.Content);
        h.Network.DeliverAll();
        server.Received.Select(r => r.Parsed.UriPath).Should().Equal("/0", "/1", "/2", "/3");

        server.SendPiggybacked(server.Received[3].Parsed, client.LocalEndPoint, CoapCode.Content);
        h.Network.DeliverAll();
        await Task.WhenAll(pending).Done();
    }

    [Fact]
    public void RequestsToDifferentPeersDoNotWaitForEachOther()
    {
        using MessagingHarness h = new();
        TestPeer first = h.Peer(ServerAddress);
        TestPeer second = h.Peer("10.0.0.3");
        TestPeer third = h.Peer("10.0.0.2:5684");
        CoapEndpoint client = h.Endpoint(ClientAddress);

        _ = client.SendRequestAsync(Get("a1"), first.EndPoint);
        _ = client.SendRequestAsync(Get("a2"), first.EndPoint);
        _ = client.SendRequestAsync(Get("b"), second.EndPoint);
        _ = client.SendRequestAsync(Get("c"), third.EndPoint);
        h.Network.DeliverAll();

        first.Received.Should().ContainSingle().Which.Parsed.UriPath.Should().Be("/a1");
        second.Received.Should().ContainSingle().Which.Parsed.UriPath.Should().Be("/b");
        third.Received.Should().ContainSingle().Which.Parsed.UriPath.Should().Be("/c");
    }

    [Fact]
    public async Task CancelingAQueuedRequestRemovesItFromTheQueue()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        using CancellationTokenSource cancel = new();
        Task<CoapMessage> first = client.SendRequestAsync(Get("1"), server.EndPoint);
        Task<CoapMessage> second = client.SendRequestAsync(Get("2"), server.EndPoint, cancel.Token);
        Task<CoapMessage> third = client.SendRequestAsync(Get("3"), server.EndPoint);
        h.Network.DeliverAll();

        await cancel.CancelAsync();
        Func<Task> canceled = () => second.Done();
        await canceled.Should().ThrowAsync<OperationCanceledException>();
        server.Received.Should().ContainSingle();

        server.SendPiggybacked(server.Last.Parsed, client.LocalEndPoint, CoapCode.Content);
        h.Network.DeliverAll();
        server.Received.Select(r => r.Parsed.UriPath).Should().Equal("/1", "/3");

        server.SendPiggybacked(server.Last.Parsed, client.LocalEndPoint, CoapCode.Content);
        h.Network.DeliverAll();
        await first.Done();
        await third.Done();
        h.Advance(TimeSpan.FromMinutes(10));
        server.Received.Select(r => r.Parsed.UriPath).Should().Equal("/1", "/3");
    }

    [Fact]
    public async Task AnEmptyAcknowledgementFreesTheSlot()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<CoapMessage> first = client.SendRequestAsync(Get("1"), server.EndPoint);
        Task<CoapMessage> second = client.SendRequestAsync(Get("2"), server.EndPoint);
        h.Network.DeliverAll();
        CoapMessage firstSent = server.Last.Parsed;

        server.SendAck(firstSent.MessageId, client.LocalEndPoint);
        h.Network.DeliverAll();

        server.Received.Select(r => r.Parsed.UriPath).Should().Equal("/1", "/2");
        first.IsCompleted.Should().BeFalse();

        server.SendPiggybacked(server.Last.Parsed, client.LocalEndPoint, CoapCode.Content, "second");
        server.SendSeparate(firstSent.Token, 0x9999, client.LocalEndPoint, CoapCode.Content, "first");
        h.Network.DeliverAll();
        (await first.Done()).GetPayloadString().Should().Be("first");
        (await second.Done()).GetPayloadString().Should().Be("second");
    }

    [Fact]
    public async Task ATimedOutRequestFreesTheSlot()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapTransmissionParameters parameters = new() { AckTimeout = TimeSpan.FromSeconds(1), AckRandomFactor = 1, MaxRetransmit = 1 };
        CoapEndpoint client = h.Endpoint(ClientAddress, h.Options(parameters));
        Task<CoapMessage> first = client.SendRequestAsync(Get("1"), server.EndPoint);
        Task<CoapMessage> second = client.SendRequestAsync(Get("2"), server.EndPoint);

        h.Advance(TimeSpan.FromSeconds(3) - TimeSpan.FromTicks(1));
        server.Received.Select(r => r.Parsed.UriPath).Should().Equal("/1", "/1");

        h.Advance(TimeSpan.FromTicks(1));
        Func<Task> timedOut = () => first.Done();
        await timedOut.Should().ThrowAsync<CoapTimeoutException>();
        server.Received.Select(r => r.Parsed.UriPath).Should().Equal("/1", "/1", "/2");
        second.IsCompleted.Should().BeFalse();
    }

    [Fact]
    public async Task AResetRequestFreesTheSlot()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<CoapMessage> first = client.SendRequestAsync(Get("1"), server.EndPoint);
        _ = client.SendRequestAsync(Get("2"), server.EndPoint);
        h.Network.DeliverAll();

        server.SendReset(server.Last.Parsed.MessageId, client.LocalEndPoint);
        h.Network.DeliverAll();

        Func<Task> reset = () => first.Done();
        await reset.Should().ThrowAsync<CoapResetException>();
        server.Received.Select(r => r.Parsed.UriPath).Should().Equal("/1", "/2");
    }

    [Fact]
    public void ANonConfirmableRequestHoldsTheSlotUntilItsResponse()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        _ = client.SendRequestAsync(Get("non", CoapMessageType.NonConfirmable), server.EndPoint);
        _ = client.SendRequestAsync(Get("next"), server.EndPoint);
        h.Advance(TimeSpan.FromSeconds(30));
        server.Received.Should().ContainSingle();

        CoapMessage non = server.Last.Parsed;
        server.SendSeparate(non.Token, 0x1111, client.LocalEndPoint, CoapCode.Content, type: CoapMessageType.NonConfirmable);
        h.Network.DeliverAll();

        server.Received.Select(r => r.Parsed.UriPath).Should().Equal("/non", "/next");
    }

    [Fact]
    public async Task AQueueOfRequestsDrainsAgainstARealServer()
    {
        using MessagingHarness h = new();
        int outstanding = 0;
        int maxOutstanding = 0;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Echo());
        CoapEndpoint client = h.Endpoint(ClientAddress);
        h.Network.Link(client.LocalEndPoint, server.LocalEndPoint).DropWhere(_ =>
        {
            // Counted at send time: every request sent before the previous response arrived would show here.
            maxOutstanding = Math.Max(maxOutstanding, ++outstanding);
            return false;
        });
        h.Network.Link(server.LocalEndPoint, client.LocalEndPoint).DropWhere(_ =>
        {
            outstanding--;
            return false;
        });

        Task<CoapMessage>[] pending = Enumerable.Range(0, 20).Select(i => client.SendRequestAsync(Get($"r{i}"), server.LocalEndPoint)).ToArray();
        h.Network.DeliverAll();

        (await Task.WhenAll(pending).Done()).Select(r => r.GetPayloadString()).Should().Equal(Enumerable.Range(0, 20).Select(i => $"/r{i}"));
        maxOutstanding.Should().Be(1);
    }
}
