using CoapNet.Freshness;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Messaging;
using static CoapNet.Tests.Messaging.MessagingHarness;

namespace CoapNet.Tests.Freshness;

/// <summary>
/// RFC 9175 section 2 on a server endpoint, in virtual time with a raw client that records the wire: an unsafe
/// request from an unverified peer gets 4.01 with an Echo value and is not processed, its repetition with the value
/// is, a stale, forged or borrowed value is challenged again, safe methods pass, and with the amplification
/// mitigation a large response to an unverified peer is replaced by the challenge while a small one is not.
/// </summary>
public class EchoServerTests
{
    private static readonly TimeSpan Window = TimeSpan.FromSeconds(5);

    private ushort _messageId = 0x0100;

    [Fact]
    public void AnUnsafeRequestFromAnUnverifiedPeerIsChallengedAndNotProcessed()
    {
        using MessagingHarness h = new();
        int handled = 0;
        CoapEndpoint server = h.Endpoint(ServerAddress, Freshness(h), Answer(() => handled++));
        TestPeer client = h.Peer(ClientAddress);

        CoapMessage request = Request(CoapCode.Put);
        client.Send(request, server.LocalEndPoint);
        h.Network.DeliverAll();

        CoapMessage challenge = client.Received.Should().ContainSingle().Which.Parsed;
        challenge.Type.Should().Be(CoapMessageType.Acknowledgement, "the challenge is piggybacked like any response");
        challenge.MessageId.Should().Be(request.MessageId);
        challenge.Code.Should().Be(CoapCode.Unauthorized, "RFC 9175 section 2.3");
        challenge.Echo.Should().NotBeNull();
        challenge.Echo!.Value.Length.Should().BeInRange(1, 40, "RFC 9175 section 2.2.1");
        handled.Should().Be(0, "an unfresh unsafe request is not processed");
    }

    [Fact]
    public void TheRepetitionWithTheEchoedValueIsProcessedAndVerifiesThePeerForTheWindow()
    {
        using MessagingHarness h = new();
        int handled = 0;
        CoapEndpoint server = h.Endpoint(ServerAddress, Freshness(h), Answer(() => handled++));
        TestPeer client = h.Peer(ClientAddress);
        ReadOnlyMemory<byte> echo = ChallengeFor(h, client, server, CoapCode.Post);

        CoapMessage again = Request(CoapCode.Post);
        again.Echo = echo;
        client.Send(again, server.LocalEndPoint);
        h.Network.DeliverAll();

        client.Last.Parsed.Code.Should().Be(CoapCode.Changed);
        handled.Should().Be(1);

        // Verified: within the window a request without Echo is processed; past it, challenged again.
        h.Advance(TimeSpan.FromSeconds(2));
        client.Send(Request(CoapCode.Delete), server.LocalEndPoint);
        h.Network.DeliverAll();
        client.Last.Parsed.Code.Should().Be(CoapCode.Changed);
        handled.Should().Be(2);

        h.Advance(Window);
        client.Send(Request(CoapCode.Delete), server.LocalEndPoint);
        h.Network.DeliverAll();
        client.Last.Parsed.Code.Should().Be(CoapCode.Unauthorized, "the peer was verified by a value now older than the window");
        handled.Should().Be(2);
    }

    [Fact]
    public void AStaleForgedOrBorrowedEchoIsChallengedAgainWithANewValue()
    {
        using MessagingHarness h = new();
        int handled = 0;
        CoapEndpoint server = h.Endpoint(ServerAddress, Freshness(h), Answer(() => handled++));
        TestPeer client = h.Peer(ClientAddress);
        TestPeer other = h.Peer("10.0.0.3");
        ReadOnlyMemory<byte> echo = ChallengeFor(h, client, server, CoapCode.Put);

        // Forged: one bit of the value changed.
        byte[] forged = echo.ToArray();
        forged[^1] ^= 0x01;
        Repeat(client, server, forged);
        h.Network.DeliverAll();
        client.Last.Parsed.Code.Should().Be(CoapCode.Unauthorized);

        // Borrowed: the value was made for another address.
        Repeat(other, server, echo);
        h.Network.DeliverAll();
        other.Last.Parsed.Code.Should().Be(CoapCode.Unauthorized);

        // Stale: the right value, returned after the window.
        h.Advance(Window + TimeSpan.FromSeconds(1));
        Repeat(client, server, echo);
        h.Network.DeliverAll();
        CoapMessage again = client.Last.Parsed;
        again.Code.Should().Be(CoapCode.Unauthorized);
        again.Echo!.Value.ToArray().Should().NotEqual(echo.ToArray(), "a new challenge carries a new value");
        handled.Should().Be(0);

        // The new value works.
        Repeat(client, server, again.Echo!.Value);
        h.Network.DeliverAll();
        client.Last.Parsed.Code.Should().Be(CoapCode.Changed);
        handled.Should().Be(1);
    }

