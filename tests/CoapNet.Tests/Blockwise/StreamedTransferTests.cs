using CoapNet.Blockwise;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Server;
using CoapNet.Tests.Serialization;

namespace CoapNet.Tests.Blockwise;

/// <summary>
/// The client's streamed and progress-reporting forms of block-wise transfer (RFC 7959), in virtual
/// time on the in-memory network: a download written to a stream block by block, an upload read from a
/// stream block by block (Size1 when the stream knows its length), and the progress both report.
/// </summary>
public sealed class StreamedTransferTests : InMemoryBlockwiseTests
{
    private readonly List<byte[]> _uploads = [];
    private readonly List<CoapMessage> _blocksToServer = [];

    public StreamedTransferTests()
        : base(deliversImmediately: true)
    {
    }

    private static Uri Large(int size) => new($"coap://10.0.0.2/large?size={size}");

    private static Uri Upload => new("coap://10.0.0.2/upload");

    [Fact]
    public async Task ADownloadIsWrittenToTheStreamBlockByBlockWithProgressUpToSize2()
    {
        CoapClient client = Start();
        using MemoryStream destination = new();
        List<CoapTransferProgress> progress = [];

        CoapResponse response = await client.DownloadAsync(Large(20_000), destination, new Recorder(progress)).WaitAsync(TimeSpan.FromSeconds(30));

        response.Code.Should().Be(CoapCode.Content);
        response.Payload.Length.Should().Be(0, "the body went to the stream");
        destination.ToArray().Should().Equal(Body(20_000));
        progress.Should().HaveCount(20, "one report per 1024-byte block");
        progress.Select(p => p.BytesTransferred).Should().BeInAscendingOrder().And.EndWith(20_000);
        progress.Should().OnlyContain(p => p.TotalBytes == 20_000, "Size2 with the first block gives the total (RFC 7959 section 4)");
    }

    [Fact]
    public void ASynchronousDownloadOfASmallBodyWritesItToo()
    {
        CoapClient client = Start();
        OneByteStream destination = new();

        CoapResponse response = client.Download(Large(300), destination);

        response.Code.Should().Be(CoapCode.Content);
        destination.Written.Should().Equal(Body(300));
    }

    [Fact]
    public async Task AnErrorResponseIsReturnedAndNothingIsWritten()
    {
        CoapClient client = Start();
        using MemoryStream destination = new();

        CoapResponse response = await client.DownloadAsync(new Uri("coap://10.0.0.2/missing"), destination).WaitAsync(TimeSpan.FromSeconds(30));

        response.Code.Should().Be(CoapCode.NotFound);
        destination.Length.Should().Be(0);
    }

    [Fact]
    public async Task AnUploadFromANonSeekableStreamArrivesWholeWithoutSize1()
    {
        CoapClient client = Start();
        List<CoapTransferProgress> progress = [];

        CoapResponse response = await client.UploadAsync(Upload, new OneByteStream(Body(10_000)), CoapContentFormat.OctetStream, new Recorder(progress)).WaitAsync(TimeSpan.FromSeconds(30));

        response.Code.Should().Be(CoapCode.Changed);
        _uploads.Should().ContainSingle().Which.Should().Equal(Body(10_000));
        _blocksToServer.Should().HaveCount(10);
        _blocksToServer[0].Size1.Should().BeNull("a stream that cannot seek cannot tell its length");
        progress.Select(p => p.BytesTransferred).Should().Equal(1024, 2048, 3072, 4096, 5120, 6144, 7168, 8192, 9216, 10_000);
        progress.Should().OnlyContain(p => p.TotalBytes == null);
    }

    [Fact]
    public void ASynchronousPostFromASeekableStreamAnnouncesSize1()
    {
        CoapClient client = Start();
        using MemoryStream body = new(Body(5000));
        body.Position = 1000;

        CoapResponse response = client.Upload(Upload, body, method: CoapCode.Post);

        response.Code.Should().Be(CoapCode.Changed);
        _uploads.Should().ContainSingle().Which.Should().Equal(Body(5000)[1000..], "the stream is read from its position");
        _blocksToServer[0].Size1.Should().Be(4000u);
    }

