using System.Net;
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
public sealed class Block2DownloadTests : IDisposable
{
    private static readonly IPEndPoint ServerAddress = InMemoryNetwork.EndPoint("10.0.0.2");
    private static readonly IPEndPoint ClientAddress = InMemoryNetwork.EndPoint("10.0.0.1");
    private readonly ManualTimeProvider _time = new();
    private readonly InMemoryNetwork _network;
    private readonly List<IDisposable> _owned = [];
    private int _handled;

    public Block2DownloadTests() => _network = new InMemoryNetwork(_time) { DeliversImmediately = true };

    public void Dispose()
    {
        for (int i = _owned.Count - 1; i >= 0; i--)
        {
            _owned[i].Dispose();
        }
    }

    [Fact]
    public async Task ABodyLargerThanOneDatagramArrivesWholeAndTheHandlerRunsOnce()
    {
        CoapEndpoint client = Start(new BlockwiseOptions());

        CoapMessage response = await client.SendRequestAsync(Get("/body?size=5000"), ServerAddress).WaitAsync(TimeSpan.FromSeconds(30));

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

        CoapMessage response = await client.SendRequestAsync(request, ServerAddress).WaitAsync(TimeSpan.FromSeconds(30));

        response.Payload.ToArray().Should().Equal(Body(300));
        FromServer().Select(b => b.Payload.Length).Should().Equal(64, 64, 64, 64, 44);
    }

    [Fact]
    public async Task ARepresentationThatChangesMidTransferIsReported()
    {
        // Nothing stored: each block runs the handler again, and the body changes in between.
        CoapEndpoint client = Start(new BlockwiseOptions { MaxStoredBodies = 0 });

        Func<Task> download = () => client.SendRequestAsync(Get("/changing"), ServerAddress).WaitAsync(TimeSpan.FromSeconds(30));

        (await download.Should().ThrowAsync<CoapException>()).Which.Message.Should().Contain("changed during the block-wise transfer");
    }

    private static CoapMessage Get(string pathAndQuery)
    {
        int query = pathAndQuery.IndexOf('?', StringComparison.Ordinal);
        CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get };
        request.UriPath = query < 0 ? pathAndQuery : pathAndQuery[..query];
        if (query >= 0)
        {
            request.UriQuery = pathAndQuery[(query + 1)..];
        }

        return request;
    }

    private static byte[] Body(int size)
    {
        byte[] body = new byte[size];
        for (int i = 0; i < size; i++)
        {
            body[i] = (byte)(i % 251);
        }

        return body;
    }

    private CoapEndpoint Start(BlockwiseOptions blockwise)
    {
        CoapServer server = new(new CoapServerOptions { DatagramTransports = [_network.CreateTransport(ServerAddress)], TimeProvider = _time, Blockwise = blockwise });
        server.MapGet("/body", request =>
        {
            Interlocked.Increment(ref _handled);
            return CoapResponse.Content(Body(int.Parse(request.GetQueryValue("size")!, System.Globalization.CultureInfo.InvariantCulture)), CoapContentFormat.OctetStream);
        });
        server.MapGet("/changing", request =>
        {
            int version = Interlocked.Increment(ref _handled);
            byte[] body = Body(3000);
            body[0] = (byte)version;
            return CoapResponse.Content(body, CoapContentFormat.OctetStream);
        });
        server.Start();
        _owned.Add(server);
        CoapEndpoint client = new(_network.CreateTransport(ClientAddress), new CoapEndpointOptions { TimeProvider = _time, Random = new Random(3) });
        client.Start();
        _owned.Add(client);
        return client;
    }

    private List<CoapMessage> FromServer() => _network.SentBetween(ServerAddress, ClientAddress).Select(d => d.Parsed).Where(m => m.Block2 is not null).ToList();
}
