using CoapNet.Blockwise;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Blockwise;

/// <summary>
/// RFC 7959 Block2 between our server and our client on the in-memory network: a body larger than one
/// datagram goes out block by block and arrives whole, the handler runs once, the client's early
/// block size is honoured, and a representation that changes mid-transfer is reported.
/// </summary>
public sealed class Block2DownloadTests : InMemoryBlockwiseTests
{
    private int _handled;

    public Block2DownloadTests()
        : base(deliversImmediately: true)
    {
    }

    [Fact]
    public async Task ABodyLargerThanOneDatagramArrivesWholeAndTheHandlerRunsOnce()
    {
        CoapEndpoint client = Start(new BlockwiseOptions());

        CoapMessage response = await Served(client.SendRequestAsync(Get("/body?size=5000"), ServerAddress));

        response.Payload.ToArray().Should().Equal(Body(5000));
        response.Block2.Should().BeNull("the caller gets the body, not a block");
        _handled.Should().Be(1, "later blocks come from the stored body");
        List<CoapMessage> blocks = FromServer();
        blocks.Select(b => b.Block2!.Value.Number).Should().Equal(0, 1, 2, 3, 4);
        blocks.Should().OnlyContain(b => b.Payload.Length <= 1024 && b.ETag != null);
        blocks.Select(b => Convert.ToHexString(b.ETag!.Value.Span)).Distinct().Should().ContainSingle();
        blocks[0].Size2.Should().Be(5000u, "RFC 7959 section 4: Size2 with the first block");
        blocks[^1].Block2!.Value.More.Should().BeFalse();
    }

    [Fact]
    public async Task AClientAskingEarlyForSmallerBlocksGetsThem()
    {
        CoapEndpoint client = Start(new BlockwiseOptions());
        CoapMessage request = Get("/body?size=300");
        request.Block2 = new CoapBlock(0, false, 2);

        CoapMessage response = await Served(client.SendRequestAsync(request, ServerAddress));

        response.Payload.ToArray().Should().Equal(Body(300));
        FromServer().Select(b => b.Payload.Length).Should().Equal(64, 64, 64, 64, 44);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(4)]
    [InlineData(5)]
    [InlineData(6)]
    public async Task ADownloadAtEveryBlockSizeArrivesWholeInBlocksOfThatSize(int exponent)
    {
        CoapEndpoint client = Start(new BlockwiseOptions());
        CoapMessage request = Get("/body?size=1500");
        request.Block2 = new CoapBlock(0, false, exponent);

        CoapMessage response = await Served(client.SendRequestAsync(request, ServerAddress));

        int size = 16 << exponent;
        response.Payload.ToArray().Should().Equal(Body(1500));
        List<CoapMessage> blocks = FromServer();
        blocks.Select(b => b.Block2!.Value.Number).Should().Equal(Enumerable.Range(0, (1500 + size - 1) / size));
        blocks.Should().OnlyContain(b => b.Block2!.Value.SizeExponent == exponent);
        blocks.SkipLast(1).Should().OnlyContain(b => b.Payload.Length == size);
        _handled.Should().Be(1);
    }

    [Fact]
    public async Task AHandlerChoosesItsOwnBlockSize()
    {
        CoapEndpoint client = Start(new BlockwiseOptions());

        CoapMessage response = await Served(client.SendRequestAsync(Get("/small-blocks"), ServerAddress));

        response.Payload.ToArray().Should().Equal(Body(600));
        FromServer().Select(b => b.Payload.Length).Should().Equal(256, 256, 88);
        Action invalid = () => _ = new CoapResponse(CoapCode.Content) { BlockSize = 100 };
        invalid.Should().Throw<ArgumentException>().Which.Message.Should().Contain("power of two");
    }

    [Fact]
    public async Task ARepresentationThatChangesMidTransferIsReported()
    {
        // Nothing stored: each block runs the handler again, and the body changes in between.
        CoapEndpoint client = Start(new BlockwiseOptions { MaxStoredBodies = 0 });

        Func<Task> download = () => Served(client.SendRequestAsync(Get("/changing"), ServerAddress));

        (await download.Should().ThrowAsync<CoapException>()).Which.Message.Should().Contain("changed during the block-wise transfer");
    }

    private CoapEndpoint Start(BlockwiseOptions blockwise)
    {
        CoapServer server = new(new CoapServerOptions { Scheduler = Scheduler, Endpoint = new CoapEndpointOptions { TimeProvider = Time, Blockwise = blockwise } }.Listen(Network.CreateTransport(ServerAddress)));
        server.MapGet("/body", request =>
        {
            Interlocked.Increment(ref _handled);
            return CoapResponse.Content(Body(int.Parse(request.GetQueryValue("size")!, System.Globalization.CultureInfo.InvariantCulture)), CoapContentFormat.OctetStream);
        });
        server.MapGet("/small-blocks", _ => new CoapResponse(CoapCode.Content, Body(600), CoapContentFormat.OctetStream) { BlockSize = 256 });
        server.MapGet("/changing", request =>
        {
            int version = Interlocked.Increment(ref _handled);
            byte[] body = Body(3000);
            body[0] = (byte)version;
            return CoapResponse.Content(body, CoapContentFormat.OctetStream);
        });
        server.Start();
        Owned.Add(server);
        CoapEndpoint client = new(Network.CreateTransport(ClientAddress), new CoapEndpointOptions { TimeProvider = Time, Random = new Random(3) });
        client.Start();
        Owned.Add(client);
        return client;
    }

    private List<CoapMessage> FromServer() => Network.SentBetween(ServerAddress, ClientAddress).Select(d => d.Parsed).Where(m => m.Block2 is not null).ToList();
}
