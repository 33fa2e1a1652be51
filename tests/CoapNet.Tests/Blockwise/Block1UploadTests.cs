using System.Net;
using System.Security.Cryptography;
using CoapNet.Blockwise;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Blockwise;

/// <summary>
/// RFC 7959 Block1 on the in-memory network, in virtual time: our client sends a body too large for
/// one datagram in blocks and our server joins them before the handler sees one request; late
/// negotiation, 4.13 with Size1, 4.08 for a gap, the bounds on what uploads may hold and their
/// lifetime, an upload whose answer is itself block-wise, and transfers over a lossy network.
/// </summary>
public sealed class Block1UploadTests : InMemoryBlockwiseTests
{
    private CoapTransmissionParameters _parameters = CoapTransmissionParameters.Default;
    private readonly List<byte[]> _received = [];
    private readonly List<CoapMessage> _requests = [];
    private ushort _messageId = 0x1000;

    // Queued, pumped delivery: a thousand blocks delivered inside each other's sends would nest as deep.
    public Block1UploadTests()
        : base(deliversImmediately: false)
    {
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(4)]
    [InlineData(5)]
    [InlineData(6)]
    public async Task AnUploadAtEveryBlockSizeArrivesWholeAndTheHandlerRunsOnce(int exponent)
    {
        int size = 16 << exponent;
        CoapEndpoint client = StartServerAndClient(new BlockwiseOptions(), new BlockwiseOptions { BlockSize = size });
        byte[] body = Body(3000);

        CoapMessage response = await RunInVirtualTime(client.SendRequestAsync(Put("/upload", body), ServerAddress));

        response.Code.Should().Be(CoapCode.Changed);
        response.GetPayloadString().Should().Be(Sha256(body), "the handler hashed the body it saw");
        response.Block1.Should().BeNull("the caller gets the answer to its request, not to a block");
        _received.Should().ContainSingle("the handler runs once, with the whole body").Which.Should().Equal(body);
        _requests.Single().Block1.Should().BeNull("the handler sees one request, not a block");
        List<CoapMessage> blocks = ToServer();
        int count = (3000 + size - 1) / size;
        blocks.Select(b => b.Block1!.Value.Number).Should().Equal(Enumerable.Range(0, count));
        blocks.Should().OnlyContain(b => b.Block1!.Value.SizeExponent == exponent);
        blocks.Take(count - 1).Should().OnlyContain(b => b.Payload.Length == size && b.Block1!.Value.More);
        blocks[^1].Block1!.Value.More.Should().BeFalse();
        blocks[0].Size1.Should().Be(3000u, "RFC 7959 section 4: Size1 with the first block");
        blocks.Skip(1).Should().OnlyContain(b => b.Size1 == null);
        List<CoapMessage> answers = FromServer(m => m.Block1 is not null);
        answers.Take(count - 1).Should().OnlyContain(a => a.Code == CoapCode.Continue && a.Block1!.Value.More);
        answers[^1].Code.Should().Be(CoapCode.Changed);
        answers[^1].Block1.Should().Be(new CoapBlock(count - 1, false, exponent), "the final response echoes Block1 with M=0 (section 2.3)");
    }

    [Fact]
    public async Task AServerWithSmallerBlocksLowersTheSizeAndTheClientRenumbersFromTheNextByte()
    {
        CoapEndpoint client = StartServerAndClient(new BlockwiseOptions { BlockSize = 64 }, new BlockwiseOptions());
        byte[] body = Body(2000);

        CoapMessage response = await RunInVirtualTime(client.SendRequestAsync(Put("/upload", body), ServerAddress));

        response.Code.Should().Be(CoapCode.Changed);
        _received.Should().ContainSingle().Which.Should().Equal(body);
        List<CoapMessage> blocks = ToServer();
        blocks[0].Block1.Should().Be(new CoapBlock(0, true, 6), "the client starts with its own 1024-byte blocks");
        FromServer(m => m.Block1 is not null)[0].Block1.Should().Be(new CoapBlock(0, true, 2), "the server acknowledges block 0 and asks for 64-byte blocks (section 2.5)");
        blocks[1].Block1.Should().Be(new CoapBlock(16, true, 2), "byte 1024 is block 16 of 64 bytes");
        blocks.Skip(1).Should().OnlyContain(b => b.Block1!.Value.SizeExponent == 2 && b.Payload.Length <= 64);
        blocks.Should().HaveCount(1 + ((2000 - 1024 + 63) / 64));
    }