    [Fact]
    public async Task ASmallStreamGoesAsOneMessage()
    {
        CoapClient client = Start();

        CoapResponse response = await client.UploadAsync(Upload, new OneByteStream(Body(200))).WaitAsync(TimeSpan.FromSeconds(30));

        response.Code.Should().Be(CoapCode.Changed);
        _uploads.Should().ContainSingle().Which.Should().Equal(Body(200));
        _blocksToServer.Should().ContainSingle().Which.Block1.Should().BeNull();
    }

    [Fact]
    public async Task GetReportsProgressAndReturnsTheWholeBody()
    {
        CoapClient client = Start();
        List<CoapTransferProgress> progress = [];

        CoapResponse response = await client.GetAsync(Large(3000), new Recorder(progress)).WaitAsync(TimeSpan.FromSeconds(30));

        response.Payload.ToArray().Should().Equal(Body(3000));
        progress.Select(p => p.BytesTransferred).Should().Equal(1024, 2048, 3000);
    }

    [Fact]
    public void UnwritableStreamsAndBodilessMethodsAreRefusedWithTheProblemNamed()
    {
        CoapClient client = Start();
        using MemoryStream readOnly = new(new byte[10], writable: false);

        Action download = () => client.Download(Large(10), readOnly);
        Action upload = () => client.Upload(Upload, readOnly, method: CoapCode.Get);

        download.Should().Throw<ArgumentException>().Which.ParamName.Should().Be("destination");
        upload.Should().Throw<ArgumentException>().Which.ParamName.Should().Be("method");
    }

    [Theory]
    [InlineData("coap://10.0.0.2/missing", "PUT", 0x84)] // 4.04: no route
    [InlineData("coap://10.0.0.2/large", "PUT", 0x85)] // 4.05: a route without PUT
    [InlineData("coap://10.0.0.2/upload", "FETCH", 0x85)]
    public async Task AnUploadNothingWouldTakeIsRefusedAtItsFirstBlock(string uri, string method, byte code)
    {
        // RFC 7959 section 2.5: the server may answer any block with a final response; a body no handler would take is
        // refused before the client sends, and the server holds, the rest of it.
        CoapClient client = Start();
        List<CoapTransferProgress> progress = [];

        CoapResponse response = await client.UploadAsync(new Uri(uri), new MemoryStream(Body(10_000)), CoapContentFormat.OctetStream, new Recorder(progress),
            method == "PUT" ? CoapCode.Put : CoapCode.Fetch).WaitAsync(TimeSpan.FromSeconds(30));

        response.Code.Value.Should().Be(code);
        Network.SentBetween(ClientAddress, ServerAddress).Select(d => d.Parsed).Where(m => m.Block1 is not null)
            .Should().ContainSingle("the first block was answered with the error").Which.Block1!.Value.Number.Should().Be(0);
        progress.Should().BeEmpty("no block was acknowledged with 2.31 Continue");
        _uploads.Should().BeEmpty();
    }

    [Theory]
    [InlineData(1)]
    [InlineData(4)]
    public async Task AStreamThatRefusesABlockFailsTheDownloadWithItsErrorAtOnce(int window)
    {
        // A full disk or a closed pipe under the caller's stream: the call fails with that error, not with a timeout
        // after the block that could not be written was lost in the receive loop.
        CoapClient client = Start(window);
        RefusingStream destination = new(after: 5000);

        Func<Task> download = () => client.DownloadAsync(Large(20_000), destination).WaitAsync(TimeSpan.FromSeconds(30));

        (await download.Should().ThrowAsync<IOException>()).Which.Message.Should().Be("No space left on device");
        Time.Elapsed.Should().Be(TimeSpan.Zero, "no virtual time passed: nothing waited for a timeout");
    }

