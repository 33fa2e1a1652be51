using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;
using static CoapNet.Tests.Messaging.MessagingHarness;

namespace CoapNet.Tests.Messaging;

/// <summary>RFC 7252 section 4.5: a duplicate is acknowledged again but processed once.</summary>
public class DeduplicationTests
{
    private static readonly byte[] Token = [0xCA, 0xFE];

    [Fact]
    public void ADuplicateConfirmableRequestGetsTheSameAcknowledgementAndOneHandlerCall()
    {
        using MessagingHarness h = new();
        int handled = 0;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Echo(_ => handled++));
        TestPeer client = h.Peer(ClientAddress);
        byte[] request = client.Send(RawRequest(0x1234, Token, path: "dup"), server.LocalEndPoint);
        h.Network.DeliverAll();

        client.SendBytes(request, server.LocalEndPoint);
        client.SendBytes(request, server.LocalEndPoint);
        h.Network.DeliverAll();

        handled.Should().Be(1);
        client.Received.Should().HaveCount(3);
        CoapMessage ack = client.Received[0].Parsed;
        ack.Type.Should().Be(CoapMessageType.Acknowledgement);
        ack.MessageId.Should().Be(0x1234);
        ack.GetPayloadString().Should().Be("/dup");
        client.Received.Should().AllSatisfy(r => r.Bytes.Should().Equal(client.Received[0].Bytes));
    }

    [Fact]
    public void ADuplicateOfAnAcceptedRequestGetsTheEmptyAcknowledgementAgain()
    {
        using MessagingHarness h = new();
        int handled = 0;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: exchange =>
        {
            handled++;
            exchange.Accept();
        });
        TestPeer client = h.Peer(ClientAddress);
        byte[] request = client.Send(RawRequest(7, Token), server.LocalEndPoint);
        h.Network.DeliverAll();

        client.SendBytes(request, server.LocalEndPoint);
        h.Network.DeliverAll();

        handled.Should().Be(1);
        client.Received.Should().HaveCount(2);
        client.Received.Should().AllSatisfy(r => r.Bytes.Should().Equal(EmptyMessageBytes.EmptyAck(7)));
    }

    [Fact]
    public void ADuplicateArrivingWhileTheHandlerHasNotAnsweredIsAcknowledgedAndTheResponseFollowsSeparately()
    {
        using MessagingHarness h = new();
        List<CoapExchange> exchanges = [];
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: exchanges.Add);
        TestPeer client = h.Peer(ClientAddress);
        byte[] request = client.Send(RawRequest(8, Token), server.LocalEndPoint);
        h.Network.DeliverAll();
        client.Received.Should().BeEmpty("the handler has not answered");

        // RFC 7252 section 4.5: each copy of a CON is acknowledged, but processed once.
        client.SendBytes(request, server.LocalEndPoint);
        h.Network.DeliverAll();
        exchanges.Should().ContainSingle();
        client.Received.Should().ContainSingle().Which.Bytes.Should().Equal(EmptyMessageBytes.EmptyAck(8));
        exchanges[0].IsAccepted.Should().BeTrue();

        exchanges[0].Respond(new CoapMessage { Code = CoapCode.Content });
        client.SendBytes(request, server.LocalEndPoint);
        h.Network.DeliverAll();

        exchanges.Should().ContainSingle();
        client.Received.Should().HaveCount(3);
        CoapMessage separate = client.Received[1].Parsed;
        separate.Type.Should().Be(CoapMessageType.Confirmable, "after the empty ACK the response is separate (section 5.2.2)");
        separate.Token.ToArray().Should().Equal(Token);
        client.Received[2].Bytes.Should().Equal(EmptyMessageBytes.EmptyAck(8), "a later copy gets the same empty ACK again");
    }

    [Fact]
    public void ADuplicateNonConfirmableRequestIsIgnored()
    {
        using MessagingHarness h = new();
        int handled = 0;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Echo(_ => handled++));
        TestPeer client = h.Peer(ClientAddress);
        byte[] request = client.Send(RawRequest(0x4321, Token, CoapMessageType.NonConfirmable), server.LocalEndPoint);
        h.Network.DeliverAll();

        client.SendBytes(request, server.LocalEndPoint);
        h.Network.DeliverAll();

        handled.Should().Be(1);
        CoapMessage response = client.Received.Should().ContainSingle().Subject.Parsed;
        response.Type.Should().Be(CoapMessageType.NonConfirmable);
        response.Token.ToArray().Should().Equal(Token);
    }

    [Fact]
    public void TheSameMessageIdFromAnotherPeerIsANewRequest()
    {
        using MessagingHarness h = new();
        List<CoapExchange> handled = [];
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Echo(handled.Add));
        TestPeer first = h.Peer(ClientAddress);
        TestPeer second = h.Peer("10.0.0.3");
        TestPeer samePortOtherHost = h.Peer("10.0.0.1:5684");

        first.Send(RawRequest(99, Token, path: "a"), server.LocalEndPoint);
        second.Send(RawRequest(99, Token, path: "b"), server.LocalEndPoint);
        samePortOtherHost.Send(RawRequest(99, Token, path: "c"), server.LocalEndPoint);
        h.Network.DeliverAll();

        handled.Select(e => e.RemoteEndPoint).Should().Equal(first.EndPoint, second.EndPoint, samePortOtherHost.EndPoint);
        first.Last.Parsed.GetPayloadString().Should().Be("/a");
        second.Last.Parsed.GetPayloadString().Should().Be("/b");
        samePortOtherHost.Last.Parsed.GetPayloadString().Should().Be("/c");
    }

    [Fact]
    public void AfterTheExchangeLifetimeTheSameMessageIdIsANewRequest()
    {
        using MessagingHarness h = new();
        int handled = 0;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Echo(_ => handled++));
        TestPeer client = h.Peer(ClientAddress);
        byte[] request = client.Send(RawRequest(5, Token), server.LocalEndPoint);
        h.Network.DeliverAll();

        h.Time.Advance(TimeSpan.FromSeconds(246));
        client.SendBytes(request, server.LocalEndPoint);
        h.Network.DeliverAll();
        handled.Should().Be(1, "EXCHANGE_LIFETIME (247 s) has not passed");

        h.Time.Advance(TimeSpan.FromSeconds(2));
        client.SendBytes(request, server.LocalEndPoint);
        h.Network.DeliverAll();
        handled.Should().Be(2);
    }

    [Fact]
    public void AfterTheNonLifetimeTheSameNonConfirmableMessageIdIsANewRequest()
    {
        using MessagingHarness h = new();
        int handled = 0;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Echo(_ => handled++));
        TestPeer client = h.Peer(ClientAddress);
        byte[] request = client.Send(RawRequest(5, Token, CoapMessageType.NonConfirmable), server.LocalEndPoint);
        h.Network.DeliverAll();

        h.Time.Advance(TimeSpan.FromSeconds(144));
        client.SendBytes(request, server.LocalEndPoint);
        h.Network.DeliverAll();
        handled.Should().Be(1, "NON_LIFETIME (145 s) has not passed");

        h.Time.Advance(TimeSpan.FromSeconds(2));
        client.SendBytes(request, server.LocalEndPoint);
        h.Network.DeliverAll();
        handled.Should().Be(2);
    }

    [Fact]
    public void TheLifetimeFollowsCustomTransmissionParameters()
    {
        using MessagingHarness h = new();
        int handled = 0;

        // EXCHANGE_LIFETIME = 1 s x (2^1 - 1) x 1 + 2 x 1 s + 1 s = 4 s.
        CoapTransmissionParameters parameters = new() { AckTimeout = TimeSpan.FromSeconds(1), AckRandomFactor = 1, MaxRetransmit = 1, MaxLatency = TimeSpan.FromSeconds(1) };
        CoapEndpoint server = h.Endpoint(ServerAddress, h.Options(parameters), Echo(_ => handled++));
        TestPeer client = h.Peer(ClientAddress);
        byte[] request = client.Send(RawRequest(5, Token), server.LocalEndPoint);
        h.Network.DeliverAll();

        h.Time.Advance(TimeSpan.FromSeconds(3.9));
        client.SendBytes(request, server.LocalEndPoint);
        h.Network.DeliverAll();
        handled.Should().Be(1);

        h.Time.Advance(TimeSpan.FromSeconds(0.2));
        client.SendBytes(request, server.LocalEndPoint);
        h.Network.DeliverAll();
        handled.Should().Be(2);
    }

    [Fact]
    public void AFloodOfDistinctMessageIdsFromOnePeerStaysWithinTheCapacity()
    {
        using MessagingHarness h = new();
        CoapEndpoint server = h.Endpoint(ServerAddress, h.Options(deduplicationCapacity: 100), Echo());
        TestPeer attacker = h.Peer("10.0.0.66");

        for (int i = 0; i < 10_000; i++)
        {
            attacker.Send(RawRequest((ushort)i, Token), server.LocalEndPoint);
            h.Network.DeliverAll();
            server.DeduplicationCount.Should().BeLessThanOrEqualTo(100);
        }

        attacker.Received.Should().HaveCount(10_000);
        AssertStillServes(h, server);
    }

    [Fact]
    public void AFloodFromManyPeersStaysWithinTheCapacity()
    {
        using MessagingHarness h = new();
        CoapEndpoint server = h.Endpoint(ServerAddress, h.Options(deduplicationCapacity: 100), Echo());
        TestPeer[] attackers = Enumerable.Range(1, 100).Select(i => h.Peer($"10.0.1.{i}")).ToArray();

        for (int i = 0; i < 10_000; i++)
        {
            attackers[i % attackers.Length].Send(RawRequest((ushort)(i / attackers.Length), Token, i % 2 == 0 ? CoapMessageType.Confirmable : CoapMessageType.NonConfirmable), server.LocalEndPoint);
        }

        h.Network.DeliverAll();

        server.DeduplicationCount.Should().BeLessThanOrEqualTo(100).And.BeGreaterThan(0);
        attackers.Sum(a => a.Received.Count).Should().Be(10_000);
        AssertStillServes(h, server);
    }

    [Fact]
    public void WithinTheCapacityRecentDuplicatesAreStillRecognizedDuringAFlood()
    {
        using MessagingHarness h = new();
        int handled = 0;
        CoapEndpoint server = h.Endpoint(ServerAddress, h.Options(deduplicationCapacity: 100), Echo(_ => handled++));
        TestPeer client = h.Peer(ClientAddress);
        for (int i = 0; i < 1000; i++)
        {
            client.Send(RawRequest((ushort)i, Token), server.LocalEndPoint);
        }

        h.Network.DeliverAll();

        // The 50 most recent are remembered; their duplicates are not handled again.
        for (int i = 950; i < 1000; i++)
        {
            client.Send(RawRequest((ushort)i, Token), server.LocalEndPoint);
        }

        h.Network.DeliverAll();
        handled.Should().Be(1000);
    }

    private static void AssertStillServes(MessagingHarness h, CoapEndpoint server)
    {
        TestPeer honest = h.Peer("10.0.0.200");
        honest.Send(RawRequest(1, [1, 2, 3], path: "still-there"), server.LocalEndPoint);
        h.Network.DeliverAll();

        CoapMessage response = honest.Last.Parsed;
        response.Type.Should().Be(CoapMessageType.Acknowledgement);
        response.Code.Should().Be(CoapCode.Content);
        response.GetPayloadString().Should().Be("/still-there");
    }
}