    [Fact]
    public void SafeMethodsAreNotChallenged()
    {
        using MessagingHarness h = new();
        int handled = 0;
        CoapEndpoint server = h.Endpoint(ServerAddress, Freshness(h), Answer(() => handled++));
        TestPeer client = h.Peer(ClientAddress);

        client.Send(Request(CoapCode.Get), server.LocalEndPoint);
        client.Send(Request(CoapCode.Fetch), server.LocalEndPoint);
        h.Network.DeliverAll();

        client.Received.Select(r => r.Parsed.Code).Should().Equal(CoapCode.Content, CoapCode.Content);
        handled.Should().Be(2);
        client.Received.Should().OnlyContain(r => r.Parsed.Echo == null);
    }

    [Fact]
    public void WithoutTheOptionsNothingIsChallenged()
    {
        using MessagingHarness h = new();
        int handled = 0;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Answer(() => handled++, largeBody: true));
        TestPeer client = h.Peer(ClientAddress);

        client.Send(Request(CoapCode.Put), server.LocalEndPoint);
        client.Send(Request(CoapCode.Get), server.LocalEndPoint);
        h.Network.DeliverAll();

        client.Received.Select(r => r.Parsed.Code).Should().Equal(CoapCode.Changed, CoapCode.Content);
        handled.Should().Be(2);
    }

    [Fact]
    public void ALargeResponseToAnUnverifiedPeerIsReplacedByAChallengeAndASmallOneIsNot()
    {
        using MessagingHarness h = new();
        int handled = 0;
        CoapEndpoint server = h.Endpoint(ServerAddress, Options(h, new EchoOptions { LimitAmplification = true }), Answer(() => handled++, largeBody: true));
        TestPeer client = h.Peer(ClientAddress);

        client.Send(Request(CoapCode.Get, "small"), server.LocalEndPoint);
        h.Network.DeliverAll();
        CoapMessage small = client.Last.Parsed;
        small.Code.Should().Be(CoapCode.Content);
        small.GetPayloadString().Should().Be("ok");

        CoapMessage request = Request(CoapCode.Get, "large");
        byte[] sent = client.Send(request, server.LocalEndPoint);
        h.Network.DeliverAll();
        ReceivedDatagram challenge = client.Last;
        challenge.Parsed.Code.Should().Be(CoapCode.Unauthorized, "600 bytes would be more than three times the request");
        challenge.Bytes.Length.Should().BeLessThanOrEqualTo(3 * sent.Length, "the challenge itself does not amplify");
        challenge.Parsed.Payload.Length.Should().Be(0);

        CoapMessage again = Request(CoapCode.Get, "large");
        again.Echo = challenge.Parsed.Echo;
        client.Send(again, server.LocalEndPoint);
        h.Network.DeliverAll();
        CoapMessage large = client.Last.Parsed;
        large.Code.Should().Be(CoapCode.Content);
        large.Payload.Length.Should().Be(600);

        // Verified now: the next large response goes out at once.
        client.Send(Request(CoapCode.Get, "large"), server.LocalEndPoint);
        h.Network.DeliverAll();
        client.Last.Parsed.Payload.Length.Should().Be(600);
        handled.Should().Be(4, "the challenged GET ran the handler too: it is safe, so its repetition may run it again");
    }

    [Fact]
    public void WithAmplificationMitigationAnUnsafeRequestFromAnUnverifiedPeerIsChallengedBeforeItActs()
    {
        using MessagingHarness h = new();
        int handled = 0;
        CoapEndpoint server = h.Endpoint(ServerAddress, Options(h, new EchoOptions { LimitAmplification = true }), Answer(() => handled++));
        TestPeer client = h.Peer(ClientAddress);

        client.Send(Request(CoapCode.Post), server.LocalEndPoint);
        h.Network.DeliverAll();

        client.Last.Parsed.Code.Should().Be(CoapCode.Unauthorized);
        handled.Should().Be(0, "replacing its response after the handler acted would make the repetition act twice");
    }

    [Fact]
    public void TheVerifiedPeersAreBounded()
    {
        using MessagingHarness h = new();
        int handled = 0;
        CoapEndpoint server = h.Endpoint(ServerAddress, Options(h, new EchoOptions { RequireFreshness = true, MaxVerifiedPeers = 1 }), Answer(() => handled++));
        TestPeer first = h.Peer(ClientAddress);
        TestPeer second = h.Peer("10.0.0.3");

        Repeat(first, server, ChallengeFor(h, first, server, CoapCode.Put));
        Repeat(second, server, ChallengeFor(h, second, server, CoapCode.Put));
        h.Network.DeliverAll();
        first.Last.Parsed.Code.Should().Be(CoapCode.Changed);
        second.Last.Parsed.Code.Should().Be(CoapCode.Changed, "a good value is honoured even when the peer cannot be remembered");

        // The first peer is remembered, the second is not: it is challenged again at once.
        first.Send(Request(CoapCode.Put), server.LocalEndPoint);
        second.Send(Request(CoapCode.Put), server.LocalEndPoint);
        h.Network.DeliverAll();
        first.Last.Parsed.Code.Should().Be(CoapCode.Changed);
        second.Last.Parsed.Code.Should().Be(CoapCode.Unauthorized);
    }

    [Fact]
    public void TheOptionsAreValidated()
    {
        FluentActions.Invoking(() => new CoapEndpointOptions { Echo = new EchoOptions { FreshnessWindow = TimeSpan.Zero } }.Validate()).Should().Throw<ArgumentException>();
        FluentActions.Invoking(() => new CoapEndpointOptions { Echo = new EchoOptions { MaxVerifiedPeers = -1 } }.Validate()).Should().Throw<ArgumentException>();
        FluentActions.Invoking(() => new CoapMessage().Echo = new ReadOnlyMemory<byte>(new byte[41])).Should().Throw<ArgumentException>();
        FluentActions.Invoking(() => new CoapMessage().RequestTag = new ReadOnlyMemory<byte>(new byte[9])).Should().Throw<ArgumentException>();
    }

    internal static CoapEndpointOptions Options(MessagingHarness h, EchoOptions echo) => new()
    {
        TimeProvider = h.Time,
        Random = new Random(7),
        Echo = echo,
    };

    private static CoapEndpointOptions Freshness(MessagingHarness h) => Options(h, new EchoOptions { RequireFreshness = true, FreshnessWindow = Window });

    /// <summary>2.04 to an unsafe request, 2.05 to a safe one ("ok", or 600 bytes for /large when <paramref name="largeBody"/>).</summary>
    private static CoapRequestHandler Answer(Action handled, bool largeBody = false) => exchange =>
    {
        handled();
        bool safe = exchange.Request.Code == CoapCode.Get || exchange.Request.Code == CoapCode.Fetch;
        CoapMessage response = new() { Code = safe ? CoapCode.Content : CoapCode.Changed };
        response.Payload = largeBody && exchange.Request.UriPath == "/large" ? new byte[600] : "ok"u8.ToArray();
        exchange.Respond(response);
    };

    private CoapMessage Request(CoapCode code, string path = "lamp")
    {
        CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = code, MessageId = _messageId, Token = new byte[] { 0x45, (byte)_messageId } };
        _messageId++;
        request.UriPath = path;
        return request;
    }

    private void Repeat(TestPeer peer, CoapEndpoint server, ReadOnlyMemory<byte> echo)
    {
        CoapMessage request = Request(CoapCode.Put);
        request.Echo = echo;
        peer.Send(request, server.LocalEndPoint);
    }

    private ReadOnlyMemory<byte> ChallengeFor(MessagingHarness h, TestPeer peer, CoapEndpoint server, CoapCode code)
    {
        peer.Send(Request(code), server.LocalEndPoint);
        h.Network.DeliverAll();
        CoapMessage challenge = peer.Last.Parsed;
        challenge.Code.Should().Be(CoapCode.Unauthorized);
        return challenge.Echo!.Value;
    }
}
