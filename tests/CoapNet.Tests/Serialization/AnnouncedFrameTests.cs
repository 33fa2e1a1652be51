using CoapNet.Messages;
using CoapNet.Serialization;
using static CoapNet.Tests.Serialization.Wire;

namespace CoapNet.Tests.Serialization;

/// <summary>
/// A stream frame's Len field is the peer's word, not bytes received (RFC 8323 section 3.2): reading from a
/// stream allocates as the bytes arrive, so a few bytes that announce megabytes cost kilobytes; and frames
/// that really are large still read back intact, whichever way the buffer had to grow.
/// </summary>
public class AnnouncedFrameTests
{
    // Len 15 (four extended length bytes) announcing 65805 + 0x7EFEED = 8,388,602 bytes after the header, code and
    // token: an 8 MiB frame, the default MaxMessageSize, so it passes the size check. Then the code byte, and nothing more.
    private static readonly byte[] Announces8MiB = Hex("f0 00 7e fe ed 45");

    public enum Source
    {
        MemoryStream,
        UnseekableStream,
        UnseekableStreamAsync,
    }

    [Theory]
    [InlineData(Source.MemoryStream)]
    [InlineData(Source.UnseekableStream)]
    [InlineData(Source.UnseekableStreamAsync)]
    public void SixBytesAnnouncingEightMebibytesAllocateFarLessThanTheFrame(Source source)
    {
        ReadTruncated(source); // JIT, the pool's first buffers and other first-call allocations happen here, not below.

        long before = GC.GetAllocatedBytesForCurrentThread();
        CoapFormatError error = ReadTruncated(source);
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        error.Should().Be(new CoapFormatError(CoapFormatErrorReason.UnexpectedEndOfStream, Announces8MiB.Length));
        allocated.Should().BeLessThan(256 * 1024, "what is allocated follows the 6 bytes that arrived, not the 8 MiB announced");
    }

    [Theory]
    [InlineData(Source.MemoryStream, 3 * 1024 * 1024)]
    [InlineData(Source.UnseekableStream, 3 * 1024 * 1024)]
    [InlineData(Source.UnseekableStreamAsync, 3 * 1024 * 1024)]
    [InlineData(Source.UnseekableStream, 300 * 1024)]
    [InlineData(Source.UnseekableStreamAsync, 300 * 1024)]
    [InlineData(Source.UnseekableStream, 64 * 1024)]
    [InlineData(Source.UnseekableStream, (64 * 1024) + 1)]
    public async Task LargeFramesStillRoundTripWhileTheBufferGrows(Source source, int payloadLength)
    {
        CoapMessage message = TestMessages.Signal(CoapCode.Content, [1, 2, 3], [(CoapOptionNumber.ContentFormat, [42])], Filler(payloadLength));
        byte[] frame = CoapMessageSerializer.Tcp.Serialize(message);
        byte[] twoFrames = [.. frame, .. frame];
        Stream stream = source == Source.MemoryStream ? new MemoryStream(twoFrames) : new UnseekableStream(twoFrames);

        CoapMessage? first = source == Source.UnseekableStreamAsync ? await CoapMessageSerializer.Tcp.DeserializeAsync(stream) : CoapMessageSerializer.Tcp.Deserialize(stream);
        CoapMessage? second = source == Source.UnseekableStreamAsync ? await CoapMessageSerializer.Tcp.DeserializeAsync(stream) : CoapMessageSerializer.Tcp.Deserialize(stream);

        first!.ShouldMatch(message, CoapFraming.Stream);
        second!.ShouldMatch(message, CoapFraming.Stream);
        (source == Source.UnseekableStreamAsync ? await CoapMessageSerializer.Tcp.DeserializeAsync(stream) : CoapMessageSerializer.Tcp.Deserialize(stream))
            .Should().BeNull("nothing was read ahead, and the stream ended cleanly between frames");
    }

    [Fact]
    public async Task AFrameArrivingOneByteAtATimeGrowsItsBufferAndReadsBack()
    {
        CoapMessage message = TestMessages.Signal(CoapCode.Content, [4], [], Filler(200 * 1024));
        byte[] frame = CoapMessageSerializer.Tcp.Serialize(message);

        (await CoapMessageSerializer.Tcp.DeserializeAsync(new OneByteStream(frame)))!.ShouldMatch(message, CoapFraming.Stream);
        CoapMessageSerializer.Tcp.Deserialize(new OneByteStream(frame))!.ShouldMatch(message, CoapFraming.Stream);
    }

    private static CoapFormatError ReadTruncated(Source source)
    {
        try
        {
            _ = source switch
            {
                Source.MemoryStream => CoapMessageSerializer.Tcp.Deserialize(new MemoryStream(Announces8MiB)),
                Source.UnseekableStream => CoapMessageSerializer.Tcp.Deserialize(new UnseekableStream(Announces8MiB)),

                // Its reads complete synchronously, so the whole read runs on this thread, where allocations are counted.
                _ => CoapMessageSerializer.Tcp.DeserializeAsync(new UnseekableStream(Announces8MiB)).AsTask().GetAwaiter().GetResult(),
            };
        }
        catch (CoapFormatException exception)
        {
            return exception.Error;
        }

        throw new InvalidOperationException("The truncated frame was read.");
    }

    /// <summary>A stream over bytes that, like a network stream, cannot say how many are still to come.</summary>
    private sealed class UnseekableStream(byte[] bytes) : Stream
    {
        private readonly MemoryStream _inner = new(bytes, writable: false);

        public override bool CanRead => true;

        public override bool CanSeek => false;

        public override bool CanWrite => false;

        public override long Length => throw new NotSupportedException();

        public override long Position
        {
            get => throw new NotSupportedException();
            set => throw new NotSupportedException();
        }

        public override int Read(byte[] buffer, int offset, int count) => _inner.Read(buffer, offset, count);

        public override int Read(Span<byte> buffer) => _inner.Read(buffer);

        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) => new(_inner.Read(buffer.Span));

        public override void Flush()
        {
        }

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();

        protected override void Dispose(bool disposing)
        {
            _inner.Dispose();
            base.Dispose(disposing);
        }
    }
}
