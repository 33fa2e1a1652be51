using System.Buffers;
using System.IO.Pipelines;
using CoapNet.Messages;
using CoapNet.Serialization;
using static CoapNet.Tests.Serialization.Wire;

namespace CoapNet.Tests.Serialization;

/// <summary>
/// What only the stream and pipe entry points do: one message per call from a shared connection, nothing
/// read ahead, cancellation, ends of stream, large payloads, and limits checked before allocating.
/// </summary>
public class StreamReadingTests
{
    private static readonly CoapMessage[] Conversation =
    [
        WireSamples.Get("Rfc8323Csm").Expected,
        WireSamples.Get("Rfc8323GetLen12").Expected,
        WireSamples.Get("Rfc8323ContentLen14").Expected,
        WireSamples.Get("Rfc8323Ping").Expected,
    ];

    // With inline schedulers a flush runs the pending read before it returns, so tests need no waiting.
    private static readonly PipeOptions Inline = new(
        readerScheduler: PipeScheduler.Inline,
        writerScheduler: PipeScheduler.Inline,
        pauseWriterThreshold: 0,
        useSynchronizationContext: false);

    [Fact]
    public void ReadsMessagesWrittenBackToBackToOneStreamOnePerCallThenNull()
    {
        using MemoryStream stream = new();
        foreach (CoapMessage message in Conversation)
        {
            CoapMessageSerializer.Tcp.Serialize(message, stream);
        }

        stream.Position = 0;
        long expectedPosition = 0;
        foreach (CoapMessage expected in Conversation)
        {
            CoapMessage? message = CoapMessageSerializer.Tcp.Deserialize(stream);

            message!.ShouldMatch(expected, CoapFraming.Stream);
            expectedPosition += CoapMessageSerializer.Tcp.GetSerializedLength(expected);
            stream.Position.Should().Be(expectedPosition, "a read takes exactly one frame and nothing of the next");
        }

        CoapMessageSerializer.Tcp.Deserialize(stream).Should().BeNull();
        CoapMessageSerializer.Tcp.Deserialize(stream).Should().BeNull("the end of a stream stays the end");
    }

    [Fact]
    public async Task ReadsMessagesWrittenBackToBackToOneStreamOnePerAsyncCallThenNull()
    {
        using MemoryStream stream = new();
        foreach (CoapMessage message in Conversation)
        {
            await CoapMessageSerializer.Tcp.SerializeAsync(message, stream);
        }

        stream.Position = 0;
        long expectedPosition = 0;
        foreach (CoapMessage expected in Conversation)
        {
            CoapMessage? message = await CoapMessageSerializer.Tcp.DeserializeAsync(stream);

            message!.ShouldMatch(expected, CoapFraming.Stream);
            expectedPosition += CoapMessageSerializer.Tcp.GetSerializedLength(expected);
            stream.Position.Should().Be(expectedPosition, "a read takes exactly one frame and nothing of the next");
        }

        (await CoapMessageSerializer.Tcp.DeserializeAsync(stream)).Should().BeNull();
    }

    [Fact]
    public async Task ReadsMessagesWrittenBackToBackToOnePipeOnePerCallThenNull()
    {
        Pipe pipe = new(new PipeOptions(pauseWriterThreshold: 0));
        foreach (CoapMessage message in Conversation)
        {
            await CoapMessageSerializer.Tcp.SerializeAsync(message, pipe.Writer);
        }

        await pipe.Writer.CompleteAsync();
        foreach (CoapMessage expected in Conversation)
        {
            (await CoapMessageSerializer.Tcp.DeserializeAsync(pipe.Reader))!.ShouldMatch(expected, CoapFraming.Stream);
        }

        (await CoapMessageSerializer.Tcp.DeserializeAsync(pipe.Reader)).Should().BeNull();
    }

