using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;
using static CoapNet.Tests.Messaging.MessagingHarness;

namespace CoapNet.Tests.Messaging;

/// <summary>RFC 7252 sections 4.4 and 5.3: Message IDs match ACK/RST, tokens match responses, per peer.</summary>
public class TokenAndMessageIdTests
{
    private static CoapTransmissionParameters ManyAtOnce => CoapTransmissionParameters.Default with { NStart = 100 };

    [Fact]
    public async Task SeparateResponsesInReverseOrderReachTheirOwnCallers()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress, h.Options(ManyAtOnce));
        Task<CoapMessage>[] pending = Enumerable.Range(0, 5).Select(i => client.SendRequestAsync(Get($"r{i}"), server.EndPoint)).ToArray();
        h.Network.DeliverAll();
        IReadOnlyList<ReceivedDatagram> requests = server.Received;
        foreach (ReceivedDatagram request in requests)
        {
            server.SendAck(request.Parsed.MessageId, client.LocalEndPoint);
        }

        ushort messageId = 0x5000;
        foreach (ReceivedDatagram request in requests.Reverse())
        {
            server.SendSeparate(request.Parsed.Token, messageId++, client.LocalEndPoint, CoapCode.Content, "for " + request.Parsed.UriPath);
        }

        h.Network.DeliverAll();

        (await Task.WhenAll(pending).Done()).Select(r => r.GetPayloadString()).Should().Equal(Enumerable.Range(0, 5).Select(i => $"for /r{i}"));
    }

    [Fact]
    public async Task PiggybackedResponsesOutOfOrderReachTheirOwnCallers()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress, h.Options(ManyAtOnce));
        Task<CoapMessage>[] pending = Enumerable.Range(0, 3).Select(i => client.SendRequestAsync(Get($"r{i}"), server.EndPoint)).ToArray();
        h.Network.DeliverAll();

        foreach (int i in new[] { 2, 0, 1 })
        {
            CoapMessage request = server.Received[i].Parsed;
            server.SendPiggybacked(request, client.LocalEndPoint, CoapCode.Content, "for " + request.UriPath);
        }

        h.Network.DeliverAll();

        (await Task.WhenAll(pending).Done()).Select(r => r.GetPayloadString()).Should().Equal("for /r0", "for /r1", "for /r2");
    }

    [Fact]
    public async Task AResponseWithTheSameTokenFromAnotherEndpointDoesNotMatch()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        TestPeer impostor = h.Peer("10.0.0.3");
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint);
        h.Network.DeliverAll();
        CoapMessage sent = server.Last.Parsed;
        server.SendAck(sent.MessageId, client.LocalEndPoint);

        impostor.SendSeparate(sent.Token, 0x6000, client.LocalEndPoint, CoapCode.Content, "forged");
        impostor.SendSeparate(sent.Token, 0x6001, client.LocalEndPoint, CoapCode.Content, "forged", CoapMessageType.NonConfirmable);
        h.Network.DeliverAll();

        request.IsCompleted.Should().BeFalse();
        impostor.Received.Should().ContainSingle().Which.Bytes.Should().Equal(EmptyMessageBytes.Reset(0x6000));

        server.SendSeparate(sent.Token, 0x6000, client.LocalEndPoint, CoapCode.Content, "genuine");
        h.Network.DeliverAll();
        (await request.Done()).GetPayloadString().Should().Be("genuine");
    }

    [Fact]
    public void GeneratedTokensAreEightBytesAndUniqueAmongOutstandingRequests()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress, h.Options(ManyAtOnce));
        CoapMessage[] requests = Enumerable.Range(0, 100).Select(_ => Get()).ToArray();

        foreach (CoapMessage request in requests)
        {
            _ = client.SendRequestAsync(request, server.EndPoint);
        }

        h.Network.DeliverAll();

        requests.Should().AllSatisfy(r => r.Token.Length.Should().Be(8));
        requests.Select(r => Convert.ToHexString(r.Token.Span)).Should().OnlyHaveUniqueItems();
        server.Received.Select(r => Convert.ToHexString(r.Parsed.Token.Span)).Should().BeEquivalentTo(requests.Select(r => Convert.ToHexString(r.Token.Span)));
    }

    [Fact]
    public void TheTokenLengthOptionSetsTheLengthOfGeneratedTokens()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress, h.Options(tokenLength: 4));

        _ = client.SendRequestAsync(Get(), server.EndPoint);
        h.Network.DeliverAll();

        server.Last.Parsed.Token.Length.Should().Be(4);
    }

    [Fact]
    public void ATokenSetByTheCallerIsKept()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        CoapMessage request = Get();
        request.Token = new byte[] { 0x01, 0x02 };

        _ = client.SendRequestAsync(request, server.EndPoint);
        h.Network.DeliverAll();

        server.Last.Parsed.Token.ToArray().Should().Equal(0x01, 0x02);
    }

    [Fact]
    public async Task ATokenInUseTowardAPeerCannotBeReusedUntilItsRequestEnds()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        TestPeer other = h.Peer("10.0.0.3");
        CoapEndpoint client = h.Endpoint(ClientAddress, h.Options(ManyAtOnce));
        byte[] token = [0xAB, 0xCD];
        Task<CoapMessage> first = client.SendRequestAsync(WithToken(Get(), token), server.EndPoint);

        Func<Task> reuse = () => client.SendRequestAsync(WithToken(Get(), token), server.EndPoint);
        (await reuse.Should().ThrowAsync<ArgumentException>()).Which.ParamName.Should().Be("request");
        _ = client.SendRequestAsync(WithToken(Get(), token), other.EndPoint);

        h.Network.DeliverAll();
        server.SendPiggybacked(server.Last.Parsed, client.LocalEndPoint, CoapCode.Content);
        h.Network.DeliverAll();
        await first.Done();

        Func<Task> afterwards = async () =>
        {
            Task<CoapMessage> again = client.SendRequestAsync(WithToken(Get(), token), server.EndPoint);
            h.Network.DeliverAll();
            server.SendPiggybacked(server.Last.Parsed, client.LocalEndPoint, CoapCode.Content);
            h.Network.DeliverAll();
            await again.Done();
        };
        await afterwards.Should().NotThrowAsync();
    }

    [Fact]
    public void MessageIdsTowardAPeerIncrementFromOneStart()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress, h.Options(ManyAtOnce));

        for (int i = 0; i < 5; i++)
        {
            _ = client.SendRequestAsync(Get(), server.EndPoint);
        }

        _ = client.PingAsync(server.EndPoint);
        h.Network.DeliverAll();

        ushort start = server.Received[0].Parsed.MessageId;
        server.Received.Select(r => r.Parsed.MessageId).Should().Equal(Enumerable.Range(0, 6).Select(i => unchecked((ushort)(start + i))));
    }

    [Fact]
    public void TheMessageIdStartIsRandom()
    {
        HashSet<ushort> starts = [];
        for (int seed = 0; seed < 10; seed++)
        {
            using MessagingHarness h = new();
            TestPeer server = h.Peer(ServerAddress);
            CoapEndpoint client = h.Endpoint(ClientAddress, h.Options(seed: seed));
            _ = client.SendRequestAsync(Get(), server.EndPoint);
            h.Network.DeliverAll();
            starts.Add(server.Last.Parsed.MessageId);
        }

        starts.Should().HaveCountGreaterThan(5);
    }

    [Fact]
    public void EachPeerHasItsOwnMessageIdCounter()
    {
        using MessagingHarness h = new();
        TestPeer first = h.Peer(ServerAddress);
        TestPeer second = h.Peer("10.0.0.3");
        CoapEndpoint client = h.Endpoint(ClientAddress, h.Options(ManyAtOnce));

        for (int i = 0; i < 3; i++)
        {
            _ = client.SendRequestAsync(Get(), first.EndPoint);
            _ = client.SendRequestAsync(Get(), second.EndPoint);
        }

        h.Network.DeliverAll();

        foreach (TestPeer peer in new[] { first, second })
        {
            ushort start = peer.Received[0].Parsed.MessageId;
            peer.Received.Select(r => r.Parsed.MessageId).Should().Equal(start, unchecked((ushort)(start + 1)), unchecked((ushort)(start + 2)));
        }

        first.Received[0].Parsed.MessageId.Should().NotBe(second.Received[0].Parsed.MessageId, "each peer's counter starts at its own random value");
    }

    [Fact]
    public void AQueuedRequestGetsItsMessageIdWhenItIsSent()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        _ = client.SendRequestAsync(Get("1"), server.EndPoint);
        _ = client.SendRequestAsync(Get("2"), server.EndPoint);
        h.Network.DeliverAll();
        CoapMessage first = server.Last.Parsed;

        // A ping goes out at once (it takes no NSTART slot) and draws the next Message ID.
        _ = client.PingAsync(server.EndPoint);
        server.SendPiggybacked(first, client.LocalEndPoint, CoapCode.Content);
        h.Network.DeliverAll();

        server.Received.Select(r => r.Parsed.MessageId)
            .Should().Equal(first.MessageId, unchecked((ushort)(first.MessageId + 1)), unchecked((ushort)(first.MessageId + 2)));
        server.Received.Select(r => r.Parsed.Code).Should().Equal(CoapCode.Get, CoapCode.Empty, CoapCode.Get);
    }

    [Fact]
    public void RetransmissionsKeepTheMessageIdAndToken()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        _ = client.SendRequestAsync(Get(), server.EndPoint);

        h.Advance(TimeSpan.FromSeconds(50));

        server.Received.Should().HaveCount(5);
        server.Received.Select(r => r.Parsed.MessageId).Distinct().Should().ContainSingle();
        server.Received.Select(r => Convert.ToHexString(r.Parsed.Token.Span)).Distinct().Should().ContainSingle();
    }

    [Fact]
    public async Task OnlyRequestsCanBeSent()
    {
        using MessagingHarness h = new();
        CoapEndpoint client = h.Endpoint(ClientAddress);

        Func<Task> response = () => client.SendRequestAsync(new CoapMessage { Code = CoapCode.Content }, At(ServerAddress));
        Func<Task> acknowledgement = () => client.SendRequestAsync(new CoapMessage { Type = CoapMessageType.Acknowledgement, Code = CoapCode.Get }, At(ServerAddress));
        Func<Task> empty = () => client.SendRequestAsync(new CoapMessage(), At(ServerAddress));

        await response.Should().ThrowAsync<ArgumentException>();
        await acknowledgement.Should().ThrowAsync<ArgumentException>();
        await empty.Should().ThrowAsync<ArgumentException>();
        h.Network.Sent.Should().BeEmpty();
    }

    private static CoapMessage WithToken(CoapMessage request, byte[] token)
    {
        request.Token = token;
        return request;
    }
}
