using System.Net;
using CoapNet.Blockwise;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Blockwise;

/// <summary>
/// Block sizes, ETags and Size2 toward a peer on a path with a configured MTU (CoapPathOptions, issue 40), between our
/// client and server on the in-memory network in virtual time, over IPv4 and IPv6: every datagram either side sends fits
/// one IP packet of the path, its IP and UDP headers counted, and the body arrives whole.
/// </summary>
public sealed class PathSizingTests : IDisposable
{
    private readonly ManualTimeProvider _time = new();
    private readonly ManualTaskScheduler _scheduler = new();
    private readonly InMemoryNetwork _network;
    private readonly List<IDisposable> _owned = [];
    private IPEndPoint _server = InMemoryNetwork.EndPoint("10.0.0.2");
    private IPEndPoint _client = InMemoryNetwork.EndPoint("10.0.0.1");

    public PathSizingTests() => _network = new InMemoryNetwork(_time);

    public static TheoryData<string, string, int, int> Families => new()
    {
        // client, server, the IP and UDP headers around a datagram, the largest block of a 296-byte path with an immutable body
        { "10.0.0.1", "10.0.0.2", 28, 256 },
        { "fd00::1", "fd00::2", 48, 128 },
    };

    public void Dispose()
    {
        _scheduler.RunUntilIdle();
        for (int i = _owned.Count - 1; i >= 0; i--)
        {
            _owned[i].Dispose();
        }
    }

    [Theory]
    [MemberData(nameof(Families))]
    public async Task ABlockNeverFragmentsTheHeadersOfItsFamilyCounted(string client, string server, int framing, int block)
    {
        CoapEndpoint endpoint = Start(client, server, mtu: 296);

        CoapMessage response = await Run(endpoint.SendRequestAsync(Get("/immutable"), _server));

        response.Payload.ToArray().Should().Equal(Body(3000));
        List<Datagram> blocks = Blocks();
        blocks.Should().OnlyContain(d => d.Bytes.Length + framing <= 296, "every block fits one packet of the path");
        blocks.Should().OnlyContain(d => d.Parsed.Block2!.Value.Size == block);
        (blocks.Max(d => d.Bytes.Length + framing) + block).Should().BeGreaterThan(296, "the largest block that fits: one twice its size would not");
        Requests().Should().OnlyContain(d => d.Bytes.Length + framing <= 296);
    }

    [Fact]
    public async Task WithoutAPathTheSameBodyGoesInTheServersBlocksAndFragments()
    {
        CoapEndpoint endpoint = Start("10.0.0.1", "10.0.0.2", mtu: null);

        await Run(endpoint.SendRequestAsync(Get("/immutable"), _server));

        Blocks().Should().OnlyContain(d => d.Parsed.Block2!.Value.Size == 1024, "the defaults: BlockwiseOptions.BlockSize");
        Blocks()[0].Parsed.Size2.Should().Be(3000u, "RFC 7959 section 4: Size2 unasked with the first block");
    }

    [Fact]
    public async Task AnETagThatDoesNotFitAHalfKilobyteBlockHalvesIt()
    {
        // 268 bytes of CoAP: a 256-byte block, its 4-byte ETag (5 on the wire), Content-Format, Block2 and a 2-byte token do not fit.
        CoapEndpoint endpoint = Start("10.0.0.1", "10.0.0.2", mtu: 296);

        CoapMessage response = await Run(endpoint.SendRequestAsync(Get("/changing"), _server));

        response.Payload.ToArray().Should().Equal(Body(3000));
        List<Datagram> blocks = Blocks();
        blocks.Should().OnlyContain(d => d.Parsed.Block2!.Value.Size == 128 && d.Bytes.Length + 28 <= 296);
        blocks.Should().OnlyContain(d => d.Parsed.ETag!.Value.Length == 4, "BlockwiseOptions.ETagLength: 4 bytes by default");
    }

    [Fact]
    public async Task OnAPathWithAnMtuSize2GoesOnlyWhereTheRequestAsks()
    {
        CoapEndpoint endpoint = Start("10.0.0.1", "10.0.0.2", mtu: 296);

        await Run(endpoint.SendRequestAsync(Get("/immutable"), _server));
        Blocks().Should().OnlyContain(d => d.Parsed.Size2 == null, "the first block would be larger than the rest");

        CoapMessage asking = Get("/immutable");
        asking.Size2 = 0;
        int before = Blocks().Count;
        await Run(endpoint.SendRequestAsync(asking, _server));

        List<Datagram> asked = [.. Blocks().Skip(before)];
        asked.Should().OnlyContain(d => d.Parsed.Size2 == 3000u, "RFC 7959 section 4: a request with Size2 0 asks for it, and every block request repeats it");
        asked.Should().OnlyContain(d => d.Bytes.Length + 28 <= 296 && d.Parsed.Block2!.Value.Size == 128, "the block halves so that Size2 fits too");
    }

