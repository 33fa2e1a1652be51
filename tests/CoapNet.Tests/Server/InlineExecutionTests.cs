using System.Net;
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
    private static readonly IPEndPoint ServerAddress = InMemoryNetwork.EndPoint("10.0.0.2");
    private readonly ManualTimeProvider _time = new();
    private readonly ManualTaskScheduler _scheduler = new();
    private readonly InMemoryNetwork _network;
    private readonly TestPeer _peer;
    private readonly CoapServer _server;
    private readonly ReceiveThread _receiving = new();
    private readonly DatagramReceiveThread.Scope _scope;
    private readonly List<string> _calls = [];
    private TimeSpan _handlerTakes;

    public InlineExecutionTests()
    {
        _network = new InMemoryNetwork(_time);
        _server = new CoapServer(new CoapServerOptions
        {
            DatagramTransports = [_network.CreateTransport(ServerAddress)],
            Scheduler = _scheduler,
            Endpoint = new CoapEndpointOptions { TimeProvider = _time },
        });
        _server.MapGet("/sync", request =>
        {
            _calls.Add("sync " + request.Message.MessageId);

            // Inside the call, as a handler that blocks would spend it: timers due meanwhile fire here.
            _time.Advance(_handlerTakes);
            return CoapResponse.Content("sync");
        });
        _server.MapGet("/async", (request, _) =>
        {
            _calls.Add("async " + request.Message.MessageId);
            return ValueTask.FromResult(CoapResponse.Content("async"));
        });
        _server.Start();
        _peer = new TestPeer(_network, "10.0.0.1");

        // From here on the test's thread delivers datagrams as a transport's receive thread would.
        _scope = _receiving.Enter();
    }

    [Fact]
    public void ASynchronousHandlerIsHandedToItsLaneUntilItHasShownItReturnsQuicklyThenRunsAsTheRequestArrives()
    {
        for (int i = 0; i < InlineGate.FirstStreak; i++)
        {
            Send("/sync", (ushort)(i + 1));
            _network.DeliverAll();
            _peer.Received.Should().HaveCount(i, "a handler not yet trusted runs on its lane, which waits for the pump");
            _scheduler.Settle(_network);
        }

        Send("/sync", 100);
        _network.DeliverAll();

        CoapMessage response = _peer.Last.Parsed;
        response.MessageId.Should().Be(100, "answered while the request was delivered, with no pump");
        response.Type.Should().Be(CoapMessageType.Acknowledgement);
        response.GetPayloadString().Should().Be("sync");
        _scheduler.QueuedCount.Should().Be(0);
    }

    [Fact]
    public void AnAsyncHandlerThatCompletesAtOnceRunsAsTheRequestArrivesOnceTrusted()
    {
        for (int i = 0; i < InlineGate.FirstStreak; i++)
        {
            Send("/async", (ushort)(i + 1));
            _network.DeliverAll();
            _peer.Received.Should().HaveCount(i, "an async handler not yet trusted starts on the dispatch block");
            _scheduler.Settle(_network);
        }

        Send("/async", 100);
        _network.DeliverAll();

        _peer.Last.Parsed.MessageId.Should().Be(100);
        _peer.Last.Parsed.GetPayloadString().Should().Be("async");
    }

    [Fact]
    public void UnderLoadTheRequestIsHandedOffAndALaterOneDoesNotOvertakeIt()
    {
        Trust("/sync");
        int before = _peer.Received.Count;

        // More datagrams wait on the socket: the first request goes to the dispatch block.
        _receiving.Busy = true;
        Send("/sync", 200);
        _network.DeliverAll();

        // The socket is empty again, but the dispatch block still holds the first: the second queues behind it.
        _receiving.Busy = false;
        Send("/sync", 201);
        _network.DeliverAll();
        _peer.Received.Should().HaveCount(before, "neither ran on the receiving thread");

        _scheduler.Settle(_network);

        _peer.Received.Skip(before).Select(r => r.Parsed.MessageId).Should().Equal((ushort)200, (ushort)201);
        _calls.TakeLast(2).Should().Equal("sync 200", "sync 201");
    }

    [Fact]
    public void ADuplicateOfARequestAnsweredInlineGetsTheRecordedResponseAndTheHandlerRunsOnce()
    {
        Trust("/sync");
        byte[] request = Send("/sync", 300);
        _network.DeliverAll();
        byte[] answer = _peer.Last.Bytes;

        _peer.SendBytes(request, ServerAddress);
        _network.DeliverAll();

        _peer.Last.Bytes.Should().Equal(answer, "RFC 7252 section 4.5: the duplicate gets the same piggybacked response");
        _calls.Count(c => c == "sync 300").Should().Be(1);
    }

    [Fact]
    public void AHandlerThatTookLongerThanTheLimitInlineGoesBackToItsLaneAndMustShowTwiceAsManyQuickCalls()
    {
        Trust("/sync");
        _handlerTakes = InlineGate.QuickLimit + TimeSpan.FromMilliseconds(1);
        Send("/sync", 400);
        _network.DeliverAll();
        _peer.Last.Parsed.MessageId.Should().Be(400, "this call was already inline");

        _handlerTakes = TimeSpan.Zero;
        int quickOnLane = 0;
        while (true)
        {
            ushort id = (ushort)(401 + quickOnLane);
            Send("/sync", id);
            _network.DeliverAll();
            if (_peer.Last.Parsed.MessageId == id)
            {
                break;
            }

            _scheduler.Settle(_network);
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
        int before = _peer.Received.Count;
        Send("/sync", 500);
        _network.DeliverAll();

        List<CoapMessage> answers = _peer.Received.Skip(before).Select(r => r.Parsed).ToList();
        answers.Should().HaveCount(2);
        answers[0].Type.Should().Be(CoapMessageType.Acknowledgement);
        answers[0].Code.Should().Be(CoapCode.Empty, "RFC 7252 section 5.2.2: the timer acknowledged the request while the handler ran");
        answers[0].MessageId.Should().Be(500);
        answers[1].Type.Should().Be(CoapMessageType.Confirmable, "the response follows separately");
        answers[1].GetPayloadString().Should().Be("sync");
    }

    public void Dispose()
    {
        _scope.Dispose();
        _scheduler.Settle(_network);
        using CancellationTokenSource bound = new(Wait.DefaultBound);
        _server.Stop(bound.Token);
        _peer.Dispose();
    }

    /// <summary>Sends quick calls through the lane until the handler answers as its request arrives.</summary>
    private void Trust(string path)
    {
        for (int i = 0; i < InlineGate.FirstStreak; i++)
        {
            Send(path, (ushort)(1000 + i));
            _scheduler.Settle(_network);
        }
    }

    private byte[] Send(string path, ushort messageId)
    {
        CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get, MessageId = messageId, Token = new byte[] { (byte)(messageId >> 8), (byte)messageId } };
        request.UriPath = path;
        return _peer.Send(request, ServerAddress);
    }

    /// <summary>The test's thread as a transport's receive thread; <see cref="Busy"/> plays a socket with a backlog.</summary>
    private sealed class ReceiveThread : DatagramReceiveThread
    {
        public bool Busy { get; set; }

        public override bool HandOff => Busy;
    }
}
