using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;
using CoapNet.Transports;

namespace CoapNet.Tests.Server;

/// <summary>
/// A request handled on the thread that received it (issue 25): in virtual time, with the test's thread playing a
/// transport's receive thread, so what runs inline is answered while the datagram is delivered and what is handed off
/// waits for the scheduler's pump. Ordering, deduplication, the separate-response timer and the way back to the lane
/// for a handler that turned slow are what the receive path must keep.
/// </summary>
public sealed class InlineExecutionTests : IDisposable
{
    private readonly VirtualTimeServer _fixture;
    private readonly ReceiveThread _receiving = new();
    private readonly ReceiveContext.Scope _scope;
    private readonly List<string> _calls = [];
    private TimeSpan _handlerTakes;

    public InlineExecutionTests()
    {
        _fixture = new VirtualTimeServer(server =>
        {
            server.MapGet("/sync", request =>
            {
                _calls.Add("sync " + request.Message.MessageId);

                // Inside the call, as a handler that blocks would spend it: timers due meanwhile fire here.
                _fixture!.Time.Advance(_handlerTakes);
                return CoapResponse.Content("sync");
            });
            server.MapGet("/async", (request, _) =>
            {
                _calls.Add("async " + request.Message.MessageId);
                return ValueTask.FromResult(CoapResponse.Content("async"));
            });
        });

        // From here on the test's thread delivers datagrams as a transport's receive thread would.
        _scope = _receiving.Enter();
    }

    private TestPeer Peer => _fixture.Peer;

    private InMemoryNetwork Network => _fixture.Network;

    [Fact]
    public void ASynchronousHandlerIsHandedToItsLaneUntilItHasShownItReturnsQuicklyThenRunsAsTheRequestArrives()
    {
        Trust("/sync");
        Send("/sync", 100);
        Network.DeliverAll();

        CoapMessage response = Peer.Last.Parsed;
        response.MessageId.Should().Be(100, "answered while the request was delivered, with no pump");
        response.Type.Should().Be(CoapMessageType.Acknowledgement);
        response.GetPayloadString().Should().Be("sync");
        _fixture.Scheduler.QueuedCount.Should().Be(0);
    }

    [Fact]
    public void AnAsyncHandlerThatCompletesAtOnceRunsAsTheRequestArrivesOnceTrusted()
    {
        Trust("/async");
        Send("/async", 100);
        Network.DeliverAll();

        Peer.Last.Parsed.MessageId.Should().Be(100);
        Peer.Last.Parsed.GetPayloadString().Should().Be("async");
    }

    [Fact]
    public void UnderLoadTheRequestIsHandedOffAndALaterOneDoesNotOvertakeIt()
    {
        Trust("/sync");
        int before = Peer.Received.Count;

        // More datagrams wait on the socket: the first request goes to the dispatch block.
        _receiving.Busy = true;
        Send("/sync", 200);
        Network.DeliverAll();

        // The socket is empty again, but the dispatch block still holds the first: the second queues behind it.
        _receiving.Busy = false;
        Send("/sync", 201);
        Network.DeliverAll();
        Peer.Received.Should().HaveCount(before, "neither ran on the receiving thread");

        _fixture.Settle();

        Peer.Received.Skip(before).Select(r => r.Parsed.MessageId).Should().Equal((ushort)200, (ushort)201);
        _calls.TakeLast(2).Should().Equal("sync 200", "sync 201");
    }

    [Fact]
    public void ADuplicateOfARequestAnsweredInlineGetsTheRecordedResponseAndTheHandlerRunsOnce()
    {
        Trust("/sync");
        byte[] request = Send("/sync", 300);
        Network.DeliverAll();
        byte[] answer = Peer.Last.Bytes;

        Peer.SendBytes(request, VirtualTimeServer.Address);
        Network.DeliverAll();

        Peer.Last.Bytes.Should().Equal(answer, "RFC 7252 section 4.5: the duplicate gets the same piggybacked response");
        _calls.Count(c => c == "sync 300").Should().Be(1);
    }

    [Fact]
    public void AHandlerThatTookLongerThanTheLimitInlineGoesBackToItsLaneAndMustShowTwiceAsManyQuickCalls()
    {
        Trust("/sync");
        _handlerTakes = InlineGate.QuickLimit + TimeSpan.FromMilliseconds(1);
        Send("/sync", 400);
        Network.DeliverAll();
        Peer.Last.Parsed.MessageId.Should().Be(400, "this call was already inline");

        _handlerTakes = TimeSpan.Zero;
        int quickOnLane = 0;
        while (true)
        {
            ushort id = (ushort)(401 + quickOnLane);
            Send("/sync", id);
            Network.DeliverAll();
            if (Peer.Last.Parsed.MessageId == id)
            {
                break;
            }

            _fixture.Settle();
            quickOnLane++;
            quickOnLane.Should().BeLessThan(1000);
        }

        quickOnLane.Should().Be(2 * InlineGate.FirstStreak);
    }

