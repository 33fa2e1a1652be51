using System.Net;
using CoapNet.Channels;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// The client's coaps path over a stand-in secure transport that hands out sessions and delivers datagrams in
/// whichever session the test says: a response is matched only in the session its request went out in
/// (RFC 7252 section 9.1.1), even from the same address with the same Message ID and token.
/// </summary>
public sealed class CoapsSessionMatchingTests
{
    private static readonly IPEndPoint Server = new(IPAddress.Loopback, 5684);

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
}