    [Fact]
    public async Task ReadsAFrameAlreadyBufferedInThePipeWithoutWaitingForMoreData()
    {
        Pipe pipe = new(Inline);
        await pipe.Writer.WriteAsync(Concat(WireSamples.Get("Rfc8323Ping").Bytes, WireSamples.Get("Rfc8323Pong").Bytes));

        ValueTask<CoapMessage?> first = CoapMessageSerializer.Tcp.DeserializeAsync(pipe.Reader);
        first.IsCompleted.Should().BeTrue();
        (await first)!.Code.Should().Be(new CoapCode(7, 2));
        ValueTask<CoapMessage?> second = CoapMessageSerializer.Tcp.DeserializeAsync(pipe.Reader);

        second.IsCompleted.Should().BeTrue("the second frame was in the pipe already; only the first was examined and consumed");
        (await second)!.Code.Should().Be(new CoapCode(7, 3));
    }

    [Fact]
    public async Task ReturnsNothingWhenTheStreamEndsInsideAMessage()
    {
        byte[] whole = CoapMessageSerializer.Tcp.Serialize(Conversation[0]);
        byte[] half = CoapMessageSerializer.Tcp.Serialize(Conversation[2])[..150];
        using MemoryStream sync = new(Concat(whole, half));
        using MemoryStream async = new(Concat(whole, half));

        CoapMessageSerializer.Tcp.Deserialize(sync).Should().NotBeNull();
        Action readSync = () => CoapMessageSerializer.Tcp.Deserialize(sync);
        (await CoapMessageSerializer.Tcp.DeserializeAsync(async)).Should().NotBeNull();
        Func<Task> readAsync = async () => await CoapMessageSerializer.Tcp.DeserializeAsync(async);

        readSync.Should().ThrowExactly<CoapFormatException>().Which.Error.Should().Be(new CoapFormatError(CoapFormatErrorReason.UnexpectedEndOfStream, 150));
        (await readAsync.Should().ThrowExactlyAsync<CoapFormatException>()).Which.Error.Should().Be(new CoapFormatError(CoapFormatErrorReason.UnexpectedEndOfStream, 150));
    }

    [Theory]
    [InlineData(CoapFraming.Datagram)]
    [InlineData(CoapFraming.Stream)]
    public async Task PreCanceledTokenStopsAStreamReadBeforeItReadsAnything(CoapFraming framing)
    {
        CoapMessageSerializer serializer = new(framing);
        using MemoryStream stream = new(serializer.Serialize(WireSamples.Get("Rfc7252Figure17Request").Expected));

        Func<Task> read = async () => await serializer.DeserializeAsync(stream, new CancellationToken(canceled: true));

        await read.Should().ThrowAsync<OperationCanceledException>();
        stream.Position.Should().Be(0);
    }

    [Fact]
    public async Task PreCanceledTokenStopsAPipeReadAndLeavesTheMessageInThePipe()
    {
        Pipe pipe = new(new PipeOptions(pauseWriterThreshold: 0));
        await CoapMessageSerializer.Tcp.SerializeAsync(Conversation[1], pipe.Writer);

        Func<Task> read = async () => await CoapMessageSerializer.Tcp.DeserializeAsync(pipe.Reader, new CancellationToken(canceled: true));

        await read.Should().ThrowAsync<OperationCanceledException>();
        (await CoapMessageSerializer.Tcp.DeserializeAsync(pipe.Reader))!.ShouldMatch(Conversation[1], CoapFraming.Stream);
    }

