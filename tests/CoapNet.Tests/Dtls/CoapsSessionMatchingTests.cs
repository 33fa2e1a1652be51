using System.Net;
using CoapNet.Channels;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Serialization;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// The client's coaps path over a stand-in secure transport that hands out sessions and delivers datagrams in
/// whichever session and from whichever address the test says: by default a response is matched only in the session
/// its request went out in (RFC 7252 section 9.1.2), even from the same address with the same Message ID and token,
/// and wherever a Connection ID moved that session (RFC 9146); <see cref="CoapSessionMatching.Relaxed"/> and
/// <see cref="CoapSessionMatching.Principal"/> widen that to the same identity, at the same address or anywhere.
/// </summary>
public sealed class CoapsSessionMatchingTests
{
    private static readonly IPEndPoint Server = new(IPAddress.Loopback, 5684);
    private static readonly IPEndPoint Elsewhere = new(IPAddress.Parse("127.0.0.2"), 40001);

    [Fact]
    public async Task AResponseFromTheSameAddressInAnotherSessionIsNotMatched()
    {
        StandInSecureTransport transport = new();
        await using CoapClient client = new(transport);
        Task<CoapResponse> pending = client.GetAsync(new Uri("coaps://127.0.0.1/x"));
        await Infrastructure.Wait.UntilAsync(() => transport.Sent.Count == 1);
        (byte[] bytes, CoapSecurityContext? session) = transport.Sent[0];
        session.Should().BeSameAs(transport.Session, "the request goes out in the session ConnectAsync made");
        CoapMessageSerializer.Udp.TryDeserialize(bytes, out CoapMessage? request, out _).Should().BeTrue();
        CoapMessage response = request!.CreateResponse(CoapCode.Content);
        response.Type = CoapMessageType.Acknowledgement;
        response.MessageId = request.MessageId;
        response.Payload = "answer"u8.ToArray();
        byte[] answer = CoapMessageSerializer.Udp.Serialize(response);

        transport.Deliver(answer, Server, new CoapSecurityContext("DTLS 1.2", CoapPeerIdentity.FromPreSharedKey("client-1"u8)));

        pending.IsCompleted.Should().BeFalse("the same bytes in another session answer nothing");

        transport.Deliver(answer, Server, transport.Session);

        (await pending).GetPayloadString().Should().Be("answer");
    }

    [Fact]
    public async Task RequestsToOneServerShareItsSession()
    {
        StandInSecureTransport transport = new();
        await using CoapClient client = new(transport);

        _ = client.GetAsync(new Uri("coaps://127.0.0.1/a"));
        _ = client.GetAsync(new Uri("coaps://127.0.0.1/b"));
        await Infrastructure.Wait.UntilAsync(() => transport.Sent.Count == 2);

        transport.Connects.Should().Be(2, "each request asks for the session");
        transport.Sent.Should().OnlyContain(s => ReferenceEquals(s.Session, transport.Session));
    }

    /// <summary>
    /// An answer in the session <paramref name="identity"/> names (null: the request's own session; otherwise a new one
    /// with that PSK identity), from the server's address or from elsewhere, piggybacked on the ACK or as a separate CON
    /// response: it completes the call when the policy matches it, and otherwise leaves the call waiting for the answer
    /// in the request's session (a separate response is refused with RST in the session it came in).
    /// </summary>
    [Theory]
    [InlineData(CoapSessionMatching.Strict, null, true, true, true)]
    [InlineData(CoapSessionMatching.Strict, null, true, false, true)]
    [InlineData(CoapSessionMatching.Strict, "client-1", false, true, false)]
    [InlineData(CoapSessionMatching.Strict, "client-1", false, false, false)]
    [InlineData(CoapSessionMatching.Relaxed, "client-1", false, true, true)]
    [InlineData(CoapSessionMatching.Relaxed, "client-1", false, false, true)]
    [InlineData(CoapSessionMatching.Relaxed, "client-2", false, true, false)]
    [InlineData(CoapSessionMatching.Relaxed, "client-2", false, false, false)]
    [InlineData(CoapSessionMatching.Relaxed, "client-1", true, true, false)]
    [InlineData(CoapSessionMatching.Relaxed, "client-1", true, false, false)]
    [InlineData(CoapSessionMatching.Principal, "client-1", true, true, true)]
    [InlineData(CoapSessionMatching.Principal, "client-1", true, false, true)]
    [InlineData(CoapSessionMatching.Principal, "client-2", true, true, false)]
    [InlineData(CoapSessionMatching.Principal, "client-2", false, false, false)]
    public async Task AnAnswerMatchesInTheSessionsThePolicyAllows(CoapSessionMatching matching, string? identity, bool fromElsewhere, bool piggybacked, bool matches)
    {
        StandInSecureTransport transport = new();
        await using CoapClient client = Client(transport, matching);
        Task<CoapResponse> pending = client.GetAsync(new Uri("coaps://127.0.0.1/x"));
        CoapMessage request = await SentRequestAsync(transport);
        CoapSecurityContext session = identity is null ? transport.Session : NewSession(identity);
        if (!piggybacked)
        {
            transport.Deliver(Serialize(new CoapMessage { Type = CoapMessageType.Acknowledgement, Code = CoapCode.Empty, MessageId = request.MessageId }), Server, transport.Session);
        }

        byte[] answer = Answer(request, piggybacked, "answer");
        transport.Deliver(answer, fromElsewhere ? Elsewhere : Server, session);

        if (matches)
        {
            (await pending.WaitAsync(Wait.DefaultBound)).GetPayloadString().Should().Be("answer");
            if (!piggybacked)
            {
                Reply(transport).Should().Be((CoapMessageType.Acknowledgement, session), "a separate response is acknowledged in the session it came in");
            }

            return;
        }

        pending.IsCompleted.Should().BeFalse($"{matching} does not match an answer in that session");
        if (!piggybacked)
        {
            Reply(transport).Should().Be((CoapMessageType.Reset, session), "a CON response that matches nothing is refused with RST (RFC 7252 section 5.3.2)");
        }

        transport.Deliver(Answer(request, piggybacked, "own"), Server, transport.Session);
        (await pending.WaitAsync(Wait.DefaultBound)).GetPayloadString().Should().Be("own", "the call still waits for the answer in its session");
    }

