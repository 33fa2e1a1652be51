using System.Net;
using CoapNet.Messages;
using CoapNet.Messaging;
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
        ManualTimeProvider time = new();
        ManualTaskScheduler scheduler = new();
        InMemoryNetwork network = new(time) { DeliversImmediately = true };
        IPEndPoint address = InMemoryNetwork.EndPoint("10.0.0.2");
        using CoapServer server = new(new CoapServerOptions
        {
            DatagramTransports = [network.CreateTransport(address)],
            Scheduler = scheduler,
            MaxPendingRequests = 1,
            Endpoint = new CoapEndpointOptions { TimeProvider = time },
        });
        server.MapGet("/hello", _ => CoapResponse.Content("hello"));
        server.Start();
        using TestPeer peer = new(network, "10.0.0.1");

        const int Requests = 5;
        ushort next = 1;
        peer.OnReceived = (self, received) =>
        {
            if (received.Parsed.Code != CoapCode.Empty && next < Requests)
            {
                self.Send(Get(type, ++next), address);
            }
        };
        peer.Send(Get(type, next), address);
        scheduler.Settle(network);

        peer.Received.Select(r => r.Parsed.Code).Should().Equal(Enumerable.Repeat(CoapCode.Content, Requests), "one request in flight at a time never exceeds MaxPendingRequests = 1");
        server.PendingRequests.Should().Be(0);
    }

    private static CoapMessage Get(CoapMessageType type, ushort messageId)
    {
        CoapMessage request = new() { Type = type, Code = CoapCode.Get, MessageId = messageId, Token = new byte[] { (byte)messageId } };
        request.UriPath = "/hello";
        return request;
    }
}
