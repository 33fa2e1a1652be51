using CoapNet.Serialization;
using static CoapNet.Tests.Serialization.Wire;

namespace CoapNet.Tests.Serialization;

/// <summary>
/// Behaviour of the entry points that take exactly one message in a buffer (span, memory, Try-): the
/// buffer must hold one whole message and nothing else.
/// </summary>
public abstract class BufferSerializerTests : SerializerTests
{
    [Theory]
    [MemberData(nameof(Framings))]
    public async Task RejectsEmptyBufferAsTooShort(CoapFraming framing)
        => await ShouldRejectAsync(new CoapMessageSerializer(framing), [], CoapFormatErrorReason.MessageTooShort, 0);

    [Theory]
    [InlineData("00 e2 00", 2)]
    [InlineData("11 e2 42 20 ff", 4)]
    [InlineData("00 e2 00 e2", 2)]
    public async Task RejectsBytesAfterTheEndOfAStreamFrame(string hex, int offset)
        => await ShouldRejectAsync(CoapMessageSerializer.Tcp, Hex(hex), CoapFormatErrorReason.TrailingBytes, offset);
}
