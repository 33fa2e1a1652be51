using System.Buffers;
using System.IO.Pipelines;
using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Tests.Serialization;

/// <summary>
/// The write entry points beyond what the behaviour suite runs through each of them: destinations that are too
/// small, messages that cannot be written leave no partial output, buffer writers, and argument checks.
/// </summary>
public class WritingTests
{
    public static TheoryData<CoapFraming> Framings { get; } = [CoapFraming.Datagram, CoapFraming.Stream];

    private static readonly CoapMessage Request = WireSamples.Get("Rfc7252PostWithEveryOptionForm").Expected;

    [Theory]
    [MemberData(nameof(Framings))]
    public void SerializeIntoATooSmallSpanThrowsArgumentExceptionNamingBothSizes(CoapFraming framing)
    {
        CoapMessageSerializer serializer = new(framing);
        int length = serializer.GetSerializedLength(Request);
        byte[] destination = new byte[length - 1];

        Action write = () => serializer.Serialize(Request, destination.AsSpan());

        write.Should().ThrowExactly<ArgumentException>()
            .WithMessage($"*holds {length - 1} bytes*needs {length}*")
            .And.ParamName.Should().Be("destination");
        destination.All(b => b == 0).Should().BeTrue("nothing is written when the message does not fit");
    }

    [Theory]
    [MemberData(nameof(Framings))]
    public void TrySerializeReturnsFalseForEveryTooSmallSpanAndWritesNothing(CoapFraming framing)
    {
        CoapMessageSerializer serializer = new(framing);
        int length = serializer.GetSerializedLength(Request);
        for (int size = 0; size < length; size++)
        {
            byte[] destination = new byte[size];
            Array.Fill(destination, (byte)0xCC);

            serializer.TrySerialize(Request, destination, out int written).Should().BeFalse("{0} bytes are too few", size);

            written.Should().Be(0);
            destination.All(b => b == 0xCC).Should().BeTrue("nothing is written into {0} bytes", size);
        }

        serializer.TrySerialize(Request, new byte[length], out int exact).Should().BeTrue();
        exact.Should().Be(length);
    }

    [Fact]
    public void TrySerializeStillThrowsForAMessageThatCannotBeWritten()
    {
        CoapMessage emptyWithToken = CoapMessage.CreateEmpty(CoapMessageType.Acknowledgement, 1);
        emptyWithToken.Token = new byte[] { 1 };

        Action write = () => CoapMessageSerializer.Udp.TrySerialize(emptyWithToken, new byte[64], out _);

        write.Should().ThrowExactly<ArgumentException>("a bad message is misuse, not a too-small destination");
    }

    [Theory]
    [MemberData(nameof(Framings))]
    public void BufferWritersReceiveExactlyTheBytesOfSerialize(CoapFraming framing)
    {
        CoapMessageSerializer serializer = new(framing);
        foreach (CoapMessage message in RandomMessages.Generate(seed: 8323, count: 40))
        {
            byte[] expected = serializer.Serialize(message);
            ArrayBufferWriter<byte> array = new();
            ChunkedBufferWriter chunked = new(chunkSize: 1);

            serializer.Serialize(message, array).Should().Be(expected.Length);
            serializer.Serialize(message, chunked).Should().Be(expected.Length);

            array.WrittenSpan.ToArray().ShouldEqualBytes(expected);
            chunked.ToArray().ShouldEqualBytes(expected);
        }
    }

    [Fact]
    public void BufferWriterAppendsMessagesOneAfterAnother()
    {
        CoapMessage first = WireSamples.Get("Rfc8323Csm").Expected;
        CoapMessage second = WireSamples.Get("Rfc8323ContentLen14").Expected;
        ArrayBufferWriter<byte> writer = new();

        CoapMessageSerializer.Tcp.Serialize(first, writer);
        CoapMessageSerializer.Tcp.Serialize(second, writer);

        writer.WrittenSpan.ToArray().ShouldEqualBytes(Wire.Concat(WireSamples.Get("Rfc8323Csm").Bytes, WireSamples.Get("Rfc8323ContentLen14").Bytes));
    }

