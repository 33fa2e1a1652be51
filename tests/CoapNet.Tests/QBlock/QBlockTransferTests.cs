using System.Net;
using System.Security.Cryptography;
using CoapNet.Blockwise;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.QBlock;
using CoapNet.Server;
using CoapNet.Tests.Blockwise;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.QBlocks;

/// <summary>
/// Q-Block1 and Q-Block2 (RFC 9177) between our server and our client on the in-memory network, in virtual time: a body
/// travels a MAX_PAYLOADS_SET at a time without a request per block, lost blocks are asked for alone and the body still
/// arrives whole, the pause between sets is kept when nobody asks to go on, a receiver gives up after
/// NON_MAX_RETRANSMIT, and a peer without Q-Block gets (or is asked with) plain Block1/Block2.
/// </summary>
public sealed class QBlockTransferTests : InMemoryBlockwiseTests
{
    private static readonly QBlockOptions On = new() { Enabled = true };
    private readonly List<byte[]> _uploaded = [];
    private int _handled;

    // Queued, pumped delivery: a burst of blocks delivered inside each other's sends would nest.
    public QBlockTransferTests()
        : base(deliversImmediately: false)
    {
    }

    [Fact]
    public async Task ALargeBodyArrivesInSetsOfMaxPayloadsWithoutARequestPerBlock()
    {
        CoapEndpoint client = Start(On, On);

        CoapMessage response = await RunInVirtualTime(client.SendRequestAsync(Get("/body?size=30000"), ServerAddress));

        response.Code.Should().Be(CoapCode.Content);
        response.Payload.ToArray().Should().Equal(Body(30000));
        _handled.Should().Be(1, "every set comes from the body the handler made once");
        List<CoapMessage> requests = ToServer();
        requests.Select(Asked).Should().Equal(["0/1/1024", "10/1/1024", "20/1/1024"], "one request for the body and a 'Continue' after each whole set (RFC 9177 section 4.4), not one per block");
        requests[0].Type.Should().Be(CoapMessageType.Confirmable, "support is not known yet, so the offer goes as CON and a refusal would come back reliably");
        requests.Skip(1).Should().OnlyContain(r => r.Type == CoapMessageType.NonConfirmable);
        List<CoapMessage> blocks = FromServer();
        blocks.Select(b => QBlock2(b).Number).Should().Equal(Enumerable.Range(0, 30));
        blocks.Skip(1).Should().OnlyContain(b => b.Type == CoapMessageType.NonConfirmable, "the blocks after the first go as further NON responses");
        blocks.Select(b => Convert.ToHexString(b.ETag!.Value.Span)).Distinct().Should().ContainSingle("every block of one body carries its ETag");
        blocks.Should().OnlyContain(b => b.Size2 == 30000u);
        blocks[..10].Select(b => Convert.ToHexString(b.Token.Span)).Should().AllBe(Convert.ToHexString(requests[0].Token.Span), "a set answers the request that asked for it");
        blocks[10..20].Select(b => Convert.ToHexString(b.Token.Span)).Should().AllBe(Convert.ToHexString(requests[1].Token.Span));
        Network.Sent.Should().OnlyContain(d => d.Message!.Block2 == null && d.Message.Block1 == null, "no RFC 7959 block option is used");
    }

    [Fact]
    public async Task LostBlocksAreAskedForAloneAndTheBodyStillArrivesWhole()
    {
        CoapEndpoint client = Start(On, On);
        HashSet<int> lost = [3, 14, 15];
        Network.Link(ServerAddress, ClientAddress).DropWhere(d => d.Message is { } m && ReadQBlock2(m) is { } b && lost.Remove(b.Number));

        CoapMessage response = await RunInVirtualTime(client.SendRequestAsync(Get("/body?size=20000"), ServerAddress));

        response.Payload.ToArray().Should().Equal(Body(20000));
        _handled.Should().Be(1);
        List<CoapMessage> requests = ToServer();
        requests.Select(Asked).Should().Equal(
            ["0/1/1024", "3/0/1024", "14/0/1024 15/0/1024"],
            "the body; block 3 alone as soon as the next set begins without it; blocks 14 and 15 NON_RECEIVE_TIMEOUT after the last block (RFC 9177 sections 4.4 and 7.2); no 'Continue' after an incomplete set");
        FromServer().Should().HaveCount(20 + 3, "every block once, and the three lost ones once more");
    }

