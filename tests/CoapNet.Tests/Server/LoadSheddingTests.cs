using CoapNet.Messages;
using CoapNet.Server;

namespace CoapNet.Tests.Server;

/// <summary>
/// The bounded pipeline under overload, seen byte for byte from a raw socket: with one handler
/// running and one request queued (MaxPendingRequests 2, MaxDegreeOfParallelism 1), a further CON
/// request gets 5.03 with Max-Age, a further NON request gets nothing, and once the handlers are
/// released the server serves again.
/// </summary>
public sealed class LoadSheddingTests : IAsyncLifetime
{
    private const int Bound = 2;
    private readonly BlockingRoute _block = new();
    private LoopbackServer? _server;
    private RawPeer? _peer;

    private CoapServer Server => _server!.Server;

    private RawPeer Peer => _peer!;

    public Task InitializeAsync()
    {
        // A long SeparateResponseDelay: no empty ACK interleaves with what the test watches.
        _server = LoopbackServer.Start(
            _block.Map,
            LoopbackServer.Options(maxPendingRequests: Bound, maxDegreeOfParallelism: 1, separateResponseDelay: TimeSpan.FromMinutes(5), loadSheddingMaxAge: TimeSpan.FromSeconds(7)));
        _peer = new RawPeer(_server.EndPoint);
        return Task.CompletedTask;
    }

    public async Task DisposeAsync()
    {
        _block.Dispose();
        _peer?.Dispose();
        if (_server is not null)
        {
            await _server.DisposeAsync();
        }
    }

    [Fact]
    public async Task ConfirmableRequestsBeyondTheBoundAreAnsweredServiceUnavailableWithMaxAge()
    {
        await FillThePipelineAsync(CoapMessageType.Confirmable);
        List<CoapMessage> excess = [];
        for (byte token = 10; token < 30; token++)
        {
            excess.Add(Peer.Request(CoapMessageType.Confirmable, CoapCode.Get, $"/block?n={token}", token));
            await Peer.SendAsync(excess[^1]);
        }

        IReadOnlyList<CoapMessage> answers = await Peer.PingBarrierAsync();

        answers.Should().HaveCount(excess.Count, "every excess CON is answered at once");
        for (int i = 0; i < excess.Count; i++)
        {
            CoapMessage answer = answers.Single(a => a.MessageId == excess[i].MessageId);
            answer.Type.Should().Be(CoapMessageType.Acknowledgement);
            answer.Code.Should().Be(CoapCode.ServiceUnavailable);
            answer.Token.ToArray().Should().Equal(excess[i].Token.ToArray());
            answer.MaxAge.Should().Be(7u, "Max-Age says when to try again (RFC 7252 section 5.9.3.4)");
        }

        Server.PendingRequests.Should().Be(Bound);
        _block.Release();
        await ExpectAnswersToTheFirstTwoAsync(CoapMessageType.Acknowledgement);
        await ExpectServedAgainAsync(CoapMessageType.Confirmable);
    }

    [Fact]
    public async Task NonConfirmableRequestsBeyondTheBoundAreDroppedWithoutAnAnswer()
    {
        await FillThePipelineAsync(CoapMessageType.NonConfirmable);
        for (byte token = 10; token < 30; token++)
        {
            await Peer.SendAsync(Peer.Request(CoapMessageType.NonConfirmable, CoapCode.Get, $"/block?n={token}", token));
        }

        // Shedding happens on the receive loop, so an answer to a shed request would precede the ping's RST.
        (await Peer.PingBarrierAsync()).Should().BeEmpty();
        Server.PendingRequests.Should().Be(Bound);

        _block.Release();
        await ExpectAnswersToTheFirstTwoAsync(CoapMessageType.NonConfirmable);

        // With one handler at a time the pipeline is first in, first out: had a dropped request been
        // queued after all, its answer would come before the answer to this later one.
        await ExpectServedAgainAsync(CoapMessageType.NonConfirmable);
        (await Peer.PingBarrierAsync()).Should().BeEmpty();
    }

    [Fact]
    public async Task PendingRequestsNeverExceedsTheBoundWhileRequestsAreShed()
    {
        using CancellationTokenSource stop = new();
        int highest = 0;
        Task sampler = Task.Factory.StartNew(
            () =>
            {
                while (!stop.IsCancellationRequested)
                {
                    int pending = Server.PendingRequests;
                    if (pending > highest)
                    {
                        highest = pending;
                    }
                }
            },
            TaskCreationOptions.LongRunning);

        await FillThePipelineAsync(CoapMessageType.Confirmable);
        for (int round = 0; round < 5; round++)
        {
            for (int i = 0; i < 40; i++)
            {
                CoapMessageType type = i % 2 == 0 ? CoapMessageType.Confirmable : CoapMessageType.NonConfirmable;
                await Peer.SendAsync(Peer.Request(type, CoapCode.Get, "/block", (byte)i));
            }

            (await Peer.PingBarrierAsync()).Should().HaveCount(20, "the 20 CON requests of the round were shed with 5.03");
        }

        await stop.CancelAsync();
        await sampler;
        highest.Should().Be(Bound);
        _block.Release();
        await ExpectAnswersToTheFirstTwoAsync(CoapMessageType.Acknowledgement);
        Server.PendingRequests.Should().BeLessThanOrEqualTo(Bound);
    }

    /// <summary>Request 1 runs (its handler has started), request 2 waits in the queue.</summary>
    private async Task FillThePipelineAsync(CoapMessageType type)
    {
        await Peer.SendAsync(Peer.Request(type, CoapCode.Get, "/block?n=1", token: 1));
        await _block.WaitUntilEnteredAsync();
        await Peer.SendAsync(Peer.Request(type, CoapCode.Get, "/block?n=2", token: 2));
        (await Peer.PingBarrierAsync()).Should().BeEmpty("both requests were admitted and nothing has been answered yet");
        Server.PendingRequests.Should().Be(Bound);
    }

    private async Task ExpectAnswersToTheFirstTwoAsync(CoapMessageType type)
    {
        CoapMessage first = (await Peer.ReceiveAsync()).Message;
        CoapMessage second = (await Peer.ReceiveAsync()).Message;
        new[] { first, second }.Select(m => (m.Type, m.Code, m.Token.ToArray()[0], m.GetPayloadString())).Should().BeEquivalentTo(
            [(type, CoapCode.Content, (byte)1, "done 1"), (type, CoapCode.Content, (byte)2, "done 2")]);
    }

    private async Task ExpectServedAgainAsync(CoapMessageType type)
    {
        await Peer.SendAsync(Peer.Request(type, CoapCode.Get, "/block?n=99", token: 99));
        CoapMessage answer = (await Peer.ReceiveAsync()).Message;
        answer.Code.Should().Be(CoapCode.Content);
        answer.Token.ToArray().Should().Equal(99);
        answer.GetPayloadString().Should().Be("done 99");
    }
}