    [Fact]
    public async Task ASize1OverTheLimitIsAnswered413WithSize1AndTheClientSendsNoMoreBlocks()
    {
        CoapEndpoint client = StartServerAndClient(new BlockwiseOptions { MaxUploadSize = 4000 }, new BlockwiseOptions());

        CoapMessage response = await RunInVirtualTime(client.SendRequestAsync(Put("/upload", Body(5000)), ServerAddress));

        response.Code.Should().Be(CoapCode.RequestEntityTooLarge, "the caller sees the code that ended the upload");
        response.Size1.Should().Be(4000u, "RFC 7959 section 2.9.3: Size1 tells the largest body the server takes");
        ToServer().Should().ContainSingle("the client stops at once on 4.13").Which.Block1!.Value.Number.Should().Be(0);
        _received.Should().BeEmpty();
    }

    [Fact]
    public async Task A413NamingASmallerBlockSizeRestartsTheUploadOnceWithIt()
    {
        CoapEndpoint client = StartClientAgainstPeer(out TestPeer server);
        server.OnReceived = (peer, datagram) =>
        {
            // A server that takes 256-byte blocks at most and says so in the 4.13 (RFC 7959 section 2.9.3).
            CoapMessage request = datagram.Parsed;
            CoapBlock block = request.Block1!.Value;
            CoapMessage answer = new() { Type = CoapMessageType.Acknowledgement, MessageId = request.MessageId, Token = request.Token };
            (answer.Code, answer.Block1) = block.SizeExponent > 4 ? (CoapCode.RequestEntityTooLarge, new CoapBlock(0, false, 4))
                : block.More ? (CoapCode.Continue, new CoapBlock(block.Number, true, 4))
                : (CoapCode.Changed, block);
            peer.Send(answer, datagram.From);
        };

        CoapMessage response = await RunInVirtualTime(client.SendRequestAsync(Put("/x", Body(2000)), ServerAddress));

        response.Code.Should().Be(CoapCode.Changed);
        List<CoapMessage> blocks = ToServer();
        blocks.Select(b => b.Block1!.Value).Should().Equal(
            new[] { new CoapBlock(0, true, 6) }.Concat(Enumerable.Range(0, 8).Select(n => new CoapBlock(n, n < 7, 4))));
        blocks[1].Size1.Should().Be(2000u, "the restart announces the body again");
        blocks.Skip(1).SelectMany(b => b.Payload.ToArray()).Should().Equal(Body(2000));
    }

    [Fact]
    public void AMissingBlockIsAnswered408AndTheUploadIsDropped()
    {
        (CoapEndpoint server, _) = StartRawServer(new BlockwiseOptions());
        using TestPeer peer = new(Network, "10.0.0.7");

        Answer(peer, Block(0, more: true, Body(64))).Code.Should().Be(CoapCode.Continue);
        CoapMessage gap = Answer(peer, Block(2, more: true, Body(64)));
        CoapMessage after = Answer(peer, Block(1, more: false, Body(10)));

        gap.Code.Should().Be(CoapCode.RequestEntityIncomplete);
        gap.GetPayloadString().Should().Contain("missing or out of order");
        after.Code.Should().Be(CoapCode.RequestEntityIncomplete, "the upload was dropped at the gap");
        server.Blockwise.ReassemblyCount.Should().Be(0);
        server.Blockwise.ReassemblyBytes.Should().Be(0);
        _received.Should().BeEmpty();
    }

    [Fact]
    public void AContentFormatChangeMidUploadIsAnswered408()
    {
        (CoapEndpoint server, _) = StartRawServer(new BlockwiseOptions());
        using TestPeer peer = new(Network, "10.0.0.7");
        CoapMessage second = Block(1, more: false, Body(10));
        second.ContentFormat = CoapContentFormat.Json;

        Answer(peer, Block(0, more: true, Body(64))).Code.Should().Be(CoapCode.Continue);
        CoapMessage changed = Answer(peer, second);

        changed.Code.Should().Be(CoapCode.RequestEntityIncomplete);
        changed.GetPayloadString().Should().Contain("Content-Format changed");
        server.Blockwise.ReassemblyCount.Should().Be(0);
    }

    [Fact]
    public void ABlockSentAgainUnderANewMessageIdIsAnsweredContinueAgainAndJoinedOnce()
    {
        StartRawServer(new BlockwiseOptions());
        using TestPeer peer = new(Network, "10.0.0.7");
        byte[] body = Body(150);

        Answer(peer, Block(0, more: true, body.AsSpan(0, 64).ToArray())).Code.Should().Be(CoapCode.Continue);
        Answer(peer, Block(1, more: true, body.AsSpan(64, 64).ToArray())).Code.Should().Be(CoapCode.Continue);
        CoapMessage again = Answer(peer, Block(1, more: true, body.AsSpan(64, 64).ToArray()));
        CoapMessage last = Answer(peer, Block(2, more: false, body.AsSpan(128).ToArray()));

        again.Code.Should().Be(CoapCode.Continue, "a repeated block is not a gap");
        again.Block1.Should().Be(new CoapBlock(1, true, 2));
        last.Code.Should().Be(CoapCode.Changed);
        last.Block1.Should().Be(new CoapBlock(2, false, 2));
        _received.Should().ContainSingle().Which.Should().Equal(body);
    }