    [Fact]
    public void AnInlineHandlerThatOutlastsTheSeparateResponseDelayGetsAnEmptyAckFirstThenItsResponseAsACon()
    {
        Trust("/sync");
        _handlerTakes = TimeSpan.FromMilliseconds(150);
        int before = Peer.Received.Count;
        Send("/sync", 500);
        Network.DeliverAll();

        List<CoapMessage> answers = Peer.Received.Skip(before).Select(r => r.Parsed).ToList();
        answers.Should().HaveCount(2);
        answers[0].Type.Should().Be(CoapMessageType.Acknowledgement);
        answers[0].Code.Should().Be(CoapCode.Empty, "RFC 7252 section 5.2.2: the timer acknowledged the request while the handler ran");
        answers[0].MessageId.Should().Be(500);
        answers[1].Type.Should().Be(CoapMessageType.Confirmable, "the response follows separately");
        answers[1].GetPayloadString().Should().Be("sync");
    }

    [Fact]
    public void InABatchAnInlineCallIsTimedFromTheEndOfTheCallBeforeItSoWhatPassedBetweenCounts()
    {
        Trust("/sync");
        ReceiveContext.StartBatch();
        Send("/sync", 600);
        Network.DeliverAll();
        Peer.Last.Parsed.MessageId.Should().Be(600, "trusted: answered inline");

        // Outside any call but inside the batch: the next call's time runs from the end of the one before.
        _fixture.Time.Advance(InlineGate.QuickLimit + TimeSpan.FromMilliseconds(1));
        Send("/sync", 601);
        Network.DeliverAll();
        Peer.Last.Parsed.MessageId.Should().Be(601, "still trusted when it started");

        Send("/sync", 602);
        Network.DeliverAll();
        Peer.Last.Parsed.MessageId.Should().Be(601, "601 counted as slow, so 602 waits on the lane for the pump");
    }

    [Fact]
    public void AWaitBetweenBatchesDoesNotCountAsAnInlineCallsTime()
    {
        Trust("/sync");
        ReceiveContext.StartBatch();
        Send("/sync", 700);
        Network.DeliverAll();
        Peer.Last.Parsed.MessageId.Should().Be(700);

        // A receive that waited: the transport starts a new batch after it, so the wait is no call's time.
        _fixture.Time.Advance(InlineGate.QuickLimit + TimeSpan.FromMilliseconds(1));
        ReceiveContext.StartBatch();
        Send("/sync", 701);
        Network.DeliverAll();
        Send("/sync", 702);
        Network.DeliverAll();
        Peer.Last.Parsed.MessageId.Should().Be(702, "both calls were quick, so the handler stayed inline");
    }

    [Fact]
    public void ABatchsReadingIsTakenOnlyForTheClockItWasReadFrom()
    {
        // The message layer and the server each read their endpoint's clock; a listener may have a clock of its own.
        TimeProvider mine = _fixture.Time;
        ManualTimeProvider other = new();
        ReceiveContext.StartBatch();
        ReceiveContext.TryGetBatchClock(mine, out _).Should().BeFalse("nothing was read in this batch yet");

        ReceiveContext.SetBatchClock(other, 42);
        ReceiveContext.TryGetBatchClock(mine, out _).Should().BeFalse("that reading is another clock's");
        ReceiveContext.TryGetBatchClock(other, out long reading).Should().BeTrue();
        reading.Should().Be(42);

        ReceiveContext.StartBatch();
        ReceiveContext.TryGetBatchClock(other, out _).Should().BeFalse("a new batch starts without a reading");
        ReceiveContext.EndBatch();
        ReceiveContext.SetBatchClock(other, 43);
        ReceiveContext.TryGetBatchClock(other, out _).Should().BeFalse("outside a batch nothing is kept");
    }

    public void Dispose()
    {
        // The batch clock is the thread's: the next test on this thread starts outside a batch.
        ReceiveContext.EndBatch();
        _scope.Dispose();
        _fixture.Dispose();
    }

    /// <summary>
    /// Sends quick calls until the handler is trusted to answer as its request arrives, each shown to wait for the pump
    /// before: it ran off the receiving thread.
    /// </summary>
    private void Trust(string path)
    {
        for (int i = 0; i < InlineGate.FirstStreak; i++)
        {
            int before = Peer.Received.Count;
            Send(path, (ushort)(1000 + i));
            Network.DeliverAll();
            Peer.Received.Should().HaveCount(before, "a handler not yet trusted runs on its lane or the dispatch block, which wait for the pump");
            _fixture.Settle();
        }
    }

    private byte[] Send(string path, ushort messageId)
    {
        CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get, MessageId = messageId, Token = new byte[] { (byte)(messageId >> 8), (byte)messageId } };
        request.UriPath = path;
        return _fixture.Send(request);
    }

    /// <summary>The test's thread as a transport's receive thread; <see cref="Busy"/> plays a socket with a backlog.</summary>
    private sealed class ReceiveThread : ReceiveContext
    {
        public bool Busy { get; set; }

        public override bool HandOff => Busy;
    }
}