    [Fact]
    public async Task PreCanceledTokenStopsWritesBeforeTheyWriteAnything()
    {
        using MemoryStream stream = new();
        Pipe pipe = new(new PipeOptions(pauseWriterThreshold: 0));
        CancellationToken canceled = new(canceled: true);

        Func<Task> writeStream = async () => await CoapMessageSerializer.Tcp.SerializeAsync(Conversation[1], stream, canceled);
        Func<Task> writePipe = async () => await CoapMessageSerializer.Tcp.SerializeAsync(Conversation[1], pipe.Writer, canceled);

        await writeStream.Should().ThrowAsync<OperationCanceledException>();
        await writePipe.Should().ThrowAsync<OperationCanceledException>();
        stream.Length.Should().Be(0);
        pipe.Writer.UnflushedBytes.Should().Be(0);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(6)]
    public async Task TokenCancelsAPipeReadBlockedWaitingForTheRestOfAFrame(int bytesAlreadyThere)
    {
        Pipe pipe = new(Inline);
        await pipe.Writer.WriteAsync(CoapMessageSerializer.Tcp.Serialize(Conversation[1]).AsMemory(0, bytesAlreadyThere));
        using CancellationTokenSource cts = new();
        ValueTask<CoapMessage?> read = CoapMessageSerializer.Tcp.DeserializeAsync(pipe.Reader, cts.Token);
        read.IsCompleted.Should().BeFalse("the frame is incomplete");

        await cts.CancelAsync();

        Func<Task> awaitRead = async () => await read;
        await awaitRead.Should().ThrowAsync<OperationCanceledException>();
    }

    [Fact]
    public async Task CancelPendingReadStopsABlockedPipeRead()
    {
        Pipe pipe = new(Inline);
        ValueTask<CoapMessage?> read = CoapMessageSerializer.Tcp.DeserializeAsync(pipe.Reader);
        read.IsCompleted.Should().BeFalse();

        pipe.Reader.CancelPendingRead();

        Func<Task> awaitRead = async () => await read;
        await awaitRead.Should().ThrowAsync<OperationCanceledException>();
    }

    [Fact]
    public async Task TokenCancelsAStreamReadBlockedWaitingForTheRestOfAFrame()
    {
        Pipe pipe = new(new PipeOptions(pauseWriterThreshold: 0));
        await pipe.Writer.WriteAsync(CoapMessageSerializer.Tcp.Serialize(Conversation[1]).AsMemory(0, 4));
        await using Stream stream = pipe.Reader.AsStream();
        using CancellationTokenSource cts = new();
        ValueTask<CoapMessage?> read = CoapMessageSerializer.Tcp.DeserializeAsync(stream, cts.Token);

        await cts.CancelAsync();

        Func<Task> awaitRead = async () => await read;
        await awaitRead.Should().ThrowAsync<OperationCanceledException>();
    }

    [Fact]
    public async Task PipeWriteFlushesAMessageWhoseOptionsAloneExceedTheInlineLimit()
    {
        // 3,000 Uri-Path options of 7 bytes (about 24 KB of head) and no payload: the frame must reach the
        // reader when SerializeAsync returns, without the writer being completed.
        (CoapOptionNumber, byte[])[] options = new (CoapOptionNumber, byte[])[3000];
        Array.Fill(options, (CoapOptionNumber.UriPath, "segment"u8.ToArray()));
        CoapMessage message = TestMessages.Signal(CoapCode.Get, [7], options);
        byte[] expected = CoapMessageSerializer.Tcp.Serialize(message);
        System.IO.Pipelines.Pipe pipe = new(new PipeOptions(pauseWriterThreshold: 0));

        await CoapMessageSerializer.Tcp.SerializeAsync(message, pipe.Writer);

        pipe.Reader.TryRead(out ReadResult result).Should().BeTrue("the message was flushed");
        result.Buffer.ToArray().ShouldEqualBytes(expected, "from SerializeAsync(PipeWriter)");
        pipe.Reader.AdvanceTo(result.Buffer.End);
    }

