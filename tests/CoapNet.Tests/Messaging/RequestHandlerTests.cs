using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;
using static CoapNet.Tests.Messaging.MessagingHarness;

namespace CoapNet.Tests.Messaging;

/// <summary>What the endpoint does around the request handler: failures, double answers, no handler.</summary>
public class RequestHandlerTests
{
    private static readonly byte[] Token = [0x77];

    [Fact]
    public void AHandlerExceptionIsAnsweredWithInternalServerErrorAndTheNextRequestIsServed()
    {
        using MessagingHarness h = new();
        int calls = 0;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: exchange =>
        {
            if (++calls == 1)
            {
                throw new InvalidOperationException("boom");
            }

            Echo()(exchange);
        });
        TestPeer client = h.Peer(ClientAddress);

        client.Send(RawRequest(1, Token, path: "fails"), server.LocalEndPoint);
        client.Send(RawRequest(2, Token, path: "works"), server.LocalEndPoint);
        h.Network.DeliverAll();

        client.Received.Should().HaveCount(2);
        CoapMessage failure = client.Received[0].Parsed;
        failure.Type.Should().Be(CoapMessageType.Acknowledgement);
        failure.MessageId.Should().Be(1);
        failure.Token.ToArray().Should().Equal(Token);
        failure.Code.Should().Be(CoapCode.InternalServerError);
        client.Received[1].Parsed.GetPayloadString().Should().Be("/works");
    }

    [Fact]
    public void AHandlerExceptionAfterAcceptIsAnsweredWithASeparateInternalServerError()
    {
        using MessagingHarness h = new();
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: exchange =>
        {
            exchange.Accept();
            throw new InvalidOperationException("boom");
        });
        TestPeer client = h.Peer(ClientAddress);

        client.Send(RawRequest(1, Token), server.LocalEndPoint);
        h.Network.DeliverAll();

        client.Received.Should().HaveCount(2);
        client.Received[0].Bytes.Should().Equal(EmptyMessageBytes.EmptyAck(1));
        CoapMessage failure = client.Received[1].Parsed;
        failure.Type.Should().Be(CoapMessageType.Confirmable);
        failure.Code.Should().Be(CoapCode.InternalServerError);
        failure.Token.ToArray().Should().Equal(Token);
    }

    [Fact]
    public void AHandlerExceptionAfterItsResponseSendsNothingMore()
    {
        using MessagingHarness h = new();
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: exchange =>
        {
            exchange.Respond(new CoapMessage { Code = CoapCode.Content });
            throw new InvalidOperationException("boom");
        });
        TestPeer client = h.Peer(ClientAddress);

        client.Send(RawRequest(1, Token), server.LocalEndPoint);
        h.Network.DeliverAll();

        client.Received.Should().ContainSingle().Which.Parsed.Code.Should().Be(CoapCode.Content);
    }

    [Fact]
    public void RespondingTwiceThrowsAndSendsOneResponse()
    {
        using MessagingHarness h = new();
        Exception? second = null;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: exchange =>
        {
            exchange.Respond(new CoapMessage { Code = CoapCode.Content });
            second = Record.Exception(() => exchange.Respond(new CoapMessage { Code = CoapCode.Changed }));
        });
        TestPeer client = h.Peer(ClientAddress);

        client.Send(RawRequest(1, Token), server.LocalEndPoint);
        h.Network.DeliverAll();

        second.Should().BeOfType<InvalidOperationException>();
        client.Received.Should().ContainSingle().Which.Parsed.Code.Should().Be(CoapCode.Content);
    }

    [Fact]
    public void RespondingTwiceToAnAcceptedRequestThrowsAndSendsOneSeparateResponse()
    {
        using MessagingHarness h = new();
        CoapExchange? pending = null;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: exchange => (pending = exchange).Accept());
        TestPeer client = h.Peer(ClientAddress);
        client.Send(RawRequest(1, Token), server.LocalEndPoint);
        h.Network.DeliverAll();

        pending!.Respond(new CoapMessage { Code = CoapCode.Content });
        Action again = () => pending.Respond(new CoapMessage { Code = CoapCode.Content });

        again.Should().Throw<InvalidOperationException>();
        h.Network.DeliverAll();
        client.Received.Should().HaveCount(2);
    }

    [Fact]
    public void RespondingWithANonResponseCodeThrowsAndLeavesTheExchangeOpen()
    {
        using MessagingHarness h = new();
        Exception? wrong = null;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: exchange =>
        {
            wrong = Record.Exception(() => exchange.Respond(new CoapMessage { Code = CoapCode.Get }));
            exchange.HasResponded.Should().BeFalse();
            exchange.Respond(new CoapMessage { Code = CoapCode.Content });
        });
        TestPeer client = h.Peer(ClientAddress);

        client.Send(RawRequest(1, Token), server.LocalEndPoint);
        h.Network.DeliverAll();

        wrong.Should().BeOfType<ArgumentException>();
        client.Received.Should().ContainSingle().Which.Parsed.Code.Should().Be(CoapCode.Content);
    }

    [Fact]
    public void AnErrorResponseTooLargeForADatagramThrowsAndLeavesTheExchangeOpen()
    {
        using MessagingHarness h = new();
        Exception? tooLarge = null;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: exchange =>
        {
            // A 2.05 body this large goes out in Block2 blocks (RFC 7959); an error's body is never split.
            tooLarge = Record.Exception(() => exchange.Respond(new CoapMessage { Code = CoapCode.BadRequest, Payload = new byte[70_000] }));
            exchange.Respond(new CoapMessage { Code = CoapCode.RequestEntityTooLarge });
        });
        TestPeer client = h.Peer(ClientAddress);

        client.Send(RawRequest(1, Token), server.LocalEndPoint);
        h.Network.DeliverAll();

        tooLarge.Should().BeAssignableTo<ArgumentException>();
        client.Received.Should().ContainSingle().Which.Parsed.Code.Should().Be(CoapCode.RequestEntityTooLarge);
    }

    [Fact]
    public void TheExchangeDescribesTheRequest()
    {
        using MessagingHarness h = new();
        CoapExchange? seen = null;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: exchange => seen = exchange);
        TestPeer client = h.Peer(ClientAddress);

        client.Send(RawRequest(0x0102, Token, path: "x/y"), server.LocalEndPoint);
        h.Network.DeliverAll();

        seen!.RemoteEndPoint.Should().Be(client.EndPoint);
        seen.IsConfirmable.Should().BeTrue();
        seen.Request.MessageId.Should().Be(0x0102);
        seen.Request.UriPath.Should().Be("/x/y");
        seen.IsAccepted.Should().BeFalse();
        seen.HasResponded.Should().BeFalse();
    }

    [Fact]
    public void WithoutASeparateResponseDelayALateResponseToARequestNotAcceptedIsStillPiggybacked()
    {
        using MessagingHarness h = new();
        CoapExchange? pending = null;
        CoapEndpointOptions options = h.Options();
        options.SeparateResponseDelay = null;
        CoapEndpoint server = h.Endpoint(ServerAddress, options, handler: exchange => pending = exchange);
        TestPeer client = h.Peer(ClientAddress);
        client.Send(RawRequest(9, Token), server.LocalEndPoint);
        h.Network.DeliverAll();

        h.Time.Advance(TimeSpan.FromSeconds(1));
        pending!.Respond(new CoapMessage { Code = CoapCode.Content });
        h.Network.DeliverAll();

        CoapMessage response = client.Received.Should().ContainSingle().Subject.Parsed;
        response.Type.Should().Be(CoapMessageType.Acknowledgement);
        response.MessageId.Should().Be(9);
    }

    [Fact]
    public void ByDefaultARequestNotAnsweredWithinATenthOfASecondIsAcknowledgedAndAnsweredSeparately()
    {
        using MessagingHarness h = new();
        CoapExchange? pending = null;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: exchange => pending = exchange);
        TestPeer client = h.Peer(ClientAddress);
        client.Send(RawRequest(9, Token), server.LocalEndPoint);
        h.Network.DeliverAll();

        h.Time.Advance(TimeSpan.FromMilliseconds(99));
        h.Network.DeliverAll();
        client.Received.Should().BeEmpty("the delay has not passed");
        h.Time.Advance(TimeSpan.FromMilliseconds(1));
        h.Network.DeliverAll();
        pending!.Respond(new CoapMessage { Code = CoapCode.Content });
        h.Network.DeliverAll();

        client.Received.Should().HaveCount(2);
        client.Received[0].Bytes.Should().Equal(EmptyMessageBytes.EmptyAck(9), "RFC 7252 section 5.2.2: the empty ACK comes first");
        client.Received[1].Parsed.Type.Should().Be(CoapMessageType.Confirmable, "the separate response is confirmable");
        client.Received[1].Parsed.Code.Should().Be(CoapCode.Content);
    }

    [Fact]
    public void WithoutAHandlerAConfirmableRequestIsResetAndANonConfirmableOneIgnored()
    {
        using MessagingHarness h = new();
        CoapEndpoint server = h.Endpoint(ServerAddress);
        TestPeer client = h.Peer(ClientAddress);

        byte[] request = client.Send(RawRequest(3, Token), server.LocalEndPoint);
        client.SendBytes(request, server.LocalEndPoint);
        client.Send(RawRequest(4, Token, CoapMessageType.NonConfirmable), server.LocalEndPoint);
        h.Network.DeliverAll();

        client.Received.Select(r => r.Bytes).Should().BeEquivalentTo([EmptyMessageBytes.Reset(3), EmptyMessageBytes.Reset(3)], o => o.WithStrictOrdering());
    }

    [Fact]
    public void AConfirmableMessageWithASignalingCodeIsReset()
    {
        using MessagingHarness h = new();
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Echo());
        TestPeer client = h.Peer(ClientAddress);

        client.Send(new CoapMessage { Type = CoapMessageType.Confirmable, Code = CoapCode.Csm, MessageId = 5 }, server.LocalEndPoint);
        client.Send(new CoapMessage { Type = CoapMessageType.NonConfirmable, Code = CoapCode.Csm, MessageId = 6 }, server.LocalEndPoint);
        h.Network.DeliverAll();

        client.Received.Should().ContainSingle().Which.Bytes.Should().Equal(EmptyMessageBytes.Reset(5));
    }

    [Fact]
    public void StrayAcknowledgementsAndResetsAreIgnored()
    {
        using MessagingHarness h = new();
        int handled = 0;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Echo(_ => handled++));
        TestPeer client = h.Peer(ClientAddress);

        client.SendAck(1, server.LocalEndPoint);
        client.SendReset(2, server.LocalEndPoint);
        client.Send(new CoapMessage { Type = CoapMessageType.Acknowledgement, Code = CoapCode.Content, MessageId = 3, Token = Token }, server.LocalEndPoint);
        client.Send(new CoapMessage { Type = CoapMessageType.Acknowledgement, Code = CoapCode.Get, MessageId = 4, Token = Token }, server.LocalEndPoint);
        h.Advance(TimeSpan.FromMinutes(10));

        client.Received.Should().BeEmpty();
        handled.Should().Be(0);
    }
}