    [Fact]
    public async Task WithoutAContinueTheNextSetFollowsAfterNonTimeoutRandom()
    {
        CoapEndpoint client = Start(On, On);

        // Every request after the first is lost: the server hears nothing after sending the first set.
        Network.Link(ClientAddress, ServerAddress).DropWhere(d => d.LinkOrdinal > 1);

        Task<CoapMessage> pending = client.SendRequestAsync(Get("/body?size=25000"), ServerAddress);
        CoapMessage response = await RunInVirtualTime(pending);

        response.Payload.ToArray().Should().Equal(Body(25000));
        List<Datagram> sent = Network.SentBetween(ServerAddress, ClientAddress).Where(d => d.Message is { } m && ReadQBlock2(m) is not null).ToList();
        sent.Select(d => QBlock2(d.Parsed).Number).Should().Equal(Enumerable.Range(0, 25));
        TimeSpan pause = sent[10].Time - sent[9].Time;
        pause.Should().BeGreaterThanOrEqualTo(TimeSpan.FromSeconds(2)).And.BeLessThanOrEqualTo(TimeSpan.FromSeconds(3.5), "RFC 9177 section 7.2: NON_TIMEOUT_RANDOM, 2-3 s, after each MAX_PAYLOADS_SET (our clock moves in 0.5 s steps)");
        (sent[20].Time - sent[19].Time).Should().Be(pause, "the same pause between every two sets of one body");
        (sent[9].Time - sent[0].Time).Should().Be(TimeSpan.Zero, "a set goes back to back");
    }

    [Fact]
    public async Task AReceiverGivesUpAfterNonMaxRetransmitRequestsForMissingBlocks()
    {
        CoapEndpoint client = Start(On, On);

        // After the first set nothing more reaches the client.
        Network.Link(ServerAddress, ClientAddress).DropWhere(d => d.LinkOrdinal > 10);

        Func<Task> download = () => RunInVirtualTime(client.SendRequestAsync(Get("/body?size=30000"), ServerAddress));

        (await download.Should().ThrowAsync<CoapTimeoutException>()).Which.Message.Should().Contain("NON_MAX_RETRANSMIT");
        ToServer().Should().HaveCount(1 + 1 + 4, "the body, the 'Continue' after set 1, then NON_MAX_RETRANSMIT (4) requests for what is missing");
    }

    [Fact]
    public async Task AnUploadGoesInSetsAnsweredWithContinueAndTheHandlerRunsOnce()
    {
        CoapEndpoint client = Start(On, On);
        byte[] body = Body(25000);

        CoapMessage response = await RunInVirtualTime(client.SendRequestAsync(Put("/upload", body), ServerAddress));

        response.Code.Should().Be(CoapCode.Changed);
        response.GetPayloadString().Should().Be(Sha256(body));
        _uploaded.Should().ContainSingle("the handler sees the joined body once").Which.Should().Equal(body);
        List<CoapMessage> blocks = ToServer();
        blocks.Select(b => QBlock1(b).Number).Should().Equal(Enumerable.Range(0, 25));
        blocks[0].Type.Should().Be(CoapMessageType.Confirmable, "block 0 asks whether the server takes Q-Block1");
        blocks.Skip(1).Should().OnlyContain(b => b.Type == CoapMessageType.NonConfirmable);
        blocks.Should().OnlyContain(b => b.Size1 == 25000u && b.RequestTag != null);
        blocks.Select(b => Convert.ToHexString(b.RequestTag!.Value.Span)).Distinct().Should().ContainSingle("RFC 9177 section 4.3: one Request-Tag for the body");
        blocks.Select(b => Convert.ToHexString(b.Token.Span)).Distinct().Should().HaveCount(25, "each block is a request of its own");
        List<CoapMessage> answers = FromServerAll().Where(m => m.Code == CoapCode.Continue).ToList();
        answers.Select(a => QBlock1(a).Number).Should().Equal([0, 9, 19], "2.31 for the probe, then after each whole set (RFC 9177 section 4.3)");
        Time.Elapsed.Should().BeLessThan(TimeSpan.FromSeconds(2), "a 2.31 lets the next set go at once, without the NON_TIMEOUT_RANDOM pause");
    }

