using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;
using static CoapNet.Tests.Messaging.MessagingHarness;

namespace CoapNet.Tests.Messaging;

/// <summary>
/// The blocking entry points: they complete, and they never need the caller's synchronization
/// context, so a single-threaded UI context whose thread is blocked in the call cannot deadlock them.
/// </summary>
public class SynchronousApiTests
{
    // Only a hung call reaches this; a passing test never waits for it.
    private static readonly TimeSpan HangBound = TimeSpan.FromSeconds(10);

    [Fact]
    public void SendRequestReturnsThePiggybackedResponseOverAnImmediateNetwork()
    {
        // Immediate delivery: the whole exchange happens inside the blocking call's own send.
        using MessagingHarness h = new(deliverImmediately: true);
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Echo());
        CoapEndpoint client = h.Endpoint(ClientAddress);
        BlockedThreadSynchronizationContext context = new();

        BlockingCall<CoapMessage> call = BlockingCall<CoapMessage>.Start(() => client.SendRequest(Get("sync"), server.LocalEndPoint), context);

        call.Wait(HangBound).Should().BeTrue();
        call.Result().GetPayloadString().Should().Be("/sync");
        context.PostCount.Should().Be(0);
    }

    [Fact]
    public void SendRequestUnderABlockedSingleThreadedContextCompletesWithASeparateResponseAfterALoss()
    {
        using MessagingHarness h = new();
        CoapExchange? pending = null;
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: exchange => (pending = exchange).Accept());
        CoapEndpoint client = h.Endpoint(ClientAddress);
        BlockedThreadSynchronizationContext context = new();

        BlockingCall<CoapMessage> call = BlockingCall<CoapMessage>.Start(() => client.SendRequest(Get("blocking"), server.LocalEndPoint), context);
        h.Network.WaitForSent(1, HangBound).Should().BeTrue();
        h.Network.DiscardInFlight();
        h.Advance(TimeSpan.FromSeconds(3));
        pending.Should().NotBeNull("the retransmission reached the server");
        call.IsCompleted.Should().BeFalse();

        CoapMessage response = new() { Code = CoapCode.Content };
        response.SetPayload("unblocked");
        pending!.Respond(response);
        h.Network.DeliverAll();

        call.Wait(HangBound).Should().BeTrue("the call must not wait for its blocked context");
        call.Result().GetPayloadString().Should().Be("unblocked");
        context.PostCount.Should().Be(0);
    }

    [Fact]
    public void SendRequestThrowsTheTimeoutOnTheCallingThread()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        BlockedThreadSynchronizationContext context = new();

        BlockingCall<CoapMessage> call = BlockingCall<CoapMessage>.Start(() => client.SendRequest(Get(), server.EndPoint), context);
        h.Network.WaitForSent(1, HangBound).Should().BeTrue();
        h.Advance(TimeSpan.FromSeconds(93));

        call.Wait(HangBound).Should().BeTrue();
        Func<CoapMessage> result = call.Result;
        result.Should().Throw<CoapTimeoutException>();
        server.Received.Should().HaveCount(5);
        context.PostCount.Should().Be(0);
    }

    [Fact]
    public void SendRequestThrowsTheResetOnTheCallingThread()
    {
        using MessagingHarness h = new(deliverImmediately: true);
        TestPeer server = h.Peer(ServerAddress);
        server.OnReceived = (peer, received) => peer.SendReset(received.Parsed.MessageId, received.From);
        CoapEndpoint client = h.Endpoint(ClientAddress);

        BlockingCall<CoapMessage> call = BlockingCall<CoapMessage>.Start(() => client.SendRequest(Get(), server.EndPoint));

        call.Wait(HangBound).Should().BeTrue();
        Func<CoapMessage> result = call.Result;
        result.Should().Throw<CoapResetException>();
    }

    [Fact]
    public void SendRequestThrowsWhenCanceled()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        using CancellationTokenSource cancel = new();

        BlockingCall<CoapMessage> call = BlockingCall<CoapMessage>.Start(() => client.SendRequest(Get(), server.EndPoint, cancel.Token), new BlockedThreadSynchronizationContext());
        h.Network.WaitForSent(1, HangBound).Should().BeTrue();
        cancel.Cancel();

        call.Wait(HangBound).Should().BeTrue();
        Func<CoapMessage> result = call.Result;
        result.Should().Throw<OperationCanceledException>();
    }

    [Fact]
    public void PingBlocksUntilTheResetArrives()
    {
        using MessagingHarness h = new();
        CoapEndpoint server = h.Endpoint(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);
        BlockedThreadSynchronizationContext context = new();

        BlockingCall<TimeSpan> call = BlockingCall<TimeSpan>.Start(() => client.Ping(server.LocalEndPoint), context);
        h.Network.WaitForSent(1, HangBound).Should().BeTrue();
        h.Time.Advance(TimeSpan.FromSeconds(1));
        h.Network.DeliverAll();

        call.Wait(HangBound).Should().BeTrue();
        call.Result().Should().Be(TimeSpan.FromSeconds(1));
        context.PostCount.Should().Be(0);
    }

    [Fact]
    public void ClientSendCompletesOverTheInMemoryNetwork()
    {
        using MessagingHarness h = new(deliverImmediately: true);
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Echo());
        using CoapClient client = new(h.Network.CreateTransport(ClientAddress), new CoapClientOptions { Endpoint = h.Options() });

        CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get };
        request.UriPath = "via-client";
        BlockingCall<CoapResponse> call = BlockingCall<CoapResponse>.Start(() => client.Send(request, server.LocalEndPoint));

        call.Wait(HangBound).Should().BeTrue();
        CoapResponse response = call.Result();
        response.Code.Should().Be(CoapCode.Content);
        response.GetPayloadString().Should().Be("/via-client");
        response.RemoteEndPoint.Should().Be(server.LocalEndPoint);
    }

    [Fact]
    public void ClientGetUnderABlockedSingleThreadedContextCompletes()
    {
        using MessagingHarness h = new();
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Echo());
        CoapClient client = new(h.Network.CreateTransport(ClientAddress), new CoapClientOptions { Endpoint = h.Options() });
        try
        {
            BlockedThreadSynchronizationContext context = new();
            BlockingCall<CoapResponse> call = BlockingCall<CoapResponse>.Start(() => client.Get(new Uri("coap://10.0.0.2/sensors/temp")), context);
            h.Network.WaitForSent(1, HangBound).Should().BeTrue();
            h.Network.DeliverAll();

            call.Wait(HangBound).Should().BeTrue();
            call.Result().GetPayloadString().Should().Be("/sensors/temp");
            context.PostCount.Should().Be(0);
        }
        finally
        {
            client.Dispose();
        }
    }

    [Fact]
    public async Task ClientSendAsyncCompletesOverTheInMemoryNetwork()
    {
        using MessagingHarness h = new();
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: Echo());
        await using CoapClient client = new(h.Network.CreateTransport(ClientAddress), new CoapClientOptions { Endpoint = h.Options() });

        Task<CoapResponse> pending = client.GetAsync(new Uri("coap://10.0.0.2:5683/a"));
        h.Network.DeliverAll();

        // The client's async wrapper resumes on the thread pool after the endpoint's completion.
        (await pending.WaitAsync(HangBound)).GetPayloadString().Should().Be("/a");
    }

    [Fact]
    public void PingReturnsOverAnImmediateNetwork()
    {
        using MessagingHarness h = new(deliverImmediately: true);
        CoapEndpoint server = h.Endpoint(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);

        BlockingCall<TimeSpan> call = BlockingCall<TimeSpan>.Start(() => client.Ping(server.LocalEndPoint));

        call.Wait(HangBound).Should().BeTrue();
        call.Result().Should().Be(TimeSpan.Zero);
    }
}
