using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;
using static CoapNet.Tests.Messaging.MessagingHarness;

namespace CoapNet.Tests.Messaging;

/// <summary>RFC 7252 section 5.2.1: the response rides in the ACK.</summary>
public class PiggybackedResponseTests
{
    [Fact]
    public void TheAcknowledgementCarriesTheResponseWithTheRequestsMessageIdAndToken()
    {
        using MessagingHarness h = new();
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Echo());
        TestPeer client = h.Peer(ClientAddress);
        byte[] token = [1, 2, 3, 4, 5, 6, 7, 8];

        client.Send(RawRequest(0xBEEF, token, path: "piggy"), server.LocalEndPoint);
        h.Network.DeliverAll();

        CoapMessage response = client.Received.Should().ContainSingle().Subject.Parsed;
        response.Type.Should().Be(CoapMessageType.Acknowledgement);
        response.MessageId.Should().Be(0xBEEF);
        response.Token.ToArray().Should().Equal(token);
        response.Code.Should().Be(CoapCode.Content);
        response.GetPayloadString().Should().Be("/piggy");
    }

    [Fact]
    public void AnEmptyTokenIsEchoedAsAnEmptyToken()
    {
        using MessagingHarness h = new();
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Echo());
        TestPeer client = h.Peer(ClientAddress);

        client.Send(RawRequest(0xBEEF, []), server.LocalEndPoint);
        h.Network.DeliverAll();

        client.Last.Parsed.Token.IsEmpty.Should().BeTrue();
        client.Last.Parsed.MessageId.Should().Be(0xBEEF);
    }

    [Fact]
    public async Task TheClientCompletesWithAPiggybackedResponse()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint);
        h.Network.DeliverAll();
        CoapMessage sent = server.Last.Parsed;

        server.SendPiggybacked(sent, client.LocalEndPoint, CoapCode.Content, "hello");
        h.Network.DeliverAll();

        CoapMessage response = await request.Done();
        response.Type.Should().Be(CoapMessageType.Acknowledgement);
        response.MessageId.Should().Be(sent.MessageId);
        response.Token.ToArray().Should().Equal(sent.Token.ToArray());
        response.GetPayloadString().Should().Be("hello");
        server.Received.Should().ContainSingle("a piggybacked response needs no acknowledgement");
    }

    [Fact]
    public void APiggybackedResponseWithAnotherTokenIsNotTakenAsTheResponse()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint);
        h.Network.DeliverAll();
        CoapMessage sent = server.Last.Parsed;

        CoapMessage wrong = new() { Type = CoapMessageType.Acknowledgement, Code = CoapCode.Content, MessageId = sent.MessageId, Token = new byte[] { 0xBA, 0xD0 } };
        server.Send(wrong, client.LocalEndPoint);
        h.Network.DeliverAll();

        request.IsCompleted.Should().BeFalse();
    }

    [Fact]
    public async Task BetweenTwoEndpointsTheResponseIsPiggybackedOnTheAcknowledgement()
    {
        using MessagingHarness h = new();
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Echo());
        CoapEndpoint client = h.Endpoint(ClientAddress);

        CoapMessage request = Get("a/b");
        Task<CoapMessage> pending = client.SendRequestAsync(request, server.LocalEndPoint);
        h.Network.DeliverAll();

        CoapMessage response = await pending.Done();
        response.Type.Should().Be(CoapMessageType.Acknowledgement);
        response.MessageId.Should().Be(request.MessageId);
        response.Token.ToArray().Should().Equal(request.Token.ToArray());
        response.GetPayloadString().Should().Be("/a/b");
        h.Network.Sent.Should().HaveCount(2);
    }
}