    [Fact]
    public async Task AMessageThatCannotBeWrittenLeavesNoPartialOutput()
    {
        CoapMessage tooLarge = TestMessages.Create(CoapMessageType.NonConfirmable, CoapCode.Content, 1, payload: new byte[70_000]);
        using MemoryStream syncStream = new();
        using MemoryStream asyncStream = new();
        Pipe pipe = new();
        ArrayBufferWriter<byte> bufferWriter = new();

        Action writeSync = () => CoapMessageSerializer.Udp.Serialize(tooLarge, syncStream);
        Func<Task> writeAsync = async () => await CoapMessageSerializer.Udp.SerializeAsync(tooLarge, asyncStream);
        Func<Task> writePipe = async () => await CoapMessageSerializer.Udp.SerializeAsync(tooLarge, pipe.Writer);
        Action writeBuffer = () => CoapMessageSerializer.Udp.Serialize(tooLarge, bufferWriter);
        Action measure = () => CoapMessageSerializer.Udp.GetSerializedLength(tooLarge);

        writeSync.Should().ThrowExactly<ArgumentException>();
        await writeAsync.Should().ThrowExactlyAsync<ArgumentException>();
        await writePipe.Should().ThrowExactlyAsync<ArgumentException>();
        writeBuffer.Should().ThrowExactly<ArgumentException>();
        measure.Should().ThrowExactly<ArgumentException>();
        syncStream.Length.Should().Be(0);
        asyncStream.Length.Should().Be(0);
        pipe.Writer.UnflushedBytes.Should().Be(0);
        bufferWriter.WrittenCount.Should().Be(0);
    }

    [Fact]
    public async Task NullArgumentsThrowArgumentNullException()
    {
        CoapMessageSerializer serializer = CoapMessageSerializer.Tcp;

        FluentActions.Invoking(() => serializer.Serialize(null!)).Should().ThrowExactly<ArgumentNullException>();
        FluentActions.Invoking(() => serializer.GetSerializedLength(null!)).Should().ThrowExactly<ArgumentNullException>();
        FluentActions.Invoking(() => serializer.Serialize(Request, (IBufferWriter<byte>)null!)).Should().ThrowExactly<ArgumentNullException>();
        FluentActions.Invoking(() => serializer.Serialize(Request, (Stream)null!)).Should().ThrowExactly<ArgumentNullException>();
        FluentActions.Invoking(() => serializer.Deserialize((Stream)null!)).Should().ThrowExactly<ArgumentNullException>();
        await FluentActions.Awaiting(async () => await serializer.DeserializeAsync((Stream)null!)).Should().ThrowExactlyAsync<ArgumentNullException>();
        await FluentActions.Awaiting(async () => await serializer.DeserializeAsync((PipeReader)null!)).Should().ThrowExactlyAsync<ArgumentNullException>();
        await FluentActions.Awaiting(async () => await serializer.SerializeAsync(Request, (Stream)null!)).Should().ThrowExactlyAsync<ArgumentNullException>();
        await FluentActions.Awaiting(async () => await serializer.SerializeAsync(Request, (PipeWriter)null!)).Should().ThrowExactlyAsync<ArgumentNullException>();
    }

    [Fact]
    public void ConstructorRejectsAnUnknownFramingAndALimitBelowAHeader()
    {
        FluentActions.Invoking(() => new CoapMessageSerializer((CoapFraming)2)).Should().ThrowExactly<ArgumentOutOfRangeException>();
        FluentActions.Invoking(() => new CoapMessageSerializer(CoapFraming.Datagram, new CoapSerializerOptions { MaxMessageSize = 3 })).Should().ThrowExactly<ArgumentOutOfRangeException>();

        new CoapMessageSerializer(CoapFraming.Datagram, new CoapSerializerOptions { MaxMessageSize = 4 }).MaxMessageSize.Should().Be(4);
        CoapMessageSerializer.Udp.MaxMessageSize.Should().Be(65507, "the largest UDP payload over IPv4");
        CoapMessageSerializer.Tcp.MaxMessageSize.Should().Be(8 * 1024 * 1024);
        CoapMessageSerializer.Udp.Framing.Should().Be(CoapFraming.Datagram);
        CoapMessageSerializer.Tcp.Framing.Should().Be(CoapFraming.Stream);
    }
}