    [Fact]
    public async Task TheClientAsksForBlocksThatFitItsPathWithAnEarlyBlock2()
    {
        // The server knows no path: the client's early Block2 (RFC 7959 section 2.4) is what sizes the blocks.
        CoapEndpoint endpoint = Start("10.0.0.1", "10.0.0.2", mtu: null, clientMtu: 296);

        CoapMessage response = await Run(endpoint.SendRequestAsync(Get("/immutable"), _server));

        response.Payload.ToArray().Should().Equal(Body(3000));
        Requests()[0].Parsed.Block2.Should().Be(new CoapBlock(0, false, 4), "256 bytes: a response with the token, Block2 and nothing else fits 268 bytes");
        Blocks().Should().OnlyContain(d => d.Parsed.Block2!.Value.Size == 256);
    }

    [Theory]
    [MemberData(nameof(Families))]
    public async Task AnUploadIsCutIntoBlocksThatFitThePath(string client, string server, int framing, int block)
    {
        _ = block;
        CoapEndpoint endpoint = Start(client, server, mtu: 296);
        CoapMessage put = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Put, UriPath = "/upload", Payload = Body(1000) };

        CoapMessage response = await Run(endpoint.SendRequestAsync(put, _server));

        response.Code.Should().Be(CoapCode.Changed);
        response.GetPayloadString().Should().Be("1000");
        List<Datagram> requests = Requests();
        requests.Should().HaveCountGreaterThan(1, "1,000 bytes do not fit one packet of 296");
        requests.Should().OnlyContain(d => d.Bytes.Length + framing <= 296);
        requests.Max(d => d.Bytes.Length + framing).Should().BeGreaterThan(296 / 2, "the largest blocks that fit");
    }

    [Fact]
    public async Task AResponseThatFitsADatagramButNotThePathGoesInBlocks()
    {
        CoapEndpoint endpoint = Start("10.0.0.1", "10.0.0.2", mtu: 296);

        CoapMessage response = await Run(endpoint.SendRequestAsync(Get("/small"), _server));

        response.Payload.Length.Should().Be(500);
        Blocks().Should().HaveCount(2, "500 bytes fit the 1,152-byte datagram, not the path's 268");
    }

    [Theory]
    [InlineData(1)]
    [InlineData(4)]
    [InlineData(8)]
    public async Task TheServersETagIsAsLongAsConfigured(int length)
    {
        CoapEndpoint endpoint = Start("10.0.0.1", "10.0.0.2", mtu: null, etagLength: length);

        await Run(endpoint.SendRequestAsync(Get("/changing"), _server));

        Blocks().Should().OnlyContain(d => d.Parsed.ETag!.Value.Length == length);
        Blocks().Select(d => Convert.ToHexString(d.Parsed.ETag!.Value.Span)).Distinct().Should().ContainSingle();
    }

    [Fact]
    public async Task AnImmutableBodyGoesWithoutAnETagAndAHandlersOwnETagStays()
    {
        CoapEndpoint endpoint = Start("10.0.0.1", "10.0.0.2", mtu: null);

        await Run(endpoint.SendRequestAsync(Get("/immutable"), _server));
        Blocks().Should().OnlyContain(d => d.Parsed.ETag == null, "RFC 7959 section 2.4: an entirely static representation needs none");

        int before = Blocks().Count;
        await Run(endpoint.SendRequestAsync(Get("/tagged"), _server));
        Blocks().Skip(before).Select(d => Convert.ToHexString(d.Parsed.ETag!.Value.Span)).Should().OnlyContain(e => e == "07");
    }

    [Fact]
    public async Task AStreamBodysETagIsItsLengthInAsFewBytesAsItTakes()
    {
        CoapEndpoint endpoint = Start("10.0.0.1", "10.0.0.2", mtu: null);

        await Run(endpoint.SendRequestAsync(Get("/stream"), _server));

        Blocks().Select(d => Convert.ToHexString(d.Parsed.ETag!.Value.Span)).Should().OnlyContain(e => e == "0BB8", "3,000 is 0x0BB8");
    }

    [Fact]
    public async Task AWindowWithoutSize2SurfacesAnErrorForABlockOfTheBodyOnceTheBlocksBeforeItHaveCome()
    {
        // The body is not kept (MaxStoredBodies 0), so each block request runs the handler, which fails from block 5 on:
        // with the end unknown, the 5.03 for block 5 counts only once blocks 1 to 4 came, none of them the last.
        CoapEndpoint endpoint = Start("10.0.0.1", "10.0.0.2", mtu: 296, window: 4, storedBodies: 0);

        CoapMessage response = await Run(endpoint.SendRequestAsync(Get("/failing"), _server));

        response.Code.Should().Be(CoapCode.ServiceUnavailable, "the caller sees the error code, never a partial body as success");
        Blocks().Select(d => d.Parsed.Block2!.Value.Number).Should().Equal(0, 1, 2, 3, 4);
    }

    [Fact]
    public void AnETagLengthOutsideOneToEightIsRefused()
    {
        foreach (int length in (int[])[0, 9])
        {
            Action start = () => _ = new CoapServer(new CoapServerOptions { Endpoint = new CoapEndpointOptions { Blockwise = new BlockwiseOptions { ETagLength = length } } });
            start.Should().Throw<ArgumentException>().WithMessage("*ETagLength*");
        }
    }

    private CoapEndpoint Start(string client, string server, int? mtu, int? clientMtu = null, int etagLength = 4, int window = 1, int storedBodies = 1000)
    {
        _client = InMemoryNetwork.EndPoint(client.Contains(':', StringComparison.Ordinal) ? $"[{client}]:5683" : client);
        _server = InMemoryNetwork.EndPoint(server.Contains(':', StringComparison.Ordinal) ? $"[{server}]:5683" : server);
        string clientNetwork = _client.Address.AddressFamily == System.Net.Sockets.AddressFamily.InterNetworkV6 ? "fd00::/8" : "10.0.0.0/8";
        CoapServer coap = new(new CoapServerOptions
        {
            Scheduler = _scheduler,
            Endpoint = new CoapEndpointOptions
            {
                TimeProvider = _time,
                Blockwise = new BlockwiseOptions { ETagLength = etagLength, MaxStoredBodies = storedBodies },
                Paths = mtu is int m ? [new CoapPathOptions { Network = clientNetwork, Mtu = m }] : [],
            },
        }.Listen(_network.CreateTransport(_server)));
        coap.MapGet("/immutable", _ => new CoapResponse(CoapCode.Content, Body(3000), CoapContentFormat.OctetStream) { Immutable = true });
        coap.MapGet("/changing", _ => new CoapResponse(CoapCode.Content, Body(3000), CoapContentFormat.OctetStream));
        coap.MapGet("/small", _ => new CoapResponse(CoapCode.Content, Body(500), CoapContentFormat.OctetStream) { Immutable = true });
        coap.MapGet("/stream", _ => CoapResponse.Content(new MemoryStream(Body(3000)), CoapContentFormat.OctetStream));
        coap.MapGet("/tagged", _ =>
        {
            CoapResponse response = new(CoapCode.Content, Body(3000), CoapContentFormat.OctetStream) { Immutable = true };
            response.Message.ETag = new byte[] { 7 };
            return response;
        });
        coap.MapGet("/failing", request => request.Message.Block2 is { Number: >= 5 }
            ? new CoapResponse(CoapCode.ServiceUnavailable)
            : new CoapResponse(CoapCode.Content, Body(3000), CoapContentFormat.OctetStream) { Immutable = true });
        coap.MapPut("/upload", request => new CoapResponse(CoapCode.Changed, request.Payload.Length.ToString(System.Globalization.CultureInfo.InvariantCulture)));
        coap.Start();
        _owned.Add(coap);

        int? pathMtu = clientMtu ?? mtu;
        CoapEndpoint endpoint = new(_network.CreateTransport(_client), new CoapEndpointOptions
        {
            TimeProvider = _time,
            Random = new Random(5),
            TransmissionParameters = CoapTransmissionParameters.Default with { NStart = window },
            Blockwise = new BlockwiseOptions { MaxBlocksInFlight = window },
            // A 2-byte token (a counter) on the path, so that a 256-byte block with Content-Format fits an IPv4 packet of 296.
            Paths = pathMtu is int c ? [new CoapPathOptions { Network = _server.Address.ToString(), Mtu = c, TokenLength = 2 }] : [],
        });
        endpoint.Start();
        _owned.Add(endpoint);
        return endpoint;
    }

    private async Task<T> Run<T>(Task<T> pending)
    {
        for (int step = 0; step < 100_000 && !pending.IsCompleted; step++)
        {
            if (_scheduler.RunUntilIdle() + _network.DeliverAll() == 0)
            {
                _time.Advance(TimeSpan.FromMilliseconds(500));
            }
        }

        pending.IsCompleted.Should().BeTrue("the transfer ends in virtual time");
        return await pending;
    }

    private List<Datagram> Blocks() => [.. _network.SentBetween(_server, _client).Where(d => d.Parsed.Block2 is not null)];

    private List<Datagram> Requests() => [.. _network.SentBetween(_client, _server).Where(d => d.Parsed.Code.IsRequest)];

    private static CoapMessage Get(string path) => new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get, UriPath = path };

    private static byte[] Body(int size)
    {
        byte[] body = new byte[size];
        for (int i = 0; i < size; i++)
        {
            body[i] = (byte)(i % 251);
        }

        return body;
    }
}