    [Fact]
    public async Task WritesALargePayloadAsynchronouslyWithTheSameBytesAsSerialize()
    {
        CoapMessage message = TestMessages.Signal(CoapCode.Content, [1, 2, 3, 4], [(CoapOptionNumber.ContentFormat, [42])], Filler(200 * 1024));
        byte[] expected = CoapMessageSerializer.Tcp.Serialize(message);
        using MemoryStream syncStream = new();
        using MemoryStream asyncStream = new();
        using OneByteStream oneByteStream = new();

        CoapMessageSerializer.Tcp.Serialize(message, syncStream);
        await CoapMessageSerializer.Tcp.SerializeAsync(message, asyncStream);
        await CoapMessageSerializer.Tcp.SerializeAsync(message, oneByteStream);
        byte[] throughPipe = await WriteThroughPipeWithBackPressureAsync(message);

        expected.ShouldEqualBytes(Encode(CoapFraming.Stream, message));
        syncStream.ToArray().ShouldEqualBytes(expected, "from Serialize(Stream)");
        asyncStream.ToArray().ShouldEqualBytes(expected, "from SerializeAsync(Stream)");
        oneByteStream.Written.ShouldEqualBytes(expected, "from SerializeAsync(Stream) to a slow stream");
        throughPipe.ShouldEqualBytes(expected, "from SerializeAsync(PipeWriter)");
        asyncStream.Position = 0;
        (await CoapMessageSerializer.Tcp.DeserializeAsync(asyncStream))!.ShouldMatch(message, CoapFraming.Stream);
    }

    [Theory]
    [InlineData(CoapFraming.Datagram)]
    [InlineData(CoapFraming.Stream)]
    public async Task WritesASmallMessageWithOneWriteCallAndALargePayloadWithoutCopyingIt(CoapFraming framing)
    {
        CoapSerializerOptions roomy = new() { MaxMessageSize = 1 << 20 };
        CoapMessageSerializer serializer = new(framing, roomy);
        CoapMessage small = WireSamples.Get("Rfc7252PostWithEveryOptionForm").Expected;
        CoapMessage large = TestMessages.Create(CoapMessageType.NonConfirmable, CoapCode.Content, 9, [7], [(CoapOptionNumber.ContentFormat, [42])], Filler(60_000));
        using OneByteStream syncSmall = new();
        using OneByteStream asyncSmall = new();
        using OneByteStream asyncLarge = new();

        serializer.Serialize(small, syncSmall);
        await serializer.SerializeAsync(small, asyncSmall);
        await serializer.SerializeAsync(large, asyncLarge);

        syncSmall.Writes.Should().Be(1, "a small message is one I/O call");
        asyncSmall.Writes.Should().Be(1, "a small message is one I/O call");
        asyncLarge.Writes.Should().Be(2, "the head, then the payload straight from the message's memory");
        asyncLarge.Written.ShouldEqualBytes(serializer.Serialize(large));
    }

    [Fact]
    public void RejectsAFourGigabyteFrameHeaderWithoutAllocatingTheFrame()
    {
        CoapMessageSerializer unlimited = new(CoapFraming.Stream, new CoapSerializerOptions { MaxMessageSize = int.MaxValue });
        byte[] header = Hex("f0 ff ff ff ff 45");
        ReadAllWays(); // JIT and first-call allocations happen here, not below.

        long before = GC.GetAllocatedBytesForCurrentThread();
        CoapFormatError[] errors = ReadAllWays();
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        errors.Should().AllBeEquivalentTo(new CoapFormatError(CoapFormatErrorReason.MessageTooLarge, 0));
        allocated.Should().BeLessThan(64 * 1024, "the 4 GB Len is refused from the header, before any frame buffer exists");

        CoapFormatError[] ReadAllWays()
        {
            CoapFormatError fromStream = default;
            try
            {
                unlimited.Deserialize(new MemoryStream(header));
            }
            catch (CoapFormatException e)
            {
                fromStream = e.Error;
            }

            unlimited.TryDeserialize(header, out _, out CoapFormatError fromSpan);
            unlimited.ReadFrame(new ReadOnlySequence<byte>(header), out _, out _, out CoapFormatError fromSequence);
            return [fromStream, fromSpan, fromSequence];
        }
    }

