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

    /// <summary>
    /// What admission promises, seen from outside the counter it keeps: while two requests hold the pipeline,
    /// 200 more (CON and NON mixed) never reach the handler, every CON among them is answered 5.03 on the wire,
    /// and once released only the two admitted requests are served. An admission that let excess requests
    /// through would put them in the handler and answer them "done n" instead of 5.03.
    /// </summary>
    [Fact]
    public async Task RequestsBeyondTheBoundNeverReachTheHandlerAndEveryExcessConfirmableIsAnsweredServiceUnavailable()
    {
        await FillThePipelineAsync(CoapMessageType.Confirmable);
        List<CoapMessage> excessConfirmable = [];
        List<CoapMessage> answers = [];
        byte token = 10;
        for (int round = 0; round < 5; round++)
        {
            for (int i = 0; i < 40; i++, token++)
            {
                CoapMessageType type = i % 2 == 0 ? CoapMessageType.Confirmable : CoapMessageType.NonConfirmable;
                CoapMessage request = Peer.Request(type, CoapCode.Get, $"/block?n={token}", token);
                if (type == CoapMessageType.Confirmable)
                {
                    excessConfirmable.Add(request);
                }

                await Peer.SendAsync(request);
            }

            answers.AddRange(await Peer.PingBarrierAsync());
        }

        _block.Release();
        answers.AddRange(await Peer.SettledAsync(Server));

        _block.Reached.Should().BeEquivalentTo(["1", "2"], "only the two requests admitted before the excess reached the handler");
        _block.MostWaiting.Should().BeLessThanOrEqualTo(Bound, "no more than the bound ever waited in the handler");

        answers.Where(a => a.Code == CoapCode.Content).Select(a => a.GetPayloadString()).Should().BeEquivalentTo(
            ["done 1", "done 2"], "only the admitted requests were served");
        List<CoapMessage> shed = answers.Where(a => a.Code != CoapCode.Content).ToList();
        shed.Select(a => (a.Type, a.Code, a.MessageId, a.Token.ToArray()[0])).Should().BeEquivalentTo(
            excessConfirmable.Select(r => (CoapMessageType.Acknowledgement, CoapCode.ServiceUnavailable, r.MessageId, r.Token.ToArray()[0])),
            "each excess CON is answered 5.03 in its ACK, and no excess NON is answered at all");
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
