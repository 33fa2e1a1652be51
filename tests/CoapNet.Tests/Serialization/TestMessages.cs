using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Tests.Serialization;

/// <summary>Builds messages for the tests and compares them field by field.</summary>
internal static class TestMessages
{
    /// <summary>A message with every field given; options are (number, value) pairs in any order.</summary>
    public static CoapMessage Create(
        CoapMessageType type,
        CoapCode code,
        ushort messageId,
        byte[]? token = null,
        (CoapOptionNumber Number, byte[] Value)[]? options = null,
        byte[]? payload = null)
    {
        CoapMessage message = new()
        {
            Type = type,
            Code = code,
            MessageId = messageId,
            Token = token ?? [],
            Payload = payload ?? [],
        };
        foreach ((CoapOptionNumber number, byte[] value) in options ?? [])
        {
            message.Options.Add(number, value);
        }

        return message;
    }

    /// <summary>An RFC 8323 message: the type and Message ID are not on the wire, so they stay at their defaults.</summary>
    public static CoapMessage Signal(CoapCode code, byte[]? token = null, (CoapOptionNumber Number, byte[] Value)[]? options = null, byte[]? payload = null)
        => Create(CoapMessageType.Confirmable, code, 0, token, options, payload);

    /// <summary>
    /// Asserts that <paramref name="actual"/> has exactly the fields of <paramref name="expected"/> that
    /// <paramref name="framing"/> carries: type and Message ID for datagrams (a stream message reads
    /// Message ID 0), code, token, every option in order with its value bytes, and the payload bytes.
    /// </summary>
    public static void ShouldMatch(this CoapMessage actual, CoapMessage expected, CoapFraming framing)
    {
        actual.Should().NotBeNull();
        if (framing == CoapFraming.Datagram)
        {
            actual.Type.Should().Be(expected.Type, "the type is in the datagram header");
            actual.MessageId.Should().Be(expected.MessageId, "the Message ID is in the datagram header");
        }
        else
        {
            actual.MessageId.Should().Be(0, "RFC 8323 frames carry no Message ID");
        }

        actual.Code.Should().Be(expected.Code);
        Hex(actual.Token).Should().Be(Hex(expected.Token), "the token must match");
        actual.Options.Count.Should().Be(expected.Options.Count, "the option count must match ({0})", expected.Options);
        for (int i = 0; i < expected.Options.Count; i++)
        {
            actual.Options[i].Number.Should().Be(expected.Options[i].Number, "option #{0} has that number", i);
            SameBytes(actual.Options[i].Value, expected.Options[i].Value).Should().BeTrue("option #{0} ({1}) has the expected {2}-byte value", i, expected.Options[i].Number, expected.Options[i].Value.Length);
        }

        actual.Payload.Length.Should().Be(expected.Payload.Length, "the payload length must match");
        SameBytes(actual.Payload, expected.Payload).Should().BeTrue("the payload bytes must match");
    }

    /// <summary>True when both memories hold the same bytes.</summary>
    public static bool SameBytes(ReadOnlyMemory<byte> left, ReadOnlyMemory<byte> right) => left.Span.SequenceEqual(right.Span);

    /// <summary>Lowercase hex, for short byte strings in assertion messages.</summary>
    public static string Hex(ReadOnlyMemory<byte> bytes) => Convert.ToHexString(bytes.Span).ToLowerInvariant();

    /// <summary>Asserts that two byte arrays are equal, reporting the first difference instead of dumping large arrays.</summary>
    public static void ShouldEqualBytes(this byte[] actual, byte[] expected, string because = "")
    {
        if (actual.AsSpan().SequenceEqual(expected))
        {
            return;
        }

        int first = actual.AsSpan().CommonPrefixLength(expected);
        string Window(byte[] b) => Convert.ToHexString(b, Math.Max(0, first - 4), Math.Min(b.Length - Math.Max(0, first - 4), 16));
        actual.Should().HaveCount(
            expected.Length,
            "the bytes should be equal {0}; they differ first at offset {1}: actual ..{2}.. expected ..{3}..",
            because,
            first,
            Window(actual),
            Window(expected));
        first.Should().Be(expected.Length, "the bytes should be equal {0}; they differ first at offset {1}: actual ..{2}.. expected ..{3}..", because, first, Window(actual), Window(expected));
    }
}
