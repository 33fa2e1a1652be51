using System.Buffers.Binary;
using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Tests.Serialization;

/// <summary>
/// Builds wire bytes by hand, independently of the serializer under test, so that expected bytes
/// are an oracle and not a copy of the code being checked.
/// </summary>
internal static class Wire
{
    /// <summary>The Message ID that <see cref="Message"/> puts in datagram headers.</summary>
    public const ushort MessageId = 0x1234;

    /// <summary>Parses "40 01 7d 34" (spaces optional) into bytes.</summary>
    public static byte[] Hex(string hex) => Convert.FromHexString(hex.Replace(" ", string.Empty, StringComparison.Ordinal));

    /// <summary>Every value of <typeparamref name="TEntryPoint"/> with each framing, for theories over entry points.</summary>
    public static TheoryData<CoapFraming, TEntryPoint> EveryFraming<TEntryPoint>()
        where TEntryPoint : struct, Enum
    {
        TheoryData<CoapFraming, TEntryPoint> cases = [];
        foreach (TEntryPoint entryPoint in Enum.GetValues<TEntryPoint>())
        {
            cases.Add(CoapFraming.Datagram, entryPoint);
            cases.Add(CoapFraming.Stream, entryPoint);
        }

        return cases;
    }

    /// <summary>Concatenates byte arrays.</summary>
    public static byte[] Concat(params byte[][] parts)
    {
        byte[] result = new byte[parts.Sum(p => p.Length)];
        int offset = 0;
        foreach (byte[] part in parts)
        {
            part.CopyTo(result, offset);
            offset += part.Length;
        }

        return result;
    }

    /// <summary>
    /// A whole message in <paramref name="framing"/>: for datagrams a CON header with <see cref="MessageId"/>
    /// (RFC 7252 section 3), for streams a Len/TKL header sized to <paramref name="body"/> (RFC 8323 section 3.2).
    /// </summary>
    /// <param name="framing">The framing.</param>
    /// <param name="code">The code byte.</param>
    /// <param name="token">The token bytes (the TKL nibble is their count).</param>
    /// <param name="body">Options, payload marker and payload.</param>
    /// <param name="bodyStart">Where <paramref name="body"/> starts in the result.</param>
    public static byte[] Message(CoapFraming framing, byte code, byte[] token, byte[] body, out int bodyStart)
    {
        byte[] head = framing == CoapFraming.Datagram
            ? Datagram(0, code, MessageId, token, [])
            : StreamHead(token.Length, body.Length, code);
        byte[] message = Concat(head, framing == CoapFraming.Datagram ? [] : token, body);
        bodyStart = message.Length - body.Length;
        return message;
    }

    /// <inheritdoc cref="Message(CoapFraming, byte, byte[], byte[], out int)"/>
    public static byte[] Message(CoapFraming framing, byte code, byte[] token, byte[] body) => Message(framing, code, token, body, out _);

    /// <summary>An RFC 7252 datagram: Ver 1, T, TKL, Code, Message ID, token, then <paramref name="body"/>.</summary>
    public static byte[] Datagram(int type, byte code, ushort messageId, byte[] token, byte[] body)
    {
        byte[] head = new byte[4];
        head[0] = (byte)(0x40 | (type << 4) | token.Length);
        head[1] = code;
        BinaryPrimitives.WriteUInt16BigEndian(head.AsSpan(2), messageId);
        return Concat(head, token, body);
    }

    /// <summary>RFC 8323 section 3.2: the Len/TKL byte, 0, 1, 2 or 4 extended length bytes, and the code.</summary>
    public static byte[] StreamHead(int tokenLength, long bodyLength, byte code)
    {
        List<byte> head = [];
        if (bodyLength < 13)
        {
            head.Add((byte)((bodyLength << 4) | (uint)tokenLength));
        }
        else if (bodyLength < 269)
        {
            head.Add((byte)(0xD0 | tokenLength));
            head.Add((byte)(bodyLength - 13));
        }
        else if (bodyLength < 65805)
        {
            head.Add((byte)(0xE0 | tokenLength));
            head.Add((byte)((bodyLength - 269) >> 8));
            head.Add((byte)(bodyLength - 269));
        }
        else
        {
            head.Add((byte)(0xF0 | tokenLength));
            uint extended = (uint)(bodyLength - 65805);
            head.Add((byte)(extended >> 24));
            head.Add((byte)(extended >> 16));
            head.Add((byte)(extended >> 8));
            head.Add((byte)extended);
        }

        head.Add(code);
        return [.. head];
    }

    /// <summary>
    /// RFC 7252 section 3.1: one option's header byte with its extended delta and length bytes, then the value.
    /// </summary>
    public static byte[] Option(int delta, byte[] value)
    {
        List<byte> bytes = [0];
        int deltaNibble = Extended(delta, bytes);
        int lengthNibble = Extended(value.Length, bytes);
        bytes[0] = (byte)((deltaNibble << 4) | lengthNibble);
        bytes.AddRange(value);
        return [.. bytes];
    }

    /// <summary>
    /// The bytes <paramref name="message"/> must serialize to in <paramref name="framing"/>: an encoder written
    /// from RFC 7252 section 3 and RFC 8323 section 3.2 alone, as an oracle for the serializer.
    /// </summary>
    public static byte[] Encode(CoapFraming framing, CoapMessage message)
    {
        List<byte[]> body = [];
        int previous = 0;
        foreach (CoapOptionEntry option in message.Options)
        {
            body.Add(Option((int)option.Number - previous, option.Value.ToArray()));
            previous = (int)option.Number;
        }

        if (!message.Payload.IsEmpty)
        {
            body.Add([0xFF]);
            body.Add(message.Payload.ToArray());
        }

        byte[] bodyBytes = Concat([.. body]);
        byte[] token = message.Token.ToArray();
        return framing == CoapFraming.Datagram
            ? Datagram((int)message.Type, message.Code.Value, message.MessageId, token, bodyBytes)
            : Concat(StreamHead(token.Length, bodyBytes.Length, message.Code.Value), token, bodyBytes);
    }

    /// <summary>Deterministic filler bytes that are not all equal, so that misplaced copies show.</summary>
    public static byte[] Filler(int length, int seed = 0)
    {
        byte[] bytes = new byte[length];
        for (int i = 0; i < bytes.Length; i++)
        {
            bytes[i] = (byte)((i * 31) + seed + 7);
        }

        return bytes;
    }

    private static int Extended(int value, List<byte> bytes)
    {
        if (value < 13)
        {
            return value;
        }

        if (value < 269)
        {
            bytes.Add((byte)(value - 13));
            return 13;
        }

        bytes.Add((byte)((value - 269) >> 8));
        bytes.Add((byte)(value - 269));
        return 14;
    }
}
