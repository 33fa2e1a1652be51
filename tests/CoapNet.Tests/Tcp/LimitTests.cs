using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Tcp;

/// <summary>The limits of CoapConnectionOptions and the peer's Max-Message-Size (RFC 8323 section 5.3.1).</summary>
public sealed class LimitTests
{
    [Fact]
    public async Task ARequestAboveThePeersMaxMessageSizeFailsWithAClearErrorAndIsNotSent()
    {
        await using TcpHarness client = TcpHarness.Client();
        CoapMessage held = TcpHarness.Get("held", 1);
        held.Payload = new byte[1500];
        Task<CoapMessage> beforeCsm = client.Endpoint.SendRequestAsync(held, TcpHarness.ServerPeer);
        RawStreamPeer server = await client.AcceptAndHandshakeAsync(maxMessageSize: 1200);

        // Held until the CSM said 1200, then refused.
        Func<Task> awaiting = () => beforeCsm;
        (await awaiting.Should().ThrowAsync<ArgumentException>()).Which.Message.Should().Contain("accepts at most 1200").And.Contain("Max-Message-Size");

        // Now the limit is known: refused at once, on the caller's thread.
        CoapMessage large = TcpHarness.Get("large", 2);
        large.Payload = new byte[1500];
        Func<Task> sending = () => client.Endpoint.SendRequestAsync(large, TcpHarness.ServerPeer);
        (await sending.Should().ThrowAsync<ArgumentException>()).Which.Message.Should().Contain("accepts at most 1200");

        // A message that fits still goes, and is the first request the server sees.
        Task<CoapMessage> small = client.Endpoint.SendRequestAsync(TcpHarness.Get("small", 3), TcpHarness.ServerPeer);
        CoapMessage request = await server.ReceiveAsync();
        request.UriPath.Should().Be("/small");
        await server.SendAsync(new CoapMessage { Code = CoapCode.Content, Token = request.Token });
        (await small).Code.Should().Be(CoapCode.Content);
    }

    [Fact]
    public async Task ABodyAboveThePeersMaxMessageSizeIsServedInBlocks()
    {
        CoapMessage response = await AnswerWith1200BytesAsync(CoapCode.Content);

        response.Code.Should().Be(CoapCode.Content);
        response.Block2.Should().Be(new CoapBlock(0, true, 6), "RFC 7959 over RFC 8323: a body past the peer's Max-Message-Size goes in blocks");
        response.Size2.Should().Be(1200u);
        response.Payload.Length.Should().Be(1024);
    }

    [Fact]
    public async Task AnErrorResponseAboveThePeersMaxMessageSizeIsRefusedAndAnsweredWith500()
    {
        CoapMessage response = await AnswerWith1200BytesAsync(CoapCode.BadRequest);

        response.Code.Should().Be(CoapCode.InternalServerError, "an error body is never split into blocks, and never truncated");
        response.Token.ToArray().Should().Equal(1);
    }

    [Fact]
    public async Task AtMaxConnectionsTheIdlestConnectionIsReleasedForANewOne()
    {
        await using TcpHarness server = TcpHarness.Server(new CoapConnectionOptions { MaxConnections = 2 });
        RawStreamPeer idlest = await RoundTripAsync(server, await server.ConnectAndHandshakeAsync(clientPort: 40001));
        RawStreamPeer active = await RoundTripAsync(server, await server.ConnectAndHandshakeAsync(clientPort: 40002));
        server.Time.Advance(TimeSpan.FromSeconds(10));
        await active.SendAsync(TcpHarness.Get("two", 2));
        (await active.ReceiveAsync()).GetPayloadString().Should().Be("/two");

        RawStreamPeer newcomer = await server.ConnectAndHandshakeAsync(clientPort: 40003);

        // RFC 8323 section 5.5: the idlest, established, is told with Release before it is closed.
        (await idlest.ReceiveUntilClosedAsync()).Should().ContainSingle().Which.Code.Should().Be(CoapCode.Release);
        await newcomer.SendAsync(TcpHarness.Get("three", 3));
        (await newcomer.ReceiveAsync()).GetPayloadString().Should().Be("/three");
        await active.SendAsync(TcpHarness.Get("two", 4));
        (await active.ReceiveAsync()).GetPayloadString().Should().Be("/two");
        server.Log.Warnings.Should().ContainSingle().Which.Should().Contain("Released the connection from").And.Contain("40001");
    }

