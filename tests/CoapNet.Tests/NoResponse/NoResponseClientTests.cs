using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.NoResponse;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Messaging;
using static CoapNet.Tests.Messaging.MessagingHarness;

namespace CoapNet.Tests.NoResponse;

/// <summary>
/// RFC 7967 on a client, in virtual time against a raw server: a request declining every class completes
/// once delivered (a NON sent, a CON acknowledged) with a 0.00 result, without the clock moving; one that
/// declines some classes waits as usual and its timeout names them; a server that answers anyway is heard.
/// </summary>
public class NoResponseClientTests
{
    [Fact]
    public async Task ANonRequestThatDeclinesEverythingCompletesOnceSent()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);

        Task<CoapMessage> call = client.SendRequestAsync(Declining(CoapNoResponse.All, CoapMessageType.NonConfirmable), server.EndPoint);
        h.Network.DeliverAll();

        call.IsCompletedSuccessfully.Should().BeTrue("no response of any class will come, so nothing is awaited");
        CoapMessage result = await call;
        result.Code.Should().Be(CoapCode.Empty);
        CoapMessage sent = server.Received.Should().ContainSingle().Which.Parsed;
        sent.Type.Should().Be(CoapMessageType.NonConfirmable);
        sent.NoResponse.Should().Be(CoapNoResponse.All);
        result.Token.ToArray().Should().Equal(sent.Token.ToArray());
        client.Exchanges.OutstandingCount.Should().Be(0);
    }

    [Fact]
    public async Task AConfirmableRequestThatDeclinesEverythingCompletesOnItsEmptyAcknowledgement()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);

        Task<CoapMessage> call = client.SendRequestAsync(Declining(CoapNoResponse.All), server.EndPoint);
        h.Network.DeliverAll();
        call.IsCompleted.Should().BeFalse("a CON is delivered when it is acknowledged");

        server.SendAck(server.Last.Parsed.MessageId, client.LocalEndPoint);
        h.Network.DeliverAll();

        call.IsCompletedSuccessfully.Should().BeTrue();
        (await call).Code.Should().Be(CoapCode.Empty);
        h.Advance(TimeSpan.FromMinutes(5));
        server.Received.Should().ContainSingle("an acknowledged CON is not retransmitted");
    }

    [Fact]
    public async Task AResponseInTheAcknowledgementIsStillReturnedWhenTheServerIgnoresTheOption()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);

        Task<CoapMessage> call = client.SendRequestAsync(Declining(CoapNoResponse.All), server.EndPoint);
        h.Network.DeliverAll();
        server.SendPiggybacked(server.Last.Parsed, client.LocalEndPoint, CoapCode.Changed, "anyway");
        h.Network.DeliverAll();

        call.IsCompletedSuccessfully.Should().BeTrue();
        CoapMessage result = await call;
        result.Code.Should().Be(CoapCode.Changed);
        result.GetPayloadString().Should().Be("anyway");
    }

    [Fact]
    public void ARequestThatDeclinesSomeClassesWaitsAndItsTimeoutNamesThem()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress, h.Options(responseTimeout: TimeSpan.FromSeconds(30)));

        Task<CoapMessage> call = client.SendRequestAsync(Declining(CoapNoResponse.Success | CoapNoResponse.ServerError, CoapMessageType.NonConfirmable), server.EndPoint);
        h.Network.DeliverAll();
        call.IsCompleted.Should().BeFalse("a 4.xx may still come");

        h.Advance(TimeSpan.FromSeconds(31));

        call.IsFaulted.Should().BeTrue();
        call.Exception!.InnerException.Should().BeOfType<CoapTimeoutException>()
            .Which.Message.Should().Contain("No-Response").And.Contain("2.xx and 5.xx").And.Contain("RFC 7967");
    }

    [Fact]
    public async Task ARequestThatDeclinesSomeClassesGetsTheErrorItDidNotDecline()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);

        Task<CoapMessage> call = client.SendRequestAsync(Declining(CoapNoResponse.Success, CoapMessageType.NonConfirmable), server.EndPoint);
        h.Network.DeliverAll();
        server.SendSeparate(server.Last.Parsed.Token, 0x7001, client.LocalEndPoint, CoapCode.NotFound, type: CoapMessageType.NonConfirmable);
        h.Network.DeliverAll();

        call.IsCompletedSuccessfully.Should().BeTrue();
        (await call).Code.Should().Be(CoapCode.NotFound);
    }

    [Fact]
    public async Task TheSynchronousAndAsynchronousClientCallsBothReturnASuppressedResponse()
    {
        using MessagingHarness h = new(deliverImmediately: true);
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Echo());
        using CoapClient client = new(h.Network.CreateTransport(ClientAddress), new CoapClientOptions { Endpoint = h.Options() });

        CoapResponse sync = client.Send(Declining(CoapNoResponse.All), server.LocalEndPoint);
        CoapResponse async = await client.SendAsync(Declining(CoapNoResponse.All), server.LocalEndPoint);

        foreach (CoapResponse response in new[] { sync, async })
        {
            response.IsSuppressed.Should().BeTrue();
            response.IsSuccess.Should().BeFalse("whether the request succeeded is not known");
            response.Payload.IsEmpty.Should().BeTrue();
            response.RemoteEndPoint.Should().Be(server.LocalEndPoint);
            response.EnsureSuccess().Should().BeSameAs(response, "no error was reported");
        }

        // Against our own server (which suppresses the 2.05 and sends only the empty ACK), the option absent gives the 2.05.
        CoapResponse answered = await client.SendAsync(Get("x"), server.LocalEndPoint);
        answered.IsSuppressed.Should().BeFalse();
        answered.Code.Should().Be(CoapCode.Content);
    }

    private static CoapMessage Declining(CoapNoResponse classes, CoapMessageType type = CoapMessageType.Confirmable)
    {
        CoapMessage request = Get("sensor", type);
        request.Code = CoapCode.Put;
        request.NoResponse = classes;
        return request;
    }
}
