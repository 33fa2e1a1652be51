using CoapNet.Messages;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Server;

/// <summary>
/// A request's admission ends before its answer goes out (issue 25 item 3): a client that keeps exactly
/// MaxPendingRequests in flight, sending the next request the moment an answer arrives, is never shed. Virtual time
/// on a network that delivers at once, on the sender's thread, so the next request reaches the server inside the send
/// of the answer before it: the narrowest window a fast client on another core can hit.
/// </summary>
public sealed class AdmissionReleaseTests
{
    [Theory]
    [InlineData(CoapMessageType.Confirmable)]
    [InlineData(CoapMessageType.NonConfirmable)]
    public void ARequestSentAsTheAnswerBeforeItArrivesIsAdmittedAtTheLimit(CoapMessageType type)
    {
        using VirtualTimeServer fixture = new(server => server.MapGet("/hello", _ => CoapResponse.Content("hello")), maxPendingRequests: 1, deliversImmediately: true);
        TestPeer peer = fixture.Peer;

        const int Requests = 5;
        ushort next = 1;
        peer.OnReceived = (self, received) =>
        {
            if (received.Parsed.Code != CoapCode.Empty && next < Requests)
            {
                self.Send(Get(type, ++next), VirtualTimeServer.Address);
            }
        };
        fixture.Send(Get(type, next));
        fixture.Settle();

        peer.Received.Select(r => r.Parsed.Code).Should().Equal(Enumerable.Repeat(CoapCode.Content, Requests), "one request in flight at a time never exceeds MaxPendingRequests = 1");
        fixture.Server.PendingRequests.Should().Be(0);
    }

    private static CoapMessage Get(CoapMessageType type, ushort messageId)
    {
        CoapMessage request = new() { Type = type, Code = CoapCode.Get, MessageId = messageId, Token = new byte[] { (byte)messageId } };
        request.UriPath = "/hello";
        return request;
    }
}