    [Fact]
    public async Task RejectsADatagramPipeLongerThanMaxMessageSizeBeforeTheWriterCompletes()
    {
        // A datagram's end is the writer's completion; a peer that never completes must not grow the buffer without bound.
        CoapMessageSerializer serializer = new(CoapFraming.Datagram, new CoapSerializerOptions { MaxMessageSize = 1000 });
        Pipe pipe = new(Inline);
        ValueTask<CoapMessage?> read = serializer.DeserializeAsync(pipe.Reader);

        await pipe.Writer.WriteAsync(Concat(Hex("40 02 00 01 ff"), Filler(996)));

        read.IsCompleted.Should().BeTrue("the reader has seen 1001 bytes, more than the datagram limit");
        Func<Task> awaitRead = async () => await read;
        (await awaitRead.Should().ThrowExactlyAsync<CoapFormatException>()).Which.Error.Should().Be(new CoapFormatError(CoapFormatErrorReason.MessageTooLarge, 1000));
    }

    [Theory]
    [InlineData(65507)]
    [InlineData(1000)]
    [InlineData(4095)]
    [InlineData(4096)]
    [InlineData(4097)]
    public async Task ReadsADatagramStreamOfMaxMessageSizeAndRejectsOneByteMore(int maxMessageSize)
    {
        CoapMessageSerializer serializer = new(CoapFraming.Datagram, new CoapSerializerOptions { MaxMessageSize = maxMessageSize });
        byte[] datagram = Concat(Hex("40 02 00 01 ff"), Filler(maxMessageSize - 5));
        byte[] tooLong = Concat(datagram, [0x00]);

        serializer.Deserialize(new MemoryStream(datagram))!.Payload.Length.Should().Be(maxMessageSize - 5);
        (await serializer.DeserializeAsync(new OneByteStream(datagram)))!.Payload.Length.Should().Be(maxMessageSize - 5);
        Action readSync = () => serializer.Deserialize(new MemoryStream(tooLong));
        Func<Task> readAsync = async () => await serializer.DeserializeAsync(new MemoryStream(tooLong));

        readSync.Should().ThrowExactly<CoapFormatException>().Which.Error.Should().Be(new CoapFormatError(CoapFormatErrorReason.MessageTooLarge, maxMessageSize));
        (await readAsync.Should().ThrowExactlyAsync<CoapFormatException>()).Which.Error.Should().Be(new CoapFormatError(CoapFormatErrorReason.MessageTooLarge, maxMessageSize));
    }

    [Fact]
    public async Task ReadsDatagramStreamsWithTheLargestPossibleMaxMessageSize()
    {
        CoapMessageSerializer unlimited = new(CoapFraming.Datagram, new CoapSerializerOptions { MaxMessageSize = int.MaxValue });
        WireSample sample = WireSamples.Get("Rfc7252PostWithEveryOptionForm");

        unlimited.Deserialize(new MemoryStream(sample.Bytes))!.ShouldMatch(sample.Expected, CoapFraming.Datagram);
        (await unlimited.DeserializeAsync(new MemoryStream(sample.Bytes)))!.ShouldMatch(sample.Expected, CoapFraming.Datagram);
    }

    private static async Task<byte[]> WriteThroughPipeWithBackPressureAsync(CoapMessage message)
    {
        // Default thresholds: the writer must wait for the concurrent reader, so the payload cannot be buffered whole.
        Pipe pipe = new();
        Task<byte[]> reading = Task.Run(async () =>
        {
            using MemoryStream received = new();
            while (true)
            {
                ReadResult result = await pipe.Reader.ReadAsync();
                foreach (ReadOnlyMemory<byte> segment in result.Buffer)
                {
                    received.Write(segment.Span);
                }

                pipe.Reader.AdvanceTo(result.Buffer.End);
                if (result.IsCompleted)
                {
                    return received.ToArray();
                }
            }
        });
        await CoapMessageSerializer.Tcp.SerializeAsync(message, pipe.Writer);
        await pipe.Writer.CompleteAsync();
        return await reading;
    }
}