    [Fact]
    public async Task LostUploadBlocksAreListedInA408AndSentAgain()
    {
        CoapEndpoint client = Start(On, On);
        byte[] body = Body(25000);
        HashSet<int> lost = [4, 6, 12, 24];
        Network.Link(ClientAddress, ServerAddress).DropWhere(d => d.Message is { } m && ReadQBlock1(m) is { } b && lost.Remove(b.Number));

        CoapMessage response = await RunInVirtualTime(client.SendRequestAsync(Put("/upload", body), ServerAddress));

        response.Code.Should().Be(CoapCode.Changed);
        _uploaded.Should().ContainSingle().Which.Should().Equal(body);
        List<CoapMessage> incomplete = FromServerAll().Where(m => m.Code == CoapCode.RequestEntityIncomplete).ToList();
        incomplete.Should().OnlyContain(m => m.ContentFormat == CoapContentFormat.MissingBlocksCborSeq);
        incomplete.Select(m => string.Join(',', Cbor(m.Payload.ToArray()))).Should().Equal(
            ["4,6", "12", "24"],
            "RFC 9177 sections 5 and 7.2: the lost blocks of a set as soon as the next set begins, ascending, and the lost last block NON_RECEIVE_TIMEOUT after it");
        ToServer().Select(b => QBlock1(b).Number).Should().HaveCount(25 + 4, "only the lost blocks go twice");
    }

    [Fact]
    public async Task AServerWithoutQBlockRefusesItWith402AndTheClientFallsBackToBlockwise()
    {
        CoapEndpoint client = Start(new QBlockOptions(), On);
        byte[] body = Body(5000);

        CoapMessage download = await RunInVirtualTime(client.SendRequestAsync(Get("/body?size=5000"), ServerAddress));
        CoapMessage upload = await RunInVirtualTime(client.SendRequestAsync(Put("/upload", body), ServerAddress));

        download.Payload.ToArray().Should().Equal(Body(5000));
        upload.Code.Should().Be(CoapCode.Changed);
        _uploaded.Should().ContainSingle().Which.Should().Equal(body);
        List<CoapMessage> requests = Network.SentBetween(ClientAddress, ServerAddress).Select(d => d.Parsed).Where(m => m.Code.IsRequest).ToList();
        requests[0].Options.Contains(CoapOptionNumber.QBlock2).Should().BeTrue("the first request offers Q-Block2");
        FromServerAll().First().Code.Should().Be(CoapCode.BadOption, "RFC 7252 section 5.4.1: an unrecognized critical option in a CON");
        requests.Skip(1).Should().OnlyContain(r => !r.Options.Contains(CoapOptionNumber.QBlock1) && !r.Options.Contains(CoapOptionNumber.QBlock2), "after the refusal this peer is not offered Q-Block again");
        requests.Count(r => r.Block2 is not null).Should().Be(4, "Block2 fetches blocks 1 to 4 (RFC 7959)");
        requests.Count(r => r.Block1 is not null).Should().Be(5, "and Block1 carries the upload");
    }

    [Fact]
    public async Task AClientWithoutQBlockGetsPlainBlock2FromAServerWithIt()
    {
        CoapEndpoint client = Start(On, new QBlockOptions());

        CoapMessage response = await RunInVirtualTime(client.SendRequestAsync(Get("/body?size=5000"), ServerAddress));

        response.Payload.ToArray().Should().Equal(Body(5000));
        Network.Sent.Should().OnlyContain(d => !d.Parsed.Options.Contains(CoapOptionNumber.QBlock1) && !d.Parsed.Options.Contains(CoapOptionNumber.QBlock2), "RFC 9177 section 4.1: only when both sides support it");
        FromServerAll().Count(m => m.Block2 is not null).Should().Be(5);
    }