    [Fact]
    public void AnAbandonedUploadIsFreedAfterItsLifetime()
    {
        (CoapEndpoint server, _) = StartRawServer(new BlockwiseOptions { ReassemblyLifetime = TimeSpan.FromSeconds(30) });
        using TestPeer abandoning = new(Network, "10.0.0.7");
        using TestPeer later = new(Network, "10.0.0.8");

        Answer(abandoning, Block(0, more: true, Body(64), size1: 1000)).Code.Should().Be(CoapCode.Continue);
        Time.Advance(TimeSpan.FromSeconds(29));
        Answer(later, Block(0, more: true, Body(64), size1: 500)).Code.Should().Be(CoapCode.Continue);
        server.Blockwise.ReassemblyCount.Should().Be(2, "29 s is within the lifetime");
        server.Blockwise.ReassemblyBytes.Should().Be(1500, "each upload counts the Size1 it announced");

        Time.Advance(TimeSpan.FromSeconds(2));
        Answer(later, Block(1, more: true, Body(64))).Code.Should().Be(CoapCode.Continue, "the live upload goes on");

        server.Blockwise.ReassemblyCount.Should().Be(1, "the abandoned upload is freed 30 s after its latest block");
        server.Blockwise.ReassemblyBytes.Should().Be(500);
        Answer(abandoning, Block(1, more: false, Body(10))).Code.Should().Be(CoapCode.RequestEntityIncomplete, "its state is gone");
    }

    [Fact]
    public void TheTotalBoundHoldsWhenManyPeersStartUploadsAtOnce()
    {
        (CoapEndpoint server, _) = StartRawServer(new BlockwiseOptions { MaxReassemblyBytes = 10_000 });
        List<TestPeer> peers = [];
        for (int i = 0; i < 20; i++)
        {
            TestPeer peer = new(Network, $"10.0.1.{i + 1}");
            Owned.Add(peer);
            peers.Add(peer);
        }

        List<CoapMessage> answers = peers.Select(p => Answer(p, Block(0, more: true, Body(64), size1: 2000))).ToList();

        answers.Count(a => a.Code == CoapCode.Continue).Should().Be(5, "five uploads of 2000 bytes fill 10,000");
        answers.Where(a => a.Code != CoapCode.Continue).Should().HaveCount(15).And.OnlyContain(a => a.Code == CoapCode.ServiceUnavailable && a.MaxAge == 60u);
        server.Blockwise.ReassemblyBytes.Should().Be(10_000);
        server.Blockwise.ReassemblyCount.Should().Be(5);
        using TestPeer huge = new(Network, "10.0.2.1");
        CoapMessage tooLarge = Answer(huge, Block(0, more: true, Body(64), size1: 20_000));
        tooLarge.Code.Should().Be(CoapCode.RequestEntityTooLarge, "no wait would make room for a body larger than the total");
        tooLarge.Size1.Should().Be(10_000u);
        server.Blockwise.ReassemblyBytes.Should().Be(10_000);
    }

    [Fact]
    public void TheCountBoundHoldsAndAnUploadGrowingPastTheTotalIsRefused()
    {
        (CoapEndpoint server, _) = StartRawServer(new BlockwiseOptions { MaxReassemblies = 2, MaxReassemblyBytes = 150 });
        using TestPeer first = new(Network, "10.0.0.7");
        using TestPeer second = new(Network, "10.0.0.8");
        using TestPeer third = new(Network, "10.0.0.9");

        Answer(first, Block(0, more: true, Body(64))).Code.Should().Be(CoapCode.Continue);
        Answer(second, Block(0, more: true, Body(64))).Code.Should().Be(CoapCode.Continue);
        Answer(third, Block(0, more: true, Body(64))).Code.Should().Be(CoapCode.ServiceUnavailable, "two uploads at most");
        CoapMessage growing = Answer(first, Block(1, more: true, Body(64)));

        growing.Code.Should().Be(CoapCode.ServiceUnavailable, "64 + 128 would pass 150 bytes in all");
        server.Blockwise.ReassemblyCount.Should().Be(1, "the refused upload is dropped, freeing its bytes");
        server.Blockwise.ReassemblyBytes.Should().Be(64);
    }

