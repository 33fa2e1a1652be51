using System.Net;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.QBlock;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.QBlocks;

/// <summary>
/// What a server with Q-Block (RFC 9177) does with what a peer sends, byte for byte from a test peer in virtual time:
/// uploads it cannot take, blocks that contradict their body, requests for blocks past the end, and a partial upload
/// whose missing blocks never come (asked for NON_MAX_RETRANSMIT times, then dropped); and the settings' checks.
/// </summary>
public sealed class QBlockServerTests : IDisposable
{
    private static readonly IPEndPoint ServerAddress = InMemoryNetwork.EndPoint("10.0.0.2");
    private readonly ManualTimeProvider _time = new();
    private readonly InMemoryNetwork _network;
    private readonly ManualTaskScheduler _scheduler = new();
    private readonly CoapServer _server;
    private readonly TestPeer _peer;
    private readonly List<int> _uploads = [];
    private ushort _messageId = 0x2000;

    public QBlockServerTests()
    {
        _network = new InMemoryNetwork(_time);
        _server = new CoapServer(new CoapServerOptions
        {
            Scheduler = _scheduler,
            Endpoint = new CoapEndpointOptions
            {
                TimeProvider = _time,
                Blockwise = new CoapNet.Blockwise.BlockwiseOptions { MaxUploadSize = 8192 },
                QBlock = new QBlockOptions { Enabled = true },
            },
        }.Listen(_network.CreateTransport(ServerAddress)));
        _server.MapPut("/upload", request =>
        {
            _uploads.Add(request.Payload.Length);
            return new CoapResponse(CoapCode.Changed);
        });
        _server.MapGet("/body", _ => CoapResponse.Content(new byte[3000], CoapContentFormat.OctetStream));
        _server.Start();
        _peer = new TestPeer(_network, "10.0.0.1");
    }

    public void Dispose()
    {
        _scheduler.RunUntilIdle();
        _server.Dispose();
        _peer.Dispose();
    }

    [Fact]
    public void AnUploadAnnouncingMoreThanTheServerTakesIsRefusedWith413AndSize1()
    {
        CoapMessage answer = Exchange(Block(0, more: true, size1: 100_000));

        answer.Code.Should().Be(CoapCode.RequestEntityTooLarge);
        answer.Size1.Should().Be(8192u, "RFC 7959 section 2.9.3: Size1 tells the largest body the server takes");
        _uploads.Should().BeEmpty();
    }

    [Fact]
    public void ABlockWithoutRequestTagIsABadRequest()
    {
        CoapMessage block = Block(0, more: true, size1: 2048);
        block.RequestTag = null;

        CoapMessage answer = Exchange(block);

        answer.Code.Should().Be(CoapCode.BadRequest);
        answer.GetPayloadString().Should().Contain("Request-Tag");
    }

    [Fact]
    public void ABlockOfTheWrongLengthIsABadRequest()
    {
        CoapMessage block = Block(0, more: true, size1: 2048);
        block.Payload = new byte[1000];

        Exchange(block).Code.Should().Be(CoapCode.BadRequest);
    }

    [Fact]
    public void ABlockPastTheAnnouncedEndEndsTheUploadWith408()
    {
        Exchange(Block(0, more: true, size1: 2048)).Code.Should().Be(CoapCode.Continue, "the server takes Q-Block1 and says so to a CON block 0");

        CoapMessage answer = Exchange(Block(5, more: true, size1: 2048, confirmable: false));

        answer.Code.Should().Be(CoapCode.RequestEntityIncomplete);
        answer.GetPayloadString().Should().Contain("past the end");
    }

    [Fact]
    public void APartialUploadIsAskedForItsMissingBlocksNonMaxRetransmitTimesThenDropped()
    {
        Exchange(Block(0, more: true, size1: 3072));
        _peer.Send(Block(2, more: false, size1: 3072, confirmable: false, length: 1024), ServerAddress);
        _scheduler.Settle(_network);
        _peer.ClearReceived();

        // NON_RECEIVE_TIMEOUT (4 s), doubling: 4, 8, 16, 32 s, then the partial body is discarded (RFC 9177 section 7.2).
        for (int i = 0; i < 8; i++)
        {
            _time.Advance(TimeSpan.FromSeconds(40));
            _scheduler.Settle(_network);
        }

        List<CoapMessage> incomplete = _peer.Received.Select(r => r.Parsed).ToList();
        incomplete.Should().HaveCount(4, "NON_MAX_RETRANSMIT (4) requests for the missing block, no more");
        incomplete.Should().OnlyContain(m => m.Code == CoapCode.RequestEntityIncomplete && m.ContentFormat == CoapContentFormat.MissingBlocksCborSeq && m.Type == CoapMessageType.NonConfirmable);
        incomplete.Should().OnlyContain(m => m.Payload.ToArray().SequenceEqual(new byte[] { 0x01 }), "the CBOR sequence holds block 1 alone");

        // Dropped: the missing block now starts nothing whole, and block 0 again starts a new upload.
        CoapMessage late = Exchange(Block(1, more: true, size1: 3072, confirmable: false));
        late.Should().BeNull("a NON block of an upload that is not complete gets no answer");
        _uploads.Should().BeEmpty();
    }