    [Theory]
    [InlineData(CoapSessionMatching.Principal, "client-1", true)]
    [InlineData(CoapSessionMatching.Principal, "client-2", false)]
    [InlineData(CoapSessionMatching.Strict, "client-1", false)]
    public async Task AnObservationHearsNotificationsInTheSessionsThePolicyAllows(CoapSessionMatching matching, string identity, bool matches)
    {
        StandInSecureTransport transport = new();
        await using CoapClient client = Client(transport, matching);
        await using IAsyncEnumerator<CoapResponse> observation = client.ObserveAsync(new Uri("coaps://127.0.0.1/x")).GetAsyncEnumerator();
        ValueTask<bool> first = observation.MoveNextAsync();
        CoapMessage request = await SentRequestAsync(transport);
        transport.Deliver(Answer(request, piggybacked: true, "0", observe: 1), Server, transport.Session);
        (await first.AsTask().WaitAsync(Wait.DefaultBound)).Should().BeTrue();
        observation.Current.GetPayloadString().Should().Be("0");

        // A CON notification from another address, in another session.
        CoapSecurityContext session = NewSession(identity);
        Task<bool> next = observation.MoveNextAsync().AsTask();
        transport.Deliver(Answer(request, piggybacked: false, "1", observe: 2), Elsewhere, session);

        if (matches)
        {
            (await next.WaitAsync(Wait.DefaultBound)).Should().BeTrue();
            observation.Current.GetPayloadString().Should().Be("1");
            Reply(transport).Should().Be((CoapMessageType.Acknowledgement, session));
            return;
        }

        Reply(transport).Should().Be((CoapMessageType.Reset, session), "a notification nobody observes in that session is refused (RFC 7641 section 3.6)");
        next.IsCompleted.Should().BeFalse();
        transport.Deliver(Answer(request, piggybacked: false, "2", observe: 3), Server, transport.Session);
        (await next.WaitAsync(Wait.DefaultBound)).Should().BeTrue();
        observation.Current.GetPayloadString().Should().Be("2", "the observation goes on in its own session");
    }

    private static CoapClient Client(StandInSecureTransport transport, CoapSessionMatching matching)
        => new(transport, new CoapClientOptions { Endpoint = new CoapEndpointOptions { TimeProvider = new ManualTimeProvider(), SessionMatching = matching } });

    private static CoapSecurityContext NewSession(string identity) => new("DTLS 1.2", CoapPeerIdentity.FromPreSharedKey(System.Text.Encoding.UTF8.GetBytes(identity)));

    private static async Task<CoapMessage> SentRequestAsync(StandInSecureTransport transport)
    {
        await Wait.UntilAsync(() => transport.SentSoFar().Length == 1, "the request to go out");
        CoapMessageSerializer.Udp.TryDeserialize(transport.SentSoFar()[0].Bytes, out CoapMessage? request, out _).Should().BeTrue();
        return request!;
    }

    /// <summary>A 2.05 answer to <paramref name="request"/>: on its ACK, or a CON of the server's own.</summary>
    private static byte[] Answer(CoapMessage request, bool piggybacked, string payload, uint? observe = null)
    {
        CoapMessage response = request.CreateResponse(CoapCode.Content);
        response.Type = piggybacked ? CoapMessageType.Acknowledgement : CoapMessageType.Confirmable;
        response.MessageId = piggybacked ? request.MessageId : (ushort)(request.MessageId + 1000 + (observe ?? 0));
        response.Observe = observe;
        response.Payload = System.Text.Encoding.UTF8.GetBytes(payload);
        return Serialize(response);
    }

    private static byte[] Serialize(CoapMessage message) => CoapMessageSerializer.Udp.Serialize(message);

    /// <summary>The type and session of the last message the client sent: its ACK or RST of an answer.</summary>
    private static (CoapMessageType Type, CoapSecurityContext? Session) Reply(StandInSecureTransport transport)
    {
        (byte[] bytes, CoapSecurityContext? session) = transport.SentSoFar()[^1];
        CoapMessageSerializer.Udp.TryDeserialize(bytes, out CoapMessage? reply, out _).Should().BeTrue();
        return (reply!.Type, session);
    }
}