    [Fact]
    public async Task AtMaxConnectionsANewConnectionIsClosedAtOnceWhileEveryConnectionCarriesARequest()
    {
        List<CoapExchange> held = [];
        await using TcpHarness server = TcpHarness.Server(new CoapConnectionOptions { MaxConnections = 2 }, exchange => { lock (held) { held.Add(exchange); } });
        RawStreamPeer first = await server.ConnectAndHandshakeAsync(clientPort: 40001);
        RawStreamPeer second = await server.ConnectAndHandshakeAsync(clientPort: 40002);
        await first.SendAsync(TcpHarness.Get("one", 1));
        await second.SendAsync(TcpHarness.Get("two", 2));
        Wait.Until(() => { lock (held) { return held.Count == 2; } }, "both requests reached the handler");

        RawStreamPeer third = server.Connect(clientPort: 40003);

        (await third.ReceiveUntilClosedAsync()).Should().BeEmpty("not even a CSM is spent on it");
        server.Log.Warnings.Should().ContainSingle().Which.Should().Contain("already holds 2 connections, none idle");
        lock (held)
        {
            held.ForEach(TcpHarness.Echo);
        }

        (await first.ReceiveAsync()).GetPayloadString().Should().Be("/one");
        (await second.ReceiveAsync()).GetPayloadString().Should().Be("/two");
    }

    [Fact]
    public async Task AnAddressAtItsBoundGivesUpItsOwnIdlestConnectionAndLeavesOtherAddressesAlone()
    {
        System.Net.IPAddress crowded = System.Net.IPAddress.Parse("192.0.2.7");
        await using TcpHarness server = TcpHarness.Server(new CoapConnectionOptions { MaxConnections = 10, MaxConnectionsPerAddress = 2 });
        RawStreamPeer other = await RoundTripAsync(server, await server.ConnectAndHandshakeAsync(clientPort: 40001));
        server.Time.Advance(TimeSpan.FromSeconds(1));
        RawStreamPeer own = await RoundTripAsync(server, await server.ConnectAndHandshakeAsync(clientPort: 40002, clientAddress: crowded));
        server.Time.Advance(TimeSpan.FromSeconds(1));
        RawStreamPeer ownNewer = await RoundTripAsync(server, await server.ConnectAndHandshakeAsync(clientPort: 40003, clientAddress: crowded));

        RawStreamPeer third = await server.ConnectAndHandshakeAsync(clientPort: 40004, clientAddress: crowded);

        // The idlest connection of all is 10.0.0.2's, but 192.0.2.7 is at its own bound: its own idlest goes.
        (await own.ReceiveUntilClosedAsync()).Should().ContainSingle().Which.Code.Should().Be(CoapCode.Release);
        foreach ((RawStreamPeer peer, byte token) in new[] { (other, (byte)1), (ownNewer, (byte)2), (third, (byte)3) })
        {
            await peer.SendAsync(TcpHarness.Get("x", token));
            (await peer.ReceiveAsync()).Token.ToArray().Should().Equal(token);
        }
    }

    /// <summary>A request and its response: the endpoint has taken the peer's CSM (and the time it came) before the clock moves.</summary>
    private static async Task<RawStreamPeer> RoundTripAsync(TcpHarness server, RawStreamPeer peer)
    {
        await peer.SendAsync(TcpHarness.Get("sync", 99));
        (await peer.ReceiveAsync()).GetPayloadString().Should().Be("/sync");
        return peer;
    }

    [Fact]
    public async Task AnIdleConnectionIsReleasedAndClosed()
    {
        await using TcpHarness server = TcpHarness.Server(new CoapConnectionOptions { IdleTimeout = TimeSpan.FromSeconds(60) });
        RawStreamPeer peer = await server.ConnectAndHandshakeAsync();
        await peer.SendAsync(TcpHarness.Get("a", 1));
        await peer.ReceiveAsync();

        server.Time.Advance(TimeSpan.FromSeconds(60));

        (await peer.ReceiveUntilClosedAsync()).Should().ContainSingle().Which.Code.Should().Be(CoapCode.Release);
    }