    [Fact]
    public async Task AnUploadWhoseAnswerIsLargeGetsItInBlock2Blocks()
    {
        CoapEndpoint client = StartServerAndClient(new BlockwiseOptions(), new BlockwiseOptions());
        byte[] body = Body(5000);

        CoapMessage response = await RunInVirtualTime(client.SendRequestAsync(Put("/reverse", body), ServerAddress));

        response.Code.Should().Be(CoapCode.Changed);
        response.Payload.ToArray().Should().Equal(Enumerable.Reverse(body), "the whole answer, joined from Block2 blocks");
        _received.Should().ContainSingle().Which.Should().Equal(body);
        CoapMessage final = FromServer(m => m.Code == CoapCode.Changed)[0];
        final.Block1.Should().Be(new CoapBlock(4, false, 6), "the answer to the last block echoes Block1 (section 3.3)");
        final.Block2.Should().Be(new CoapBlock(0, true, 6), "and starts the Block2 transfer");
        List<CoapMessage> downloads = Network.SentBetween(ClientAddress, ServerAddress).Select(d => d.Parsed).Where(m => m.Block2 is not null).ToList();
        downloads.Select(m => m.Block2!.Value.Number).Should().Equal(1, 2, 3, 4);
        downloads.Should().OnlyContain(m => m.Payload.IsEmpty && m.Block1 == null, "Block2 requests after an upload carry no body (section 3.3)");
    }

    [Fact]
    public async Task WithoutReassemblyTheHandlerSeesEveryBlockAndItsAnswersEchoBlock1()
    {
        CoapEndpoint client = StartServerAndClient(new BlockwiseOptions { ReassembleUploads = false }, new BlockwiseOptions());
        byte[] body = Body(2500);

        CoapMessage response = await RunInVirtualTime(client.SendRequestAsync(Put("/upload", body), ServerAddress));

        response.Code.Should().Be(CoapCode.Changed);
        _requests.Select(r => r.Block1!.Value.Number).Should().Equal(0, 1, 2);
        _received.SelectMany(b => b).Should().Equal(body, "the blocks in order make the body");
        FromServer(m => m.Block1 is not null).Select(m => m.Block1!.Value).Should().Equal(new CoapBlock(0, true, 6), new CoapBlock(1, true, 6), new CoapBlock(2, false, 6));
    }

    [Fact]
    public async Task A231ToARequestNotSentInBlocksFailsTheRequest()
    {
        CoapEndpoint client = StartClientAgainstPeer(out TestPeer server);
        server.OnReceived = (peer, datagram) =>
        {
            CoapMessage odd = new() { Type = CoapMessageType.Acknowledgement, Code = CoapCode.Continue, MessageId = datagram.Parsed.MessageId, Token = datagram.Parsed.Token };
            odd.Block1 = new CoapBlock(0, true, 6);
            peer.Send(odd, datagram.From);
        };

        Func<Task> put = () => RunInVirtualTime(client.SendRequestAsync(Put("/x", Body(10)), ServerAddress));

        (await put.Should().ThrowAsync<CoapException>()).Which.Message.Should().Contain("was not sent in blocks");
    }

    [Fact]
    public async Task AMegabyteDownloadAndUploadCompleteWithIdenticalBytesUnderTenPercentLossEachWay()
    {
        // RFC 7252's own limit, not block-wise's: with MAX_RETRANSMIT 4 a round trip fails after five
        // losses in a row (0.19^5 per exchange), which some of ~2,100 exchanges would hit for many seeds.
        _parameters = CoapTransmissionParameters.Default with { MaxRetransmit = 8 };
        Random loss = new(20260522);
        int dropped = 0;
        Network.Link(ClientAddress, ServerAddress).DropWhere(_ => Drop(loss, ref dropped));
        Network.Link(ServerAddress, ClientAddress).DropWhere(_ => Drop(loss, ref dropped));
        CoapEndpoint client = StartServerAndClient(new BlockwiseOptions(), new BlockwiseOptions());
        byte[] body = Body(1 << 20);
        body[12345] ^= 0xFF;

        CoapMessage download = await RunInVirtualTime(client.SendRequestAsync(Get("/large?size=1048576"), ServerAddress));
        CoapMessage upload = await RunInVirtualTime(client.SendRequestAsync(Put("/upload", body), ServerAddress));

        download.Code.Should().Be(CoapCode.Content, download.GetPayloadString());
        download.Payload.ToArray().Should().Equal(Body(1 << 20));
        upload.Code.Should().Be(CoapCode.Changed);
        upload.GetPayloadString().Should().Be(Sha256(body));
        _received.Should().ContainSingle().Which.Should().Equal(body);
        dropped.Should().BeGreaterThan(200, "about one datagram in ten was lost over some 4,100 sent");
    }

