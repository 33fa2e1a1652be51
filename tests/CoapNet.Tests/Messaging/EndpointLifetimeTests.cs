using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;
using static CoapNet.Tests.Messaging.MessagingHarness;

namespace CoapNet.Tests.Messaging;

/// <summary>Starting, disposing, and the endpoint's own discipline around sends.</summary>
public class EndpointLifetimeTests
{
    [Fact]
    public async Task DisposingFailsPendingAndQueuedRequests()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<CoapMessage> outstanding = client.SendRequestAsync(Get("1"), server.EndPoint);
        Task<CoapMessage> queued = client.SendRequestAsync(Get("2"), server.EndPoint);

        await client.DisposeAsync();

        Func<Task> first = () => outstanding.Done();
        Func<Task> second = () => queued.Done();
        await first.Should().ThrowAsync<ObjectDisposedException>();
        await second.Should().ThrowAsync<ObjectDisposedException>();
    }

    [Fact]
    public async Task DisposingFailsAPendingPing()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        Task<TimeSpan> ping = client.PingAsync(server.EndPoint);

        client.Dispose();

        ping.IsCompleted.Should().BeTrue("nothing could ever complete the ping once the endpoint is gone");
        Func<Task> outcome = () => ping.Done();
        await outcome.Should().ThrowAsync<ObjectDisposedException>();
    }

    [Fact]
    public void DisposingStopsEveryTimerAndEverySend()
    {
        using MessagingHarness h = new();
        CoapExchange? pending = null;
        TestPeer peer = h.Peer(ServerAddress);
        CoapEndpoint endpoint = h.Endpoint(ClientAddress, handler: exchange => (pending = exchange).Accept());
        _ = endpoint.SendRequestAsync(Get(), peer.EndPoint);
        _ = endpoint.PingAsync(peer.EndPoint);
        peer.Send(RawRequest(1, [1]), endpoint.LocalEndPoint);
        h.Network.DeliverAll();
        pending!.Respond(new CoapMessage { Code = CoapCode.Content });
        int sent = h.Network.Sent.Count;

        endpoint.Dispose();
        h.Advance(TimeSpan.FromMinutes(10));

        h.Time.ActiveTimerCount.Should().Be(0);
        h.Network.Sent.Should().HaveCount(sent);
    }

    [Fact]
    public async Task AfterDisposingNewRequestsAreRefused()
    {
        using MessagingHarness h = new();
        CoapEndpoint client = h.Endpoint(ClientAddress);
        await client.DisposeAsync();

        Func<Task> request = () => client.SendRequestAsync(Get(), At(ServerAddress));
        Func<Task> ping = () => client.PingAsync(At(ServerAddress));
        Action start = client.Start;

        await request.Should().ThrowAsync<ObjectDisposedException>();
        await ping.Should().ThrowAsync<ObjectDisposedException>();
        start.Should().Throw<ObjectDisposedException>();
    }

    [Fact]
    public void DisposingClosesTheTransportOnce()
    {
        InMemoryNetwork network = new();
        InMemoryTransport transport = network.CreateTransport(ClientAddress);
        CoapEndpoint endpoint = new(transport);

        endpoint.Dispose();
        endpoint.Dispose();

        transport.IsDisposed.Should().BeTrue();
    }

    [Fact]
    public void StartingTwiceIsRefused()
    {
        using MessagingHarness h = new();
        CoapEndpoint endpoint = h.Endpoint(ClientAddress);

        Action again = endpoint.Start;

        again.Should().Throw<InvalidOperationException>();
    }

    [Fact]
    public void NothingIsReceivedBeforeStart()
    {
        using MessagingHarness h = new();
        using CoapEndpoint server = new(h.Network.CreateTransport(ServerAddress), h.Options()) { RequestHandler = Echo() };
        TestPeer client = h.Peer(ClientAddress);

        client.SendBytes(EmptyMessageBytes.EmptyConfirmable(1), server.LocalEndPoint);
        h.Network.DeliverAll();

        client.Received.Should().BeEmpty();
    }

    [Fact]
    public async Task TheEndpointNeverHoldsItsLockWhileSending()
    {
        // A transport may deliver synchronously into another endpoint that sends back (this network in
        // immediate mode does): a send under the endpoint's lock would then risk a lock-order deadlock
        // between two endpoints, and a slow send would stall the whole endpoint.
        using MessagingHarness h = new();
        CoapExchange? accepted = null;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: exchange =>
        {
            if (exchange.Request.UriPath == "/separate")
            {
                (accepted = exchange).Accept();
            }
            else
            {
                Echo()(exchange);
            }
        });
        TestPeer rawClient = h.Peer("10.0.0.3");
        CoapEndpoint client = h.Endpoint(ClientAddress);
        LockProbe serverProbe = LockProbe.Attach(server, h.TransportOf(server));
        LockProbe clientProbe = LockProbe.Attach(client, h.TransportOf(client));

        // Request, retransmission, piggybacked response, empty ACK, separate response and its ACK.
        h.Network.Link(client.LocalEndPoint, server.LocalEndPoint).DropNext();
        Task<CoapMessage> piggybacked = client.SendRequestAsync(Get("echo"), server.LocalEndPoint);
        Task<CoapMessage> separate = client.SendRequestAsync(Get("separate"), server.LocalEndPoint);
        h.Advance(TimeSpan.FromSeconds(5));
        accepted!.Respond(new CoapMessage { Code = CoapCode.Content });
        h.Network.DeliverAll();
        await piggybacked.Done();
        await separate.Done();

        // Ping and its RST; a malformed CON and its RST; a duplicate request and the replayed reply.
        _ = client.PingAsync(server.LocalEndPoint);
        rawClient.SendBytes([0x41, 0x00, 0x00, 0x01, 0xAA], server.LocalEndPoint);
        byte[] request = rawClient.Send(RawRequest(0x0200, [1], path: "echo"), server.LocalEndPoint);
        rawClient.SendBytes(request, server.LocalEndPoint);

        // An unknown CON response (reset), a separate response and its duplicate (ACKed twice).
        rawClient.SendSeparate(new byte[] { 9 }, 0x0300, client.LocalEndPoint, CoapCode.Content);
        Task<CoapMessage> third = client.SendRequestAsync(Get("third"), rawClient.EndPoint);
        h.Network.DeliverAll();
        CoapMessage thirdSent = rawClient.Received.Single(r => r.Message?.Code == CoapCode.Get).Parsed;
        byte[] response = rawClient.SendSeparate(thirdSent.Token, 0x0301, client.LocalEndPoint, CoapCode.Content);
        rawClient.SendBytes(response, client.LocalEndPoint);
        h.Network.DeliverAll();
        await third.Done();

        serverProbe.SendsUnderLock.Should().BeEmpty();
        clientProbe.SendsUnderLock.Should().BeEmpty();
        serverProbe.Sends.Should().Be(7, "piggybacked ACK, empty ACK, separate response, RST to the ping, RST to the malformed CON, ACK and its replay");
        clientProbe.Sends.Should().Be(9, "request and its retransmission, second request, ACK of its response, ping, RST of the unknown response, third request, ACK of its response and the replay");
    }
}
