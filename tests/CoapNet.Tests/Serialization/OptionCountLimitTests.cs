using System.Buffers;
using System.IO.Pipelines;
using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Tests.Serialization;

/// <summary>
/// The abuse limit on options per message: every read entry point refuses a message with one option more
/// than <see cref="CoapSerializerOptions.MaxOptionCount"/> with <see cref="CoapFormatErrorReason.TooManyOptions"/>,
/// pointing at the first option past the limit, and reads a message at the limit.
/// </summary>
public class OptionCountLimitTests
{
    public enum EntryPoint
    {
        Span,
        Memory,
        TrySpan,
        Stream,
        StreamAsync,
        Pipe,
        Sequence,
    }

    public static TheoryData<CoapFraming, EntryPoint> Cases { get; } = Wire.EveryFraming<EntryPoint>();

    [Fact]
    public void TheDefaultIs1024AndTheBuiltInSerializersApplyIt()
    {
        CoapSerializerOptions.DefaultMaxOptionCount.Should().Be(1024);
        CoapMessageSerializer.Udp.MaxOptionCount.Should().Be(1024);
        CoapMessageSerializer.Tcp.MaxOptionCount.Should().Be(1024);
        new CoapMessageSerializer(CoapFraming.Stream, new CoapSerializerOptions { MaxOptionCount = 7 }).MaxOptionCount.Should().Be(7);
        ((Action)(() => _ = new CoapMessageSerializer(CoapFraming.Datagram, new CoapSerializerOptions { MaxOptionCount = -1 })))
            .Should().Throw<ArgumentOutOfRangeException>();
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task OneOptionPastTheDefaultIsRefusedAndTheLimitItselfIsRead(CoapFraming framing, EntryPoint entryPoint)
    {
        CoapMessageSerializer serializer = framing == CoapFraming.Datagram ? CoapMessageSerializer.Udp : CoapMessageSerializer.Tcp;
        byte[] atLimit = serializer.Serialize(WithPathSegments(CoapSerializerOptions.DefaultMaxOptionCount));
        byte[] overLimit = serializer.Serialize(WithPathSegments(CoapSerializerOptions.DefaultMaxOptionCount + 1));

        (CoapMessage? read, _) = await ReadAsync(serializer, entryPoint, atLimit);
        (_, CoapFormatError? error) = await ReadAsync(serializer, entryPoint, overLimit);

        read!.Options.Count.Should().Be(CoapSerializerOptions.DefaultMaxOptionCount);
        error!.Value.Reason.Should().Be(CoapFormatErrorReason.TooManyOptions);
        error.Value.Offset.Should().Be(overLimit.Length - 2, "each segment is one header byte and one value byte, so option 1025 is the last two");
    }

    [Theory]
    [InlineData(CoapFraming.Datagram)]
    [InlineData(CoapFraming.Stream)]
    public void AConfiguredLimitCountsRepeatedAndDistinctOptionsAlike(CoapFraming framing)
    {
        CoapMessageSerializer three = new(framing, new CoapSerializerOptions { MaxOptionCount = 3 });
        CoapMessage message = new() { Code = CoapCode.Get, MessageId = 1, UriPath = "a/b" };
        message.Options.Add(CoapOptionNumber.UriQuery, "q");
        byte[] atLimit = three.Serialize(message);
        message.Options.Add(CoapOptionNumber.Accept, 0u);
        byte[] overLimit = three.Serialize(message);

        three.Deserialize((ReadOnlySpan<byte>)atLimit).Options.Count.Should().Be(3);
        three.TryDeserialize((ReadOnlySpan<byte>)overLimit, out _, out CoapFormatError error).Should().BeFalse("writing is not limited, reading is");
        error.Reason.Should().Be(CoapFormatErrorReason.TooManyOptions);
        error.Message.Should().Contain("maximum option count");
        new CoapMessageSerializer(framing, new CoapSerializerOptions { MaxOptionCount = 0 })
            .TryDeserialize((ReadOnlySpan<byte>)overLimit, out _, out error).Should().BeFalse();
        error.Offset.Should().Be(framing == CoapFraming.Datagram ? 4 : 2, "with a limit of 0 the first option is already one too many");
    }

    private static CoapMessage WithPathSegments(int count)
    {
        CoapMessage message = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get, MessageId = 0x4242 };
        for (int i = 0; i < count; i++)
        {
            message.Options.Add(CoapOptionNumber.UriPath, "p");
        }

        return message;
    }

    private static async Task<(CoapMessage? Message, CoapFormatError? Error)> ReadAsync(CoapMessageSerializer serializer, EntryPoint entryPoint, byte[] wire)
    {
        try
        {
            switch (entryPoint)
            {
                case EntryPoint.Span:
                    return (serializer.Deserialize((ReadOnlySpan<byte>)wire), null);
                case EntryPoint.Memory:
                    return (serializer.Deserialize((ReadOnlyMemory<byte>)wire), null);
                case EntryPoint.TrySpan:
                    return serializer.TryDeserialize((ReadOnlySpan<byte>)wire, out CoapMessage? parsed, out CoapFormatError error) ? (parsed, null) : (null, error);
                case EntryPoint.Stream:
                    return (serializer.Deserialize(new MemoryStream(wire)), null);
                case EntryPoint.StreamAsync:
                    // A derived stream, so the asynchronous reads really run (a plain MemoryStream takes the synchronous path).
                    return (await serializer.DeserializeAsync(new OneByteStream(wire)), null);
                case EntryPoint.Pipe:
                    Pipe pipe = new();
                    await pipe.Writer.WriteAsync(wire);
                    await pipe.Writer.CompleteAsync();
                    return (await serializer.DeserializeAsync(pipe.Reader), null);
                default:
                    return serializer.ReadFrame(new ReadOnlySequence<byte>(wire), out CoapMessage? framed, out _, out CoapFormatError frameError) == OperationStatus.Done
                        ? (framed, null)
                        : (null, frameError);
            }
        }
        catch (CoapFormatException exception)
        {
            return (null, exception.Error);
        }
    }
}
