using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Serialization;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;
using CoapNet.Transports;

namespace CoapNet.Tests.Tcp;

/// <summary>
/// A connection's read loop (issue 39): a quick handler runs on it as UDP's receive thread runs one, with no hand-off;
/// the responses to the frames of one read leave in one flush; and a call that does not return hands the connection to
/// a new read loop, so the requests after it are answered meanwhile.
/// </summary>
public sealed class ReadLoopTests
{
    [Fact]
    public async Task ATrustedHandlerIsAnsweredOnTheReadLoopWithoutTheDispatchBlockOrItsLane()
    {
        await using InlineServer fixture = new();
        RawStreamPeer peer = await fixture.ConnectAsync();

        // Not yet trusted: each call waits for the scheduler the dispatch block and the lanes run on.
        for (int i = 0; i < InlineGate.FirstStreak; i++)
        {
            await peer.SendAsync(TcpHarness.Get("quick", (byte)i));
            Task<CoapMessage> answer = peer.ReceiveAsync();
            Wait.Until(() => fixture.Scheduler.QueuedCount > 0, "the call was handed to the scheduler");
            answer.IsCompleted.Should().BeFalse("the handler has not run yet");
            Wait.Until(() =>
            {
                fixture.Scheduler.RunUntilIdle();
                return answer.IsCompleted;
            });
        }

        await peer.SendAsync(TcpHarness.Get("quick", 100));
        Task<CoapMessage> inline = peer.ReceiveAsync();
        Wait.Until(() => inline.IsCompleted, "answered with the scheduler never run");
        (await inline).Token.ToArray().Should().Equal([100]);
        (await inline).GetPayloadString().Should().Be("quick");
        fixture.Scheduler.QueuedCount.Should().Be(0, "nothing was handed off");
    }

    [Fact]
    public async Task TheResponsesToTheRequestsOfOneReadLeaveInOneFlush()
    {
        await using TcpHarness server = TcpHarness.Server();
        RawStreamPeer peer = await server.ConnectAndHandshakeAsync();
        await peer.SendAsync(new CoapMessage { Code = CoapCode.Ping });
        (await peer.ReceiveAsync()).Code.Should().Be(CoapCode.Pong);
        InMemoryConnection serverEnd = peer.End.Other;
        int before = serverEnd.Flushes;

        // Eight requests in one write: the read loop reads them at once and answers them together.
        const int Count = 8;
        System.IO.Pipelines.Pipe frames = new();
        for (byte token = 1; token <= Count; token++)
        {
            CoapMessageSerializer.Tcp.Serialize(TcpHarness.Get("p" + token, token), frames.Writer);
        }

        await frames.Writer.FlushAsync();
        System.IO.Pipelines.ReadResult written = await frames.Reader.ReadAsync();
        await peer.SendBytesAsync(System.Buffers.BuffersExtensions.ToArray(written.Buffer));

        for (byte token = 1; token <= Count; token++)
        {
            CoapMessage response = await peer.ReceiveAsync();
            response.Token.ToArray().Should().Equal(token);
        }

        (serverEnd.Flushes - before).Should().Be(1, "eight responses, one flush: one send on a socket");
    }

    [Fact]
    public async Task AFrameWhoseHandlingDoesNotReturnHandsTheConnectionToANewReadLoop()
    {
        using ManualResetEventSlim entered = new();
        using ManualResetEventSlim release = new();
        List<string> handled = [];
        await using TcpHarness server = TcpHarness.Server(handler: exchange =>
        {
            string path = exchange.Request.UriPath;
            lock (handled)
            {
                handled.Add(path);
            }

            if (path == "/block")
            {
                entered.Set();
                release.Wait(Wait.DefaultBound);
            }

            TcpHarness.Echo(exchange);
        });
        RawStreamPeer peer = await server.ConnectAndHandshakeAsync();

        await peer.SendAsync(TcpHarness.Get("block", 1));
        await peer.SendAsync(TcpHarness.Get("after", 2));
        entered.Wait(Wait.DefaultBound).Should().BeTrue();
        lock (handled)
        {
            handled.Should().Equal(["/block"], "the read loop is inside the first call");
        }

        // Two looks of the watchdog find the read loop inside the same call: a new one goes on with the next frame.
        server.Time.Advance(ReceiveContext.StallCheckInterval);
        server.Time.Advance(ReceiveContext.StallCheckInterval);
        CoapMessage after = await peer.ReceiveAsync();
        after.Token.ToArray().Should().Equal([2]);
        after.GetPayloadString().Should().Be("/after");

        release.Set();
        CoapMessage blocked = await peer.ReceiveAsync();
        blocked.Token.ToArray().Should().Equal([1]);
        blocked.GetPayloadString().Should().Be("/block");

        // The connection goes on, served by the new read loop.
        await peer.SendAsync(TcpHarness.Get("later", 3));
        (await peer.ReceiveAsync()).GetPayloadString().Should().Be("/later");
    }

    /// <summary>A CoapServer over an in-memory listener, its dispatch block and lanes on a scheduler the test runs.</summary>
    private sealed class InlineServer : IAsyncDisposable
    {
        private readonly InMemoryListener _listener = new();

        public InlineServer()
        {
            CoapServerOptions options = new CoapServerOptions
            {
                Scheduler = Scheduler,
                Endpoint = new CoapEndpointOptions { TimeProvider = Time },
            }.Listen(_listener);
            Server = new CoapServer(options);
            Server.MapGet("/quick", _ => CoapResponse.Content("quick"));
            Server.Start();
        }

        public ManualTimeProvider Time { get; } = new();

        public ManualTaskScheduler Scheduler { get; } = new();

        public CoapServer Server { get; }

        public async Task<RawStreamPeer> ConnectAsync()
        {
            RawStreamPeer peer = new(_listener.Connect());
            await peer.HandshakeAsync();
            return peer;
        }

        public async ValueTask DisposeAsync()
        {
            Scheduler.RunUntilIdle();
            using CancellationTokenSource bound = new(Wait.DefaultBound);
            Task stopping = Task.Run(() => Server.Stop(bound.Token));
            Wait.Until(() =>
            {
                Scheduler.RunUntilIdle();
                return stopping.IsCompleted;
            });
            await stopping;
        }
    }
}
