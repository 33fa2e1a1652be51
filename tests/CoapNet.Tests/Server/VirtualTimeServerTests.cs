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
    private readonly VirtualTimeServer _fixture;
    private readonly TaskCompletionSource<string> _gate = new();
    private readonly List<int> _handlerThreads = [];

    public VirtualTimeServerTests()
    {
        _fixture = new VirtualTimeServer(server =>
        {
            server.MapGet("/sync", _ =>
            {
                _handlerThreads.Add(Environment.CurrentManagedThreadId);
                return CoapResponse.Content("sync");
            });
            server.MapGet("/gated", async (_, _) => CoapResponse.Content(await _gate.Task.ConfigureAwait(false)));

            // No ConfigureAwait(false): the handler resumes on the scheduler it started on, the test's, whichever thread
            // completes the gate. With it, a gate completed on the test's thread (which has the test framework's context)
            // resumes the handler on the thread pool, whenever that gets to it.
            server.MapGet("/awaits", async (_, _) => CoapResponse.Content(await _gate.Task));
        });
    }

    [Fact]
    public void ASynchronousHandlerRunsOnTheTestsThreadWhenThePumpRuns()
    {
        _fixture.Send(Get("/sync", messageId: 1));
        _fixture.Network.DeliverAll();
        _handlerThreads.Should().BeEmpty("the request waits in the dispatch block for the pump");

        _fixture.Settle();

        _handlerThreads.Should().Equal(Environment.CurrentManagedThreadId);
        CoapMessage response = _fixture.Peer.Received.Should().ContainSingle().Subject.Parsed;
        response.Type.Should().Be(CoapMessageType.Acknowledgement);
        response.GetPayloadString().Should().Be("sync");
    }

    [Fact]
    public void AnAsyncHandlerCompletedOnAnotherThreadAnswersOnlyWhenThePumpRuns()
    {
        _fixture.Send(Get("/gated", messageId: 2));
        _fixture.Settle();
        _fixture.Server.PendingRequests.Should().Be(1, "the handler awaits its gate");

        // The handler resumes on another thread (ConfigureAwait(false)) and returns there; the server's answer does not
        // follow on that thread but waits for the test's scheduler.
        Thread other = new(() => _gate.SetResult("late"));
        other.Start();
        other.Join();
        _fixture.Network.Sent.Should().ContainSingle("only the request is on the wire until the scheduler runs");

        _fixture.Settle();

        CoapMessage response = _fixture.Peer.Received.Should().ContainSingle().Subject.Parsed;
        response.GetPayloadString().Should().Be("late");
        _fixture.Server.PendingRequests.Should().Be(0);
    }

    [Fact]
    public void TheSeparateResponseDelayIsVirtualTime()
    {
        _fixture.Send(Get("/awaits", messageId: 3));
        _fixture.Settle();
        _fixture.Peer.Received.Should().BeEmpty();

        _fixture.Time.Advance(TimeSpan.FromMilliseconds(100));
        _fixture.Settle();
        CoapMessage ack = _fixture.Peer.Received.Should().ContainSingle().Subject.Parsed;
        ack.Type.Should().Be(CoapMessageType.Acknowledgement);
        ack.Code.Should().Be(CoapCode.Empty, "RFC 7252 section 5.2.2: an empty ACK after the delay");

        _gate.SetResult("separate");
        _fixture.Settle();

        CoapMessage response = _fixture.Peer.Last.Parsed;
        response.Type.Should().Be(CoapMessageType.Confirmable);
        response.GetPayloadString().Should().Be("separate");
    }

    public void Dispose()
    {
        _gate.TrySetResult("disposed");
        _fixture.Dispose();
    }

    private static CoapMessage Get(string path, ushort messageId)
    {
        CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get, MessageId = messageId, Token = new byte[] { (byte)messageId } };
        request.UriPath = path;
        return request;
    }
}
