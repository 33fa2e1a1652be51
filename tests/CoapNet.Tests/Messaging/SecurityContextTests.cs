using System.Net;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;
using CoapNet.Transports;
using static CoapNet.Tests.Messaging.MessagingHarness;

namespace CoapNet.Tests.Messaging;

/// <summary>
/// The endpoint context (RFC 7252 section 9.1.1): a secure transport delivers each datagram with the session it came in,
/// handlers read who the peer proved to be, answers go back in that session, and a response matches a request only
/// when it came in the session the request was sent in.
/// </summary>
public class SecurityContextTests
{
    private static readonly CoapSecurityContext SessionOne = new("DTLS 1.2", CoapPeerIdentity.FromPreSharedKey("client-1"u8));
    private static readonly CoapSecurityContext SessionTwo = new("DTLS 1.2", CoapPeerIdentity.FromPreSharedKey("client-1"u8));
    private static readonly CoapSecurityContext OtherIdentity = new("DTLS 1.2", CoapPeerIdentity.FromPreSharedKey("client-2"u8));
    private const string Elsewhere = "10.0.0.9";

    [Fact]
    public async Task AHandlerReadsThePeersIdentityAndTheAnswerGoesBackInItsSession()
    {
        using MessagingHarness h = new();
        SessionTransport secure = new(h.Network.CreateTransport(ServerAddress)) { Incoming = SessionOne };
        CoapPeer? seen = null;
        await using CoapEndpoint server = new(secure, h.Options());
        server.RequestHandler = exchange =>
        {
            seen = exchange.Peer;
            exchange.Respond(exchange.Request.CreateResponse(CoapCode.Content));
        };
        server.Start();
        TestPeer client = h.Peer(ClientAddress);

        client.Send(Get(messageId: 5), server.LocalEndPoint);
        h.Network.DeliverAll();

        seen!.Identity.Should().Be(CoapPeerIdentity.FromPreSharedKey("client-1"u8), "the same key identity, whichever session proved it");
        seen.Identity!.ToString().Should().Be("psk:client-1");
        seen.SecurityContext.Should().BeSameAs(SessionOne);
        seen.Should().NotBe(new CoapPeer("coaps", client.EndPoint, SessionTwo), "a peer is its address and its session");
        secure.SentIn.Should().Equal([SessionOne], "the piggybacked response goes back in the request's session");
        client.Received.Should().ContainSingle().Which.Parsed.Code.Should().Be(CoapCode.Content);
    }

    [Fact]
    public async Task AResponseFromTheSameAddressInAnotherSessionDoesNotMatchTheRequest()
    {
        using MessagingHarness h = new();
        SessionTransport secure = new(h.Network.CreateTransport(ClientAddress));
        await using CoapEndpoint client = new(secure, h.Options());
        client.Start();
        TestPeer server = h.Peer(ServerAddress);

        Task<CoapMessage> response = client.SendRequestAsync(Get(), new CoapPeer("coaps", server.EndPoint, SessionOne));
        h.Network.DeliverAll();
        CoapMessage request = server.Received.Should().ContainSingle().Which.Parsed;
        secure.SentIn.Should().Equal([SessionOne], "the request goes out in the session its peer names");

        secure.Incoming = SessionTwo;
        server.SendPiggybacked(request, client.LocalEndPoint, CoapCode.Content, "other session");
        h.Network.DeliverAll();
        response.IsCompleted.Should().BeFalse("RFC 7252 section 9.1.1: a response in another session does not match");

        secure.Incoming = SessionOne;
        server.SendPiggybacked(request, client.LocalEndPoint, CoapCode.Content, "same session");
        h.Network.DeliverAll();
        (await response.Done()).GetPayloadString().Should().Be("same session");
    }