    [Fact]
    public async Task AHandBuiltDownloadUsesItsEarlyBlock2ForTheSizeAndTheBlockToStartFrom()
    {
        CoapClient client = Start();
        using MemoryStream destination = new();
        CoapMessage request = CoapMessage.CreateRequest(CoapCode.Get, Large(3000), CoapMessageType.Confirmable);
        request.Block2 = new CoapBlock(2, false, CoapBlock.GetSizeExponent(256));

        CoapResponse response = await client.DownloadAsync(request, new Channels.CoapPeer("coap", ServerAddress), destination).WaitAsync(TimeSpan.FromSeconds(30));

        response.Code.Should().Be(CoapCode.Content);
        destination.ToArray().Should().Equal(Body(3000)[512..], "RFC 7959 section 2.4: the transfer starts at the block asked for");
        Network.SentBetween(ClientAddress, ServerAddress).Select(d => d.Parsed.Block2!.Value)
            .Should().OnlyContain(b => b.Size == 256).And.Subject.Select(b => b.Number).Should().Equal(2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
    }

    [Fact]
    public async Task AHandBuiltUploadSendsItsOptionsWithEveryBlock()
    {
        CoapClient client = Start();
        CoapMessage request = CoapMessage.CreateRequest(CoapCode.Put, Upload, CoapMessageType.Confirmable);
        request.ContentFormat = CoapContentFormat.Cbor;
        request.Options.Add((CoapOptionNumber)65000, "x");

        CoapResponse response = await client.UploadAsync(request, new Channels.CoapPeer("coap", ServerAddress), new MemoryStream(Body(3000))).WaitAsync(TimeSpan.FromSeconds(30));

        response.Code.Should().Be(CoapCode.Changed);
        _uploads.Should().ContainSingle().Which.Should().Equal(Body(3000));
        _blocksToServer.Should().HaveCount(3).And.OnlyContain(m => m.ContentFormat == CoapContentFormat.Cbor && m.Options.Contains((CoapOptionNumber)65000));
    }

    [Fact]
    public void AHandBuiltUploadWithAPayloadOfItsOwnIsRefused()
    {
        CoapClient client = Start();
        CoapMessage request = CoapMessage.CreateRequest(CoapCode.Put, Upload, CoapMessageType.Confirmable);
        request.SetPayload("already");

        Action upload = () => client.Upload(request, new Channels.CoapPeer("coap", ServerAddress), new MemoryStream(Body(10)));

        upload.Should().Throw<ArgumentException>().Which.ParamName.Should().Be("request");
    }

    private CoapClient Start(int window = 1)
    {
        CoapServer server = new(new CoapServerOptions { Endpoint = new CoapEndpointOptions { TimeProvider = Time } }.Listen(Network.CreateTransport(ServerAddress)));
        server.MapGet("/large", request => CoapResponse.Content(Body(int.Parse(request.GetQueryValue("size")!, System.Globalization.CultureInfo.InvariantCulture)), CoapContentFormat.OctetStream));
        server.MapPut("/upload", Record);
        server.MapPost("/upload", Record);
        server.Start();
        Owned.Add(server);
        CoapClient client = new(Network.CreateTransport(ClientAddress), new CoapClientOptions
        {
            Endpoint = new CoapEndpointOptions
            {
                TimeProvider = Time,
                Random = new Random(9),
                Blockwise = new BlockwiseOptions { MaxBlocksInFlight = window },
                TransmissionParameters = CoapTransmissionParameters.Default with { NStart = window },
            },
        });
        Owned.Add(client);
        return client;
    }

    private CoapResponse Record(CoapRequest request)
    {
        lock (_uploads)
        {
            _uploads.Add(request.Payload.ToArray());
            _blocksToServer.AddRange(Network.SentBetween(ClientAddress, ServerAddress).Select(d => d.Parsed).Where(m => m.Code == request.Method));
        }

        return new CoapResponse(CoapCode.Changed);
    }

    /// <summary>A destination that takes <c>after</c> bytes, then fails every write as a full disk does.</summary>
    private sealed class RefusingStream(int after) : MemoryStream
    {
        public override void Write(ReadOnlySpan<byte> buffer)
        {
            Check(buffer.Length);
            base.Write(buffer);
        }

        public override void Write(byte[] buffer, int offset, int count)
        {
            Check(count);
            base.Write(buffer, offset, count);
        }

        private void Check(int count)
        {
            if (Length + count > after)
            {
                throw new IOException("No space left on device");
            }
        }
    }

    /// <summary>Records reports as they come (Progress&lt;T&gt; would post them to a context, out of order).</summary>
    private sealed class Recorder(List<CoapTransferProgress> reports) : IProgress<CoapTransferProgress>
    {
        public void Report(CoapTransferProgress value)
        {
            lock (reports)
            {
                reports.Add(value);
            }
        }
    }
}