    [Fact]
    public async Task ASmallBodyGoesInOneResponseWithoutQBlock2()
    {
        CoapEndpoint client = Start(On, On);

        CoapMessage response = await RunInVirtualTime(client.SendRequestAsync(Get("/body?size=300"), ServerAddress));

        response.Payload.ToArray().Should().Equal(Body(300));
        FromServerAll().Should().ContainSingle().Which.Options.Contains(CoapOptionNumber.QBlock2).Should().BeFalse();
    }

    private CoapEndpoint Start(QBlockOptions server, QBlockOptions client)
    {
        CoapServer coapServer = new(new CoapServerOptions { Scheduler = Scheduler, Endpoint = new CoapEndpointOptions { TimeProvider = Time, QBlock = server } }.Listen(Network.CreateTransport(ServerAddress)));
        coapServer.MapGet("/body", request =>
        {
            Interlocked.Increment(ref _handled);
            return CoapResponse.Content(Body(int.Parse(request.GetQueryValue("size")!, System.Globalization.CultureInfo.InvariantCulture)), CoapContentFormat.OctetStream);
        });
        coapServer.MapPut("/upload", request =>
        {
            _uploaded.Add(request.Payload.ToArray());
            return new CoapResponse(CoapCode.Changed, Sha256(request.Payload.ToArray()));
        });
        coapServer.Start();
        Owned.Add(coapServer);
        CoapEndpoint endpoint = new(Network.CreateTransport(ClientAddress), new CoapEndpointOptions { TimeProvider = Time, Random = new Random(3), QBlock = client });
        endpoint.Start();
        Owned.Add(endpoint);
        return endpoint;
    }

    private static CoapMessage Put(string path, byte[] body)
    {
        CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Put, Payload = body, ContentFormat = CoapContentFormat.OctetStream };
        request.UriPath = path;
        return request;
    }

    private static string Sha256(byte[] body) => Convert.ToHexString(SHA256.HashData(body));

    private static CoapBlock? ReadQBlock2(CoapMessage message) => message.Options.TryGet(CoapOptionNumber.QBlock2, out CoapOptionEntry e) ? CoapBlock.FromEncoded(e.GetUInt()) : null;

    private static CoapBlock? ReadQBlock1(CoapMessage message) => message.Options.TryGet(CoapOptionNumber.QBlock1, out CoapOptionEntry e) ? CoapBlock.FromEncoded(e.GetUInt()) : null;

    private static CoapBlock QBlock2(CoapMessage message) => ReadQBlock2(message) ?? throw new InvalidOperationException($"No Q-Block2 in {message}");

    private static CoapBlock QBlock1(CoapMessage message) => ReadQBlock1(message) ?? throw new InvalidOperationException($"No Q-Block1 in {message}");

    /// <summary>Every Q-Block2 option of a request, as "NUM/M/size", space-separated.</summary>
    private static string Asked(CoapMessage request)
    {
        List<string> asked = [];
        foreach (CoapOptionEntry option in request.Options.GetAll(CoapOptionNumber.QBlock2))
        {
            CoapBlock block = CoapBlock.FromEncoded(option.GetUInt());
            asked.Add($"{block.Number}/{(block.More ? 1 : 0)}/{block.Size}");
        }

        return string.Join(' ', asked);
    }

    /// <summary>The block numbers of a missing-blocks payload (RFC 9177 section 5), read here independently of the library.</summary>
    private static List<int> Cbor(byte[] payload)
    {
        List<int> numbers = [];
        for (int i = 0; i < payload.Length;)
        {
            int initial = payload[i++];
            int extra = initial & 0x1f;
            numbers.Add(extra < 24 ? extra : extra == 24 ? payload[i++] : (payload[i++] << 8) | payload[i++]);
        }

        return numbers;
    }

    private List<CoapMessage> ToServer() => Network.SentBetween(ClientAddress, ServerAddress).Select(d => d.Parsed).Where(m => m.Code.IsRequest).ToList();

    private List<CoapMessage> FromServer() => Network.SentBetween(ServerAddress, ClientAddress).Select(d => d.Parsed).Where(m => ReadQBlock2(m) is not null).ToList();

    private List<CoapMessage> FromServerAll() => Network.SentBetween(ServerAddress, ClientAddress).Select(d => d.Parsed).Where(m => m.Code.IsResponse).ToList();
}