    /// <summary>
    /// A server's separate response (a CON of its own, as a CON notification is) and the client's ACK of it, arriving
    /// in the session the test names and from the client's address or elsewhere: an ACK the policy matches ends the
    /// retransmission; one it does not is ignored (RFC 7252 section 4.2), and the response goes out again.
    /// </summary>
    [Theory]
    [InlineData(CoapSessionMatching.Strict, "one", Elsewhere, true)]
    [InlineData(CoapSessionMatching.Strict, "two", ClientAddress, false)]
    [InlineData(CoapSessionMatching.Relaxed, "two", ClientAddress, true)]
    [InlineData(CoapSessionMatching.Relaxed, "other", ClientAddress, false)]
    [InlineData(CoapSessionMatching.Relaxed, "two", Elsewhere, false)]
    [InlineData(CoapSessionMatching.Principal, "two", Elsewhere, true)]
    [InlineData(CoapSessionMatching.Principal, "other", Elsewhere, false)]
    public async Task TheAckOfASeparateResponseMatchesInTheSessionsThePolicyAllows(CoapSessionMatching matching, string session, string from, bool matches)
    {
        using MessagingHarness h = new();
        SessionTransport secure = new(h.Network.CreateTransport(ServerAddress)) { Incoming = SessionOne };
        CoapEndpointOptions options = h.Options();
        options.SessionMatching = matching;
        CoapExchange? accepted = null;
        await using CoapEndpoint server = new(secure, options);
        server.RequestHandler = exchange =>
        {
            exchange.Accept();
            accepted = exchange;
        };
        server.Start();
        TestPeer client = h.Peer(ClientAddress);
        client.Send(Get(messageId: 5), server.LocalEndPoint);
        h.Network.DeliverAll();
        accepted!.Respond(accepted.Request.CreateResponse(CoapCode.Content));
        h.Network.DeliverAll();
        CoapMessage separate = client.Received.Select(r => r.Parsed).Should().ContainSingle(m => m.Type == CoapMessageType.Confirmable).Which;

        secure.Incoming = session switch { "one" => SessionOne, "two" => SessionTwo, _ => OtherIdentity };
        (from == ClientAddress ? client : h.Peer(from)).SendAck(separate.MessageId, server.LocalEndPoint);
        h.Advance(TimeSpan.FromSeconds(10));

        int sent = h.AllBetween(server.LocalEndPoint, client.EndPoint).Count(d => d.Message?.Type == CoapMessageType.Confirmable);
        if (matches)
        {
            sent.Should().Be(1, $"{matching} matches the ACK, which ends the retransmission");
        }
        else
        {
            sent.Should().BeGreaterThan(1, $"{matching} does not match the ACK, so the response is retransmitted (RFC 7252 section 4.2)");
        }
    }

    private static CoapMessage Get(ushort messageId = 0) => new()
    {
        Type = CoapMessageType.Confirmable,
        Code = CoapCode.Get,
        MessageId = messageId,
        Token = new byte[] { 1, 2, 3, 4 },
    };

    /// <summary>A "coaps" transport over an in-memory one that tags every datagram it receives with a session the test chooses, and records the session of every send.</summary>
    private sealed class SessionTransport(InMemoryTransport inner) : IDatagramTransport, IDatagramReceiver
    {
        private IDatagramReceiver? _receiver;

        public CoapSecurityContext? Incoming { get; set; }

        public List<CoapSecurityContext?> SentIn { get; } = [];

        public IPEndPoint LocalEndPoint => inner.LocalEndPoint;

        public string Scheme => "coaps";

        public void Start(IDatagramReceiver receiver)
        {
            _receiver = receiver;
            inner.Start(this);
        }

        public void OnDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote) => _receiver!.OnDatagram(datagram, remote, Incoming);

        public void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote) => throw new InvalidOperationException("A secure transport is always told the session.");

        public void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote, CoapSecurityContext? securityContext)
        {
            SentIn.Add(securityContext);
            inner.Send(datagram, remote);
        }

        public ValueTask SendAsync(ReadOnlyMemory<byte> datagram, IPEndPoint remote, CancellationToken cancellationToken = default)
            => throw new InvalidOperationException("A secure transport is always told the session.");

        public void Dispose() => inner.Dispose();

        public ValueTask DisposeAsync() => inner.DisposeAsync();
    }
}
