using CoapNet.Blockwise;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Server;

namespace CoapNet.Tests.Blockwise;

/// <summary>
/// A handler that answers with a stream (a file) instead of a byte array (RFC 7959 Block2): the server
/// reads one block at a time, never the whole body, keeps the stream for the follow-up blocks and
/// closes it when the stored body expires; a body that fits one block goes as a plain payload.
/// </summary>
public sealed class StreamBodyTests : InMemoryBlockwiseTests
{
    private readonly List<WatchedStream> _streams = [];

    public StreamBodyTests()
        : base(deliversImmediately: true)
    {
    }

    [Fact]
    public async Task AStreamBodyIsServedBlockByBlockAndClosedWhenItsStoredStateExpires()
    {
        CoapEndpoint client = Start();

        CoapMessage response = await Served(client.SendRequestAsync(Get("/file?size=20000"), ServerAddress));

        response.Payload.ToArray().Should().Equal(Body(20_000));
        WatchedStream stream = _streams.Should().ContainSingle("the handler ran once").Subject;
        stream.LargestRead.Should().BeLessThanOrEqualTo(1024, "the body is read a block at a time, never whole");
        stream.IsDisposed.Should().BeFalse("the follow-up blocks may still come within the stored body's lifetime");

        Time.Advance(TimeSpan.FromSeconds(61));
        await Served(client.SendRequestAsync(Get("/file?size=20000"), ServerAddress));

        stream.IsDisposed.Should().BeTrue("an expired stored body closes its stream");
    }

    [Fact]
    public async Task AStreamBodyThatFitsOneBlockGoesWholeAndIsClosedAtOnce()
    {
        CoapEndpoint client = Start();

        CoapMessage response = await Served(client.SendRequestAsync(Get("/file?size=300"), ServerAddress));

        response.Payload.ToArray().Should().Equal(Body(300));
        response.Block2.Should().BeNull();
        _streams.Single().IsDisposed.Should().BeTrue();
    }

    [Fact]
    public async Task AStreamBodyIsCutAtTheHandlersOwnBlockSize()
    {
        CoapEndpoint client = Start();

        CoapMessage response = await Served(client.SendRequestAsync(Get("/file?size=600&block=256"), ServerAddress));

        response.Payload.ToArray().Should().Equal(Body(600));
        Network.SentBetween(ServerAddress, ClientAddress).Select(d => d.Parsed.Payload.Length).Should().Equal(256, 256, 88);
    }

    [Fact]
    public async Task AnErrorWithAStreamBodyLongerThanABlockIsRefusedWithItsReasonNotTruncated()
    {
        CoapEndpoint client = Start();

        CoapMessage response = await Served(client.SendRequestAsync(Get("/file?size=3000&code=4.04"), ServerAddress));

        // Before: the first 1,024 bytes went out as the whole 4.04 body, without a word.
        response.Code.Should().Be(CoapCode.InternalServerError);
        response.Block2.Should().BeNull();
        response.GetPayloadString().Should().Contain("4.04").And.Contain("3000 bytes").And.Contain("byte array");
        _streams.Single().IsDisposed.Should().BeTrue("the refused body's stream is closed at once");
    }

    [Fact]
    public async Task AnErrorWithAStreamBodyThatFitsOneBlockGoesWhole()
    {
        CoapEndpoint client = Start();

        CoapMessage response = await Served(client.SendRequestAsync(Get("/file?size=1024&code=4.00"), ServerAddress));

        response.Code.Should().Be(CoapCode.BadRequest);
        response.Payload.ToArray().Should().Equal(Body(1024));
        response.Block2.Should().BeNull();
        _streams.Single().IsDisposed.Should().BeTrue();
    }

    [Fact]
    public void AStreamThatCannotSeekIsRefusedWithTheProblemNamed()
    {
        Action create = () => CoapResponse.Content(new NonSeekable(), CoapContentFormat.OctetStream);

        create.Should().Throw<ArgumentException>().Which.Message.Should().Contain("seekable");
    }

    private CoapEndpoint Start()
    {
        CoapServer server = new(new CoapServerOptions { Scheduler = Scheduler, Endpoint = new CoapEndpointOptions { TimeProvider = Time } }.Listen(Network.CreateTransport(ServerAddress)));
        server.MapGet("/file", request =>
        {
            WatchedStream stream = new(Body(int.Parse(request.GetQueryValue("size")!, System.Globalization.CultureInfo.InvariantCulture)));
            lock (_streams)
            {
                _streams.Add(stream);
            }

            CoapResponse response = CoapResponse.Content(stream, CoapContentFormat.OctetStream);
            if (request.GetQueryValue("block") is string block)
            {
                response.BlockSize = int.Parse(block, System.Globalization.CultureInfo.InvariantCulture);
            }

            if (request.GetQueryValue("code") is string code)
            {
                // A handler that answers an error with a body from a stream, as "class.detail".
                string[] parts = code.Split('.');
                response.Message.Code = new CoapCode(int.Parse(parts[0], System.Globalization.CultureInfo.InvariantCulture), int.Parse(parts[1], System.Globalization.CultureInfo.InvariantCulture));
            }

            return response;
        });
        server.Start();
        Owned.Add(server);
        CoapEndpoint client = new(Network.CreateTransport(ClientAddress), new CoapEndpointOptions { TimeProvider = Time, Random = new Random(4) });
        client.Start();
        Owned.Add(client);
        return client;
    }

    /// <summary>A memory stream that records its largest read and whether it was closed.</summary>
    private sealed class WatchedStream(byte[] body) : MemoryStream(body, writable: false)
    {
        public int LargestRead { get; private set; }

        public bool IsDisposed { get; private set; }

        public override int Read(byte[] buffer, int offset, int count) => Record(base.Read(buffer, offset, count));

        public override int Read(Span<byte> buffer) => Record(base.Read(buffer));

        protected override void Dispose(bool disposing)
        {
            IsDisposed = true;
            base.Dispose(disposing);
        }

        private int Record(int read)
        {
            LargestRead = Math.Max(LargestRead, read);
            return read;
        }
    }

    private sealed class NonSeekable : MemoryStream
    {
        public override bool CanSeek => false;
    }
}
