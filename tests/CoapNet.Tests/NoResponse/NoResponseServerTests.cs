using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.NoResponse;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Messaging;
using static CoapNet.Tests.Messaging.MessagingHarness;

namespace CoapNet.Tests.NoResponse;

/// <summary>
/// RFC 7967 on a server endpoint, in virtual time with a raw client: a response of a class the request
/// declines is not sent, a CON still gets its empty ACK (and its duplicates the same), and any class the
/// request did not decline is answered as usual.
/// </summary>
public class NoResponseServerTests
{
    private static readonly byte[] Token = [0x4E, 0x52];

    [Theory]
    [InlineData(null, 0x45, false)]
    [InlineData(0, 0x45, false)]
    [InlineData(2, 0x45, true)]
    [InlineData(2, 0x41, true)]
    [InlineData(2, 0x84, false)]
    [InlineData(2, 0xA0, false)]
    [InlineData(8, 0x84, true)]
    [InlineData(8, 0x45, false)]
    [InlineData(16, 0xA3, true)]
    [InlineData(16, 0x84, false)]
    [InlineData(10, 0x84, true)]
    [InlineData(10, 0xA0, false)]
    [InlineData(26, 0x45, true)]
    [InlineData(26, 0x84, true)]
    [InlineData(26, 0xA0, true)]
    public void EachBitSuppressesItsOwnClassOnly(int? value, byte code, bool suppressed)
    {
        CoapMessage request = RawRequest(1, Token, CoapMessageType.NonConfirmable);
        request.NoResponse = (CoapNoResponse?)value;

        NoResponseStage.Suppresses(request, new CoapCode(code)).Should().Be(suppressed);
    }

    [Fact]
    public void AnOptionOfTwoBytesIsIgnoredAsAnOptionOfBadLength()
    {
        // RFC 7252 section 5.4.3: a value outside the option's length bounds (0-1, RFC 7967 section 2) is treated as unrecognized.
        CoapMessage request = RawRequest(1, Token, CoapMessageType.NonConfirmable);
        request.Options.Add(new CoapOptionEntry(CoapOptionNumber.NoResponse, new byte[] { 0x00, 0x1A }));

        request.NoResponse.Should().BeNull();
        NoResponseStage.Suppresses(request, CoapCode.Content).Should().BeFalse();
    }

    [Fact]
    public void UndefinedBitsAreRefused()
    {
        CoapMessage request = new();

        FluentActions.Invoking(() => request.NoResponse = (CoapNoResponse)4).Should().Throw<ArgumentOutOfRangeException>();
        request.NoResponse = CoapNoResponse.All;
        request.Options.TryGet(CoapOptionNumber.NoResponse, out CoapOptionEntry entry).Should().BeTrue();
        entry.Value.ToArray().Should().Equal(0x1A);
    }

    [Fact]
    public void ANonRequestThatDeclinesSuccessIsHandledButNotAnswered()
    {
        using MessagingHarness h = new();
        int handled = 0;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Echo(_ => handled++));
        TestPeer client = h.Peer(ClientAddress);

        client.Send(WithNoResponse(RawRequest(0x0200, Token, CoapMessageType.NonConfirmable), CoapNoResponse.Success), server.LocalEndPoint);
        h.Advance(TimeSpan.FromMinutes(5));

        handled.Should().Be(1, "the request reaches the handler; only its response is suppressed");
        client.Received.Should().BeEmpty();