    [Fact]
    public void AnUploadNoRouteWouldTakeIsRefusedAtItsFirstBlock()
    {
        CoapMessage block = Block(0, more: true, size1: 4096);
        block.UriPath = "/nowhere";

        CoapMessage answer = Exchange(block);

        answer.Code.Should().Be(CoapCode.NotFound, "the server says so before the rest of the body is sent and held");
        _peer.Send(Block(1, more: true, size1: 4096, confirmable: false, path: "/nowhere"), ServerAddress);
        _scheduler.Settle(_network);
        _time.Advance(TimeSpan.FromSeconds(5));
        _scheduler.Settle(_network);
        _peer.Received.Select(r => r.Parsed).Should().NotContain(m => m.Code == CoapCode.RequestEntityIncomplete, "nothing of the refused upload is kept to ask for");
    }

    [Fact]
    public void AnObservationOfferingQBlock2Gets402()
    {
        CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get, MessageId = _messageId++, Token = new byte[] { 3, 4 }, Observe = 0 };
        request.UriPath = "/body";
        request.Options.Add(CoapOptionNumber.QBlock2, new CoapBlock(0, true, 6).Encoded);

        Exchange(request).Code.Should().Be(CoapCode.BadOption, "notifications in Q-Block2 are not served, so the client falls back to Block2");
    }

    [Fact]
    public void ARequestForBlocksPastTheEndOfTheBodyGets402()
    {
        CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get, MessageId = _messageId++, Token = new byte[] { 1, 2 } };
        request.UriPath = "/body";
        request.Options.Add(CoapOptionNumber.QBlock2, new CoapBlock(7, false, 6).Encoded);

        CoapMessage answer = Exchange(request)!;

        answer.Code.Should().Be(CoapCode.BadOption);
        answer.GetPayloadString().Should().Contain("beyond the end");
    }

    [Fact]
    public void SettingsThatBreakTheRfcRulesAreRefusedNamingTheSetting()
    {
        Action payloads = () => new CoapServer(new CoapServerOptions { Endpoint = new CoapEndpointOptions { QBlock = new QBlockOptions { MaxPayloads = 0 } } });
        Action receive = () => new CoapServer(new CoapServerOptions { Endpoint = new CoapEndpointOptions { QBlock = new QBlockOptions { NonTimeout = TimeSpan.FromSeconds(4), NonReceiveTimeout = TimeSpan.FromSeconds(5) } } });

        payloads.Should().Throw<ArgumentException>().Which.ParamName.Should().Be("MaxPayloads");
        receive.Should().Throw<ArgumentException>().Which.Message.Should().Contain("NON_TIMEOUT_RANDOM");
    }

    /// <summary>Sends <paramref name="request"/> and returns the server's answer to it (null when it sent none).</summary>
    private CoapMessage Exchange(CoapMessage request)
    {
        _peer.ClearReceived();
        _peer.Send(request, ServerAddress);
        _scheduler.Settle(_network);
        return _peer.Received.Select(r => r.Parsed).LastOrDefault(m => m.Code.IsResponse)!;
    }

    private CoapMessage Block(int number, bool more, uint size1, bool confirmable = true, int length = 1024, string path = "/upload")
    {
        CoapMessage block = new()
        {
            Type = confirmable ? CoapMessageType.Confirmable : CoapMessageType.NonConfirmable,
            Code = CoapCode.Put,
            MessageId = _messageId++,
            Token = BitConverter.GetBytes(_messageId),
            Payload = new byte[length],
        };
        block.UriPath = path;
        block.Options.Add(CoapOptionNumber.QBlock1, new CoapBlock(number, more, 6).Encoded);
        block.Size1 = size1;
        block.RequestTag = new byte[] { 0xAB };
        return block;
    }
}
