using System.Runtime.InteropServices;
using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Tests.Serialization;

/// <summary>
/// The <see cref="ReadOnlyMemory{T}"/> overloads parse without copying (token, option values and payload are
/// slices of the input); the span overloads copy, once, so the input can be reused at once.
/// </summary>
public class ZeroCopyTests
{
    public static TheoryData<CoapFraming, string> Samples { get; } = new()
    {
        { CoapFraming.Datagram, "Rfc7252PostWithEveryOptionForm" },
        { CoapFraming.Stream, "Rfc8323Abort" },
        { CoapFraming.Stream, "Rfc8323ContentLen15" },
    };

    [Theory]
    [MemberData(nameof(Samples))]
    public void DeserializeFromMemoryReturnsSlicesOfTheInputArray(CoapFraming framing, string sample)
    {
        // The message sits inside a larger array, at an offset, as it would in a receive buffer.
        byte[] wire = WireSamples.Get(sample).Bytes;
        byte[] buffer = Wire.Concat(new byte[7], wire, new byte[5]);
        ReadOnlyMemory<byte> input = buffer.AsMemory(7, wire.Length);

        CoapMessage message = new CoapMessageSerializer(framing).Deserialize(input);

        ShouldAllBeSlicesOf(message, buffer);
    }

    [Theory]
    [MemberData(nameof(Samples))]
    public void TryDeserializeFromMemoryReturnsSlicesOfTheInputArray(CoapFraming framing, string sample)
    {
        byte[] buffer = (byte[])WireSamples.Get(sample).Bytes.Clone();

        new CoapMessageSerializer(framing).TryDeserialize((ReadOnlyMemory<byte>)buffer, out CoapMessage? message, out _).Should().BeTrue();

        ShouldAllBeSlicesOf(message!, buffer);
    }

    [Fact]
    public void ChangesToTheInputShowThroughAZeroCopyMessage()
    {
        byte[] buffer = (byte[])WireSamples.Get("Rfc7252Figure17Response").Bytes.Clone();
        CoapMessage message = CoapMessageSerializer.Udp.Deserialize((ReadOnlyMemory<byte>)buffer);

        buffer[^1] = (byte)'F';
        buffer[4] = 0x21;

        message.GetPayloadString().Should().Be("22.3 F", "the payload is the input's memory, which the caller must keep unchanged");
        message.Token.ToArray().Should().Equal(0x21);
    }

    [Theory]
    [MemberData(nameof(Samples))]
    public void DeserializeFromSpanCopiesSoTheInputCanBeReused(CoapFraming framing, string sample)
    {
        WireSample wire = WireSamples.Get(sample);
        byte[] buffer = (byte[])wire.Bytes.Clone();
        CoapMessageSerializer serializer = new(framing);

        CoapMessage fromDeserialize = serializer.Deserialize((ReadOnlySpan<byte>)buffer);
        serializer.TryDeserialize((ReadOnlySpan<byte>)buffer, out CoapMessage? fromTry, out _).Should().BeTrue();
        Array.Fill(buffer, (byte)0xEE);

        fromDeserialize.ShouldMatch(wire.Expected, framing);
        fromTry!.ShouldMatch(wire.Expected, framing);
    }

    [Fact]
    public void CopyingParseKeepsTokenOptionsAndPayloadInOneNewArray()
    {
        byte[] buffer = WireSamples.Get("Rfc7252PostWithEveryOptionForm").Bytes;

        CoapMessage message = CoapMessageSerializer.Udp.Deserialize((ReadOnlySpan<byte>)buffer);

        byte[] owner = ArrayOf(message.Token);
        owner.Should().NotBeSameAs(buffer);
        ArrayOf(message.Payload).Should().BeSameAs(owner);
        foreach (CoapOptionEntry option in message.Options)
        {
            ArrayOf(option.Value).Should().BeSameAs(owner, "option {0} shares the one copy", option.Number);
        }
    }

    private static void ShouldAllBeSlicesOf(CoapMessage message, byte[] buffer)
    {
        List<ReadOnlyMemory<byte>> parts = [message.Payload];
        if (!message.Token.IsEmpty)
        {
            parts.Add(message.Token);
        }

        foreach (CoapOptionEntry option in message.Options)
        {
            if (!option.Value.IsEmpty)
            {
                parts.Add(option.Value);
            }
        }

        foreach (ReadOnlyMemory<byte> part in parts)
        {
            MemoryMarshal.TryGetArray(part, out ArraySegment<byte> segment).Should().BeTrue();
            segment.Array.Should().BeSameAs(buffer, "the part is a slice of the input, not a copy");
            segment.Offset.Should().BeGreaterThan(0);
            (segment.Offset + segment.Count).Should().BeLessThanOrEqualTo(buffer.Length);
        }

        MemoryMarshal.TryGetArray(message.Payload, out ArraySegment<byte> payload);
        buffer[payload.Offset - 1].Should().Be(0xFF, "the payload slice starts right after the payload marker");
    }

    private static byte[] ArrayOf(ReadOnlyMemory<byte> memory)
    {
        MemoryMarshal.TryGetArray(memory, out ArraySegment<byte> segment).Should().BeTrue();
        return segment.Array!;
    }
}