        // The same request without the option is answered: the silence above is the option's doing.
        client.Send(RawRequest(0x0201, Token, CoapMessageType.NonConfirmable), server.LocalEndPoint);
        h.Network.DeliverAll();
        client.Received.Should().ContainSingle().Which.Parsed.Code.Should().Be(CoapCode.Content);
    }

    [Fact]
    public void AConfirmableRequestThatDeclinesEverythingGetsOnlyAnEmptyAcknowledgementAndItsDuplicateTheSame()
    {
        using MessagingHarness h = new();
        CoapExchange? seen = null;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Echo(e => seen = e));
        TestPeer client = h.Peer(ClientAddress);
        CoapMessage request = WithNoResponse(RawRequest(0x0300, Token), CoapNoResponse.All);

        client.Send(request, server.LocalEndPoint);
        h.Network.DeliverAll();

        client.Received.Should().ContainSingle().Which.Bytes.Should().Equal(EmptyMessageBytes.EmptyAck(0x0300), "RFC 7252 section 4.2: the CON is acknowledged so the client stops retransmitting");
        seen!.HasResponded.Should().BeTrue();

        // A retransmission of the CON is a duplicate: it gets the recorded empty ACK again, and the handler does not run twice.
        client.Send(request, server.LocalEndPoint);
        h.Advance(TimeSpan.FromMinutes(5));
        client.Received.Select(r => Convert.ToHexString(r.Bytes)).Should().Equal(Convert.ToHexString(EmptyMessageBytes.EmptyAck(0x0300)), Convert.ToHexString(EmptyMessageBytes.EmptyAck(0x0300)));
    }

    [Fact]
    public void AConfirmableRequestAlreadyAcknowledgedGetsNoSeparateResponse()
    {
        using MessagingHarness h = new();
        CoapExchange? pending = null;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: exchange => (pending = exchange).Accept());
        TestPeer client = h.Peer(ClientAddress);

        client.Send(WithNoResponse(RawRequest(0x0400, Token), CoapNoResponse.Success), server.LocalEndPoint);
        h.Network.DeliverAll();
        client.Received.Should().ContainSingle().Which.Bytes.Should().Equal(EmptyMessageBytes.EmptyAck(0x0400));

        pending!.Respond(new CoapMessage { Code = CoapCode.Changed });
        h.Advance(TimeSpan.FromMinutes(5));

        client.Received.Should().ContainSingle("the separate 2.04 is suppressed, and no CON is retransmitted for it");
        pending.HasResponded.Should().BeTrue();
    }

    [Theory]
    [InlineData(CoapMessageType.NonConfirmable, CoapNoResponse.Success, 0x84)]
    [InlineData(CoapMessageType.NonConfirmable, CoapNoResponse.Success | CoapNoResponse.ServerError, 0x84)]
    [InlineData(CoapMessageType.Confirmable, CoapNoResponse.Success | CoapNoResponse.ClientError, 0xA0)]
    [InlineData(CoapMessageType.Confirmable, CoapNoResponse.None, 0x45)]
    public void AClassTheRequestDidNotDeclineIsStillAnswered(CoapMessageType type, CoapNoResponse declined, byte code)
    {
        using MessagingHarness h = new();
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: exchange => exchange.Respond(new CoapMessage { Code = new CoapCode(code) }));
        TestPeer client = h.Peer(ClientAddress);

        client.Send(WithNoResponse(RawRequest(0x0500, Token, type), declined), server.LocalEndPoint);
        h.Network.DeliverAll();

        CoapMessage response = client.Received.Should().ContainSingle().Which.Parsed;
        response.Code.Should().Be(new CoapCode(code));
        response.Token.ToArray().Should().Equal(Token);
        response.Type.Should().Be(type == CoapMessageType.Confirmable ? CoapMessageType.Acknowledgement : CoapMessageType.NonConfirmable);
    }

    [Fact]
    public void A231ContinueStillAsksForTheNextBlockOfAnUploadThatDeclinesSuccess()
    {
        using MessagingHarness h = new();
        int handled = 0;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: exchange =>
        {
            handled++;
            exchange.Respond(new CoapMessage { Code = CoapCode.Changed });
        });
        TestPeer client = h.Peer(ClientAddress);

        CoapMessage first = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Put, MessageId = 0x0600, Token = Token };
        first.UriPath = "upload";
        first.Block1 = new CoapBlock(0, more: true, sizeExponent: 0);
        first.Payload = new byte[16];
        client.Send(WithNoResponse(first, CoapNoResponse.Success), server.LocalEndPoint);
        h.Network.DeliverAll();

        // RFC 7959 section 2.3: without the 2.31 the client could not send its next block.
        client.Received.Should().ContainSingle().Which.Parsed.Code.Should().Be(CoapCode.Continue);

        CoapMessage last = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Put, MessageId = 0x0601, Token = Token };
        last.UriPath = "upload";
        last.Block1 = new CoapBlock(1, more: false, sizeExponent: 0);
        last.Payload = new byte[4];
        client.Send(WithNoResponse(last, CoapNoResponse.Success), server.LocalEndPoint);
        h.Network.DeliverAll();

        handled.Should().Be(1);
        client.Received.Should().HaveCount(2);
        client.Last.Bytes.Should().Equal(EmptyMessageBytes.EmptyAck(0x0601), "the final 2.04 is the response the client declined");
    }

    private static CoapMessage WithNoResponse(CoapMessage request, CoapNoResponse classes)
    {
        request.NoResponse = classes;
        return request;
    }
}