    [Fact]
    public async Task AConnectionWithARequestInFlightIsNotIdle()
    {
        TaskCompletionSource<CoapExchange> handled = new(TaskCreationOptions.RunContinuationsAsynchronously);
        await using TcpHarness server = TcpHarness.Server(new CoapConnectionOptions { IdleTimeout = TimeSpan.FromSeconds(60) }, exchange => handled.SetResult(exchange));
        RawStreamPeer peer = await server.ConnectAndHandshakeAsync();
        await peer.SendAsync(TcpHarness.Get("slow", 1));
        CoapExchange exchange = await handled.Task;

        server.Time.Advance(TimeSpan.FromSeconds(120));
        TcpHarness.Echo(exchange);
        (await peer.ReceiveAsync()).GetPayloadString().Should().Be("/slow");

        server.Time.Advance(TimeSpan.FromSeconds(60));
        (await peer.ReceiveUntilClosedAsync()).Should().ContainSingle().Which.Code.Should().Be(CoapCode.Release);
    }

    [Fact]
    public async Task RequestsBeyondMaxRequestsInFlightAreAnsweredWith503()
    {
        List<CoapExchange> held = [];
        await using TcpHarness server = TcpHarness.Server(new CoapConnectionOptions { MaxRequestsInFlight = 2 }, exchange => { lock (held) { held.Add(exchange); } });
        RawStreamPeer peer = await server.ConnectAndHandshakeAsync();

        for (byte token = 1; token <= 3; token++)
        {
            await peer.SendAsync(TcpHarness.Get("q", token));
        }

        CoapMessage busy = await peer.ReceiveAsync();
        busy.Code.Should().Be(CoapCode.ServiceUnavailable);
        busy.Token.ToArray().Should().Equal(3);
        lock (held)
        {
            held.Should().HaveCount(2);
        }
    }

    [Fact]
    public async Task APeerThatStopsReadingIsStoppedAndThenAbortedNotBuffered()
    {
        int handled = 0;
        await using TcpHarness server = TcpHarness.Server(
            new CoapConnectionOptions { MaxRequestsInFlight = 4, IdleTimeout = Timeout.InfiniteTimeSpan, SendTimeout = TimeSpan.FromSeconds(30) },
            exchange =>
            {
                Interlocked.Increment(ref handled);
                exchange.Respond(new CoapMessage { Code = CoapCode.Content, Payload = new byte[1000] });
            });
        RawStreamPeer peer = server.Connect(pauseThreshold: 4096);
        await peer.HandshakeAsync(maxMessageSize: 65536);

        // The Pong proves our CSM was taken (and its timer disposed) before the timers are counted.
        await peer.SendAsync(new CoapMessage { Code = CoapCode.Ping });
        (await peer.ReceiveAsync()).Code.Should().Be(CoapCode.Pong);
        int timersBefore = server.Time.ActiveTimerCount;

        // The peer sends requests as fast as it can and never reads a response.
        const int Attempted = 10_000;
        Task sending = Task.Run(async () =>
        {
            for (int i = 0; i < Attempted; i++)
            {
                await peer.SendAsync(TcpHarness.Get("x", (byte)i));
            }
        });

        // Our write waits for the peer (its send timeout is armed) and our reads stop, so the peer's writes wait too.
        await Wait.UntilAsync(() => server.Time.ActiveTimerCount > timersBefore);
        sending.IsCompleted.Should().BeFalse("the endpoint stopped reading the peer");
        Volatile.Read(ref handled).Should().BeLessThan(50);

        server.Time.Advance(TimeSpan.FromSeconds(30));

        List<CoapMessage> delivered = await peer.ReceiveUntilClosedAsync();
        delivered.Count.Should().BeLessThan(50, "only what fit in the bounded buffers was ever written");
        await sending;
        server.Log.Warnings.Should().ContainSingle().Which.Should().Contain("stopped reading");
    }

    /// <summary>A handler answering <paramref name="code"/> with a 1,200-byte body, to a peer whose CSM keeps the default 1,152-byte limit.</summary>
    private static async Task<CoapMessage> AnswerWith1200BytesAsync(CoapCode code)
    {
        await using TcpHarness server = TcpHarness.Server(handler: exchange => exchange.Respond(new CoapMessage { Code = code, Payload = new byte[1200] }));
        RawStreamPeer peer = await server.ConnectAndHandshakeAsync(maxMessageSize: null);
        await peer.SendAsync(TcpHarness.Get("large", 1));
        return await peer.ReceiveAsync();
    }
}
