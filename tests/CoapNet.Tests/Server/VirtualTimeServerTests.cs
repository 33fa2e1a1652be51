using System.Net;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Server;

/// <summary>
/// The server with a <see cref="ManualTaskScheduler"/> on the in-memory network: its dispatch block, blocking lanes and
/// awaited handlers run only when the test pumps, on the test's thread, so what went out between two pumps is all
/// that will, with no wall-clock wait.
/// </summary>
public sealed class VirtualTimeServerTests : IDisposable
{
    private static readonly IPEndPoint ServerAddress = InMemoryNetwork.EndPoint("10.0.0.2");
    private readonly ManualTimeProvider _time = new();
    private readonly ManualTaskScheduler _scheduler = new();
    private readonly InMemoryNetwork _network;
    private readonly TestPeer _peer;
    private readonly CoapServer _server;
    private readonly TaskCompletionSource<string> _gate = new();
    private readonly List<int> _handlerThreads = [];

    public VirtualTimeServerTests()
    {
        _network = new InMemoryNetwork(_time);
        _server = new CoapServer(new CoapServerOptions
        {
            DatagramTransports = [_network.CreateTransport(ServerAddress)],
            Scheduler = _scheduler,
            Endpoint = new CoapEndpointOptions { TimeProvider = _time },
        });
        _server.MapGet("/sync", _ =>
        {
            _handlerThreads.Add(Environment.CurrentManagedThreadId);
            return CoapResponse.Content("sync");
        });
        _server.MapGet("/gated", async (_, _) => CoapResponse.Content(await _gate.Task.ConfigureAwait(false)));

        // No ConfigureAwait(false): the handler resumes on the scheduler it started on, the test's, whichever thread
        // completes the gate. With it, a gate completed on the test's thread (which has the test framework's context)
        // resumes the handler on the thread pool, whenever that gets to it.
        _server.MapGet("/awaits", async (_, _) => CoapResponse.Content(await _gate.Task));
        _server.Start();
        _peer = new TestPeer(_network, "10.0.0.1");
    }

    [Fact]
    public void ASynchronousHandlerRunsOnTheTestsThreadWhenThePumpRuns()
    {
        _peer.Send(Get("/sync", messageId: 1), ServerAddress);
        _network.DeliverAll();
        _handlerThreads.Should().BeEmpty("the request waits in the dispatch block for the pump");

        _scheduler.Settle(_network);

        _handlerThreads.Should().Equal(Environment.CurrentManagedThreadId);
        CoapMessage response = _peer.Received.Should().ContainSingle().Subject.Parsed;
        response.Type.Should().Be(CoapMessageType.Acknowledgement);
        response.GetPayloadString().Should().Be("sync");
    }

    [Fact]
    public void AnAsyncHandlerCompletedOnAnotherThreadAnswersOnlyWhenThePumpRuns()
    {
        _peer.Send(Get("/gated", messageId: 2), ServerAddress);
        _scheduler.Settle(_network);
        _server.PendingRequests.Should().Be(1, "the handler awaits its gate");

        // The handler resumes on another thread (ConfigureAwait(false)) and returns there; the server's answer does not
        // follow on that thread but waits for the test's scheduler.
        Thread other = new(() => _gate.SetResult("late"));
        other.Start();
        other.Join();
        _network.Sent.Should().ContainSingle("only the request is on the wire until the scheduler runs");

        _scheduler.Settle(_network);

        CoapMessage response = _peer.Received.Should().ContainSingle().Subject.Parsed;
        response.GetPayloadString().Should().Be("late");
        _server.PendingRequests.Should().Be(0);
    }

    [Fact]
    public void TheSeparateResponseDelayIsVirtualTime()
    {
        _peer.Send(Get("/awaits", messageId: 3), ServerAddress);
        _scheduler.Settle(_network);
        _peer.Received.Should().BeEmpty();

        _time.Advance(TimeSpan.FromMilliseconds(100));
        _scheduler.Settle(_network);
        CoapMessage ack = _peer.Received.Should().ContainSingle().Subject.Parsed;
        ack.Type.Should().Be(CoapMessageType.Acknowledgement);
        ack.Code.Should().Be(CoapCode.Empty, "RFC 7252 section 5.2.2: an empty ACK after the delay");

        _gate.SetResult("separate");
        _scheduler.Settle(_network);

        CoapMessage response = _peer.Last.Parsed;
        response.Type.Should().Be(CoapMessageType.Confirmable);
        response.GetPayloadString().Should().Be("separate");
    }

    public void Dispose()
    {
        _gate.TrySetResult("disposed");
        _scheduler.Settle(_network);
        using CancellationTokenSource bound = new(Wait.DefaultBound);
        _server.Stop(bound.Token);
        _peer.Dispose();
    }

    private static CoapMessage Get(string path, ushort messageId)
    {
        CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get, MessageId = messageId, Token = new byte[] { (byte)messageId } };
        request.UriPath = path;
        return request;
    }
}
