using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;
using static CoapNet.Tests.Messaging.MessagingHarness;

namespace CoapNet.Tests.Messaging;

/// <summary>RFC 7252 section 5.2.2: an empty ACK now, the response later in its own CON.</summary>
public class SeparateResponseTests
{
    private static readonly byte[] Token = [0x5E, 0xBA, 0x2A, 0x7E];

    [Fact]
    public void AnAcceptedRequestGetsAnEmptyAcknowledgementAndLaterAConfirmableResponse()
    {
        using MessagingHarness h = new();
        CoapExchange? pending = null;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: exchange =>
        {
            pending = exchange;
            exchange.Accept();
        });
        TestPeer client = h.Peer(ClientAddress);
        client.Send(RawRequest(0x0100, Token), server.LocalEndPoint);
        h.Network.DeliverAll();

        client.Received.Should().ContainSingle().Which.Bytes.Should().Equal(EmptyMessageBytes.EmptyAck(0x0100));
        pending!.IsAccepted.Should().BeTrue();

        h.Time.Advance(TimeSpan.FromSeconds(5));
        CoapMessage response = new() { Code = CoapCode.Content };
        response.SetPayload("late");
        pending.Respond(response);
        h.Network.DeliverAll();

        pending.HasResponded.Should().BeTrue();
        CoapMessage separate = client.Last.Parsed;
        separate.Type.Should().Be(CoapMessageType.Confirmable);
        separate.Code.Should().Be(CoapCode.Content);
        separate.MessageId.Should().NotBe(0x0100);
        separate.Token.ToArray().Should().Equal(Token);
        separate.GetPayloadString().Should().Be("late");
    }

    [Fact]
    public void ASeparateResponseIsRetransmittedUntilTheClientAcknowledgesIt()
    {
        using MessagingHarness h = new();
        (CoapEndpoint server, TestPeer client) = AcceptThenRespondChanged(h);
        h.Network.DeliverAll();
        byte[] separate = client.Last.Bytes;

        h.Advance(TimeSpan.FromSeconds(3));
        client.Received.Should().HaveCount(3);
        client.Received[2].Bytes.Should().Equal(separate);

        client.SendAck(client.Last.Parsed.MessageId, server.LocalEndPoint);
        h.Advance(TimeSpan.FromMinutes(10));

        client.Received.Should().HaveCount(3);
    }

    [Fact]
    public void AnUnacknowledgedSeparateResponseIsSentFiveTimesAtMost()
    {
        using MessagingHarness h = new();
        (CoapEndpoint server, TestPeer client) = AcceptThenRespondChanged(h);

        h.Advance(TimeSpan.FromMinutes(10));

        client.Received.Skip(1).Should().HaveCount(5).And.AllSatisfy(r => r.Parsed.Code.Should().Be(CoapCode.Changed));
    }

    [Fact]
    public void AResetFromTheClientStopsTheSeparateResponse()
    {
        using MessagingHarness h = new();
        (CoapEndpoint server, TestPeer client) = AcceptThenRespondChanged(h);
        h.Network.DeliverAll();

        client.SendReset(client.Last.Parsed.MessageId, server.LocalEndPoint);
        h.Advance(TimeSpan.FromMinutes(10));

        client.Received.Should().HaveCount(2);
    }

    [Fact]
    public async Task TheClientCompletesWithTheSeparateResponseAndAcknowledgesIt()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint);
        h.Network.DeliverAll();
        CoapMessage sent = server.Last.Parsed;

        server.SendAck(sent.MessageId, client.LocalEndPoint);
        h.Advance(TimeSpan.FromSeconds(30));
        request.IsCompleted.Should().BeFalse();

        server.SendSeparate(sent.Token, 0x7777, client.LocalEndPoint, CoapCode.Content, "separate");
        h.Network.DeliverAll();

        CoapMessage response = await request.Done();
        response.Type.Should().Be(CoapMessageType.Confirmable);
        response.MessageId.Should().Be(0x7777);
        response.GetPayloadString().Should().Be("separate");
        server.Last.Bytes.Should().Equal(EmptyMessageBytes.EmptyAck(0x7777));
        h.Between(client.LocalEndPoint, server.EndPoint).Should().HaveCount(2, "the request once, then the ACK of the response");
    }

    [Fact]
    public async Task AResponseArrivingBeforeTheEmptyAcknowledgementCompletesTheRequestAndStopsRetransmission()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint);
        h.Network.DeliverAll();
        CoapMessage sent = server.Last.Parsed;

        server.SendSeparate(sent.Token, 0x7777, client.LocalEndPoint, CoapCode.Content, "early");
        h.Network.DeliverAll();

        (await request.Done()).GetPayloadString().Should().Be("early");
        server.Last.Bytes.Should().Equal(EmptyMessageBytes.EmptyAck(0x7777));

        h.Advance(TimeSpan.FromMinutes(10));
        h.Between(client.LocalEndPoint, server.EndPoint).Select(d => d.Parsed.Type)
            .Should().Equal(CoapMessageType.Confirmable, CoapMessageType.Acknowledgement);

        // The delayed empty ACK of the request then matches nothing and is ignored.
        server.SendAck(sent.MessageId, client.LocalEndPoint);
        h.Advance(TimeSpan.FromMinutes(10));
        h.Between(client.LocalEndPoint, server.EndPoint).Should().HaveCount(2);
    }

    [Fact]
    public async Task ADuplicateSeparateResponseIsAcknowledgedAgainButNotDeliveredTwice()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint);
        h.Network.DeliverAll();
        CoapMessage sent = server.Last.Parsed;
        server.SendAck(sent.MessageId, client.LocalEndPoint);

        byte[] response = server.SendSeparate(sent.Token, 0x7777, client.LocalEndPoint, CoapCode.Content, "once");
        server.SendBytes(response, client.LocalEndPoint);
        h.Network.DeliverAll();

        (await request.Done()).GetPayloadString().Should().Be("once");

        // Had the duplicate reached matching again, it would find no request and be reset.
        server.Received.Skip(1).Should().HaveCount(2).And.AllSatisfy(r => r.Bytes.Should().Equal(EmptyMessageBytes.EmptyAck(0x7777)));
    }

    [Fact]
    public async Task ANonConfirmableSeparateResponseCompletesTheRequestWithoutAnAcknowledgement()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint);
        h.Network.DeliverAll();
        CoapMessage sent = server.Last.Parsed;
        server.SendAck(sent.MessageId, client.LocalEndPoint);

        server.SendSeparate(sent.Token, 0x7777, client.LocalEndPoint, CoapCode.Content, "non", CoapMessageType.NonConfirmable);
        h.Network.DeliverAll();

        (await request.Done()).Type.Should().Be(CoapMessageType.NonConfirmable);
        server.Received.Should().ContainSingle("only the request");
    }

    [Fact]
    public void AConfirmableResponseWithAnUnknownTokenIsReset()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        _ = client.SendRequestAsync(Get(), server.EndPoint);
        h.Network.DeliverAll();

        server.SendSeparate(new byte[] { 9, 9, 9 }, 0x2222, client.LocalEndPoint, CoapCode.Content, "for nobody");
        h.Network.DeliverAll();

        server.Last.Bytes.Should().Equal(EmptyMessageBytes.Reset(0x2222));
    }

    [Fact]
    public void ANonConfirmableResponseWithAnUnknownTokenIsIgnored()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);

        server.SendSeparate(new byte[] { 9, 9, 9 }, 0x2222, client.LocalEndPoint, CoapCode.Content, "for nobody", CoapMessageType.NonConfirmable);
        h.Network.DeliverAll();

        server.Received.Should().BeEmpty();
    }

    [Fact]
    public async Task TheResponseTimeoutRunsFromTheEmptyAcknowledgement()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress, h.Options(responseTimeout: TimeSpan.FromSeconds(10)));
        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint);
        h.Network.DeliverAll();
        h.Time.Advance(TimeSpan.FromSeconds(1));
        server.SendAck(server.Last.Parsed.MessageId, client.LocalEndPoint);
        h.Network.DeliverAll();

        h.Time.Advance(TimeSpan.FromSeconds(10) - TimeSpan.FromTicks(1));
        request.IsCompleted.Should().BeFalse();

        h.Time.Advance(TimeSpan.FromTicks(1));
        Func<Task> outcome = () => request.Done();
        (await outcome.Should().ThrowAsync<CoapTimeoutException>()).Which.RemoteEndPoint.Should().Be(server.EndPoint);
    }

    [Fact]
    public async Task TheResponseTimeoutDefaultsToMaxTransmitWait()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint);
        h.Network.DeliverAll();
        server.SendAck(server.Last.Parsed.MessageId, client.LocalEndPoint);
        h.Network.DeliverAll();

        h.Time.Advance(TimeSpan.FromSeconds(92));
        request.IsCompleted.Should().BeFalse();

        h.Time.Advance(TimeSpan.FromSeconds(1));
        Func<Task> outcome = () => request.Done();
        await outcome.Should().ThrowAsync<CoapTimeoutException>();
    }

    [Fact]
    public async Task AResponseAfterTheTimeoutFindsNoRequestAndIsReset()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress, h.Options(responseTimeout: TimeSpan.FromSeconds(10)));
        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint);
        h.Network.DeliverAll();
        CoapMessage sent = server.Last.Parsed;
        server.SendAck(sent.MessageId, client.LocalEndPoint);
        h.Advance(TimeSpan.FromSeconds(11));
        Func<Task> outcome = () => request.Done();
        await outcome.Should().ThrowAsync<CoapTimeoutException>();

        server.SendSeparate(sent.Token, 0x7777, client.LocalEndPoint, CoapCode.Content, "too late");
        h.Network.DeliverAll();

        server.Last.Bytes.Should().Equal(EmptyMessageBytes.Reset(0x7777));
    }

    [Fact]
    public async Task ANonConfirmableRequestIsSentOnceAndTimesOutWithoutAResponse()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress, h.Options(responseTimeout: TimeSpan.FromSeconds(20)));
        Task<CoapMessage> request = client.SendRequestAsync(Get(type: CoapMessageType.NonConfirmable), server.EndPoint);

        h.Advance(TimeSpan.FromSeconds(19));
        request.IsCompleted.Should().BeFalse();
        h.Advance(TimeSpan.FromSeconds(1));

        h.Between(client.LocalEndPoint, server.EndPoint).Should().ContainSingle().Which.Parsed.Type.Should().Be(CoapMessageType.NonConfirmable);
        Func<Task> outcome = () => request.Done();
        await outcome.Should().ThrowAsync<CoapTimeoutException>();
    }

    [Fact]
    public async Task BetweenTwoEndpointsASeparateResponseIsDeliveredAndItsRetransmissionStops()
    {
        using MessagingHarness h = new();
        CoapExchange? pending = null;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: exchange => (pending = exchange).Accept());
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<CoapMessage> request = client.SendRequestAsync(Get("slow"), server.LocalEndPoint);
        h.Advance(TimeSpan.FromSeconds(30));
        request.IsCompleted.Should().BeFalse();

        CoapMessage response = new() { Code = CoapCode.Content };
        response.SetPayload("done " + pending!.Request.UriPath);
        pending.Respond(response);
        h.Advance(TimeSpan.FromMinutes(10));

        (await request.Done()).GetPayloadString().Should().Be("done /slow");
        h.Between(server.LocalEndPoint, client.LocalEndPoint).Select(d => d.Parsed.Type)
            .Should().Equal(CoapMessageType.Acknowledgement, CoapMessageType.Confirmable);
        h.Between(client.LocalEndPoint, server.LocalEndPoint).Select(d => d.Parsed.Type)
            .Should().Equal(CoapMessageType.Confirmable, CoapMessageType.Acknowledgement);
    }

    [Fact]
    public void ANonConfirmableRequestIsAnsweredWithANonConfirmableResponse()
    {
        using MessagingHarness h = new();
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Echo());
        TestPeer client = h.Peer(ClientAddress);

        client.Send(RawRequest(0x0100, Token, CoapMessageType.NonConfirmable, "non"), server.LocalEndPoint);
        h.Advance(TimeSpan.FromMinutes(10));

        CoapMessage response = client.Received.Should().ContainSingle().Subject.Parsed;
        response.Type.Should().Be(CoapMessageType.NonConfirmable);
        response.Token.ToArray().Should().Equal(Token);
        response.GetPayloadString().Should().Be("/non");
    }

    [Fact]
    public void AcceptingANonConfirmableRequestSendsNothing()
    {
        using MessagingHarness h = new();
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: exchange => exchange.Accept());
        TestPeer client = h.Peer(ClientAddress);

        client.Send(RawRequest(0x0100, Token, CoapMessageType.NonConfirmable), server.LocalEndPoint);
        h.Network.DeliverAll();

        client.Received.Should().BeEmpty();
    }

    /// <summary>
    /// A client's CON request that the server accepts (the empty ACK is delivered) and then answers
    /// with 2.04 as a separate CON, which is sent but not yet delivered.
    /// </summary>
    private static (CoapEndpoint Server, TestPeer Client) AcceptThenRespondChanged(MessagingHarness h)
    {
        CoapExchange? pending = null;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: exchange => (pending = exchange).Accept());
        TestPeer client = h.Peer(ClientAddress);
        client.Send(RawRequest(0x0100, Token), server.LocalEndPoint);
        h.Network.DeliverAll();
        pending!.Respond(new CoapMessage { Code = CoapCode.Changed });
        return (server, client);
    }
}