    private static bool Drop(Random loss, ref int dropped)
    {
        bool drop = loss.NextDouble() < 0.10;
        if (drop)
        {
            dropped++;
        }

        return drop;
    }

    private CoapEndpoint StartServerAndClient(BlockwiseOptions server, BlockwiseOptions client)
    {
        CoapServer coapServer = new(new CoapServerOptions { Scheduler = Scheduler, Endpoint = new CoapEndpointOptions { TimeProvider = Time, Blockwise = server, TransmissionParameters = _parameters } }.Listen(Network.CreateTransport(ServerAddress)));
        coapServer.MapPut("/upload", request =>
        {
            Record(request.Message);
            return new CoapResponse(CoapCode.Changed, Sha256(request.Payload.ToArray()));
        });
        coapServer.MapPut("/reverse", request =>
        {
            Record(request.Message);
            byte[] reversed = request.Payload.ToArray();
            Array.Reverse(reversed);
            return new CoapResponse(CoapCode.Changed, reversed, CoapContentFormat.OctetStream);
        });
        coapServer.MapGet("/large", request => CoapResponse.Content(Body(int.Parse(request.GetQueryValue("size")!, System.Globalization.CultureInfo.InvariantCulture)), CoapContentFormat.OctetStream));
        coapServer.Start();
        Owned.Add(coapServer);
        CoapEndpoint endpoint = new(Network.CreateTransport(ClientAddress), new CoapEndpointOptions { TimeProvider = Time, Random = new Random(3), Blockwise = client, TransmissionParameters = _parameters });
        endpoint.Start();
        Owned.Add(endpoint);
        return endpoint;
    }

    /// <summary>Our client, and a scripted peer in the server's place.</summary>
    private CoapEndpoint StartClientAgainstPeer(out TestPeer server)
    {
        CoapEndpoint client = new(Network.CreateTransport(ClientAddress), new CoapEndpointOptions { TimeProvider = Time, Random = new Random(3) });
        client.Start();
        Owned.Add(client);
        server = new TestPeer(Network, "10.0.0.2");
        Owned.Add(server);
        return client;
    }

    /// <summary>A bare endpoint as the server, its handler synchronous, so raw blocks get their answers at once.</summary>
    private (CoapEndpoint Server, IPEndPoint Address) StartRawServer(BlockwiseOptions blockwise)
    {
        CoapEndpoint server = new(Network.CreateTransport(ServerAddress), new CoapEndpointOptions { TimeProvider = Time, Blockwise = blockwise });
        server.RequestHandler = exchange =>
        {
            Record(exchange.Request);
            exchange.Respond(new CoapMessage { Code = CoapCode.Changed });
        };
        server.Start();
        Owned.Add(server);
        return (server, ServerAddress);
    }

    private void Record(CoapMessage request)
    {
        lock (_received)
        {
            _requests.Add(request);
            _received.Add(request.Payload.ToArray());
        }
    }

    private CoapMessage Block(int number, bool more, byte[] payload, uint? size1 = null)
    {
        CoapMessage block = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Put, MessageId = _messageId++, Token = new byte[] { 1, 2, (byte)number } };
        block.UriPath = "/upload";
        block.Block1 = new CoapBlock(number, more, 2);
        block.Size1 = size1;
        block.Payload = payload;
        return block;
    }

    private CoapMessage Answer(TestPeer peer, CoapMessage request)
    {
        peer.ClearReceived();
        peer.Send(request, ServerAddress);
        Network.DeliverAll();
        return peer.Received.Should().ContainSingle("the stage answers a block at once").Subject.Parsed;
    }

    private static CoapMessage Put(string path, byte[] body)
    {
        CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Put, Payload = body };
        request.UriPath = path;
        request.ContentFormat = CoapContentFormat.OctetStream;
        return request;
    }

    private static string Sha256(byte[] body) => Convert.ToHexString(SHA256.HashData(body)).ToLowerInvariant();

    private List<CoapMessage> ToServer() => Network.SentBetween(ClientAddress, ServerAddress).Where(d => !d.Dropped).Select(d => d.Parsed).Where(m => m.Block1 is not null).ToList();

    private List<CoapMessage> FromServer(Func<CoapMessage, bool> which) => Network.SentBetween(ServerAddress, ClientAddress).Select(d => d.Parsed).Where(which).ToList();
}
