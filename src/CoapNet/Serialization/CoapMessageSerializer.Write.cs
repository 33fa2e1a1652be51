using System.Buffers;
using System.Buffers.Binary;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using CoapNet.Messages;

namespace CoapNet.Serialization;

// Writing to contiguous memory: the one synchronous core behind every write entry point.
public sealed partial class CoapMessageSerializer
{
    /// <summary>The length in bytes of <paramref name="message"/> in this framing.</summary>
    /// <param name="message">The message.</param>
    /// <returns>The serialized length.</returns>
    /// <exception cref="ArgumentException">The message cannot be serialized (see <see cref="Serialize(CoapMessage)"/>).</exception>
    public int GetSerializedLength(CoapMessage message) => Measure(message).Total;

    /// <summary>The length of <paramref name="message"/> sent with a token of <paramref name="tokenLength"/> bytes in place of its own.</summary>
    internal int GetSerializedLength(CoapMessage message, int tokenLength) => Measure(message, message.Type, tokenLength).Total;

    /// <summary>
    /// Serializes <paramref name="message"/> with the header fields of <paramref name="header"/> in place of its own: a
    /// response goes out with its request's token and a Message ID and type the layer below chose, while the message
    /// itself (a handler's, which may be shared) is neither copied nor modified.
    /// </summary>
    internal byte[] Serialize(CoapMessage message, in WireHeader header)
    {
        Layout layout = Measure(message, header.Type, header.Token.Length);
        byte[] bytes = GC.AllocateUninitializedArray<byte>(layout.Total);
        Write(message, header, layout, bytes);
        return bytes;
    }

    /// <summary>
    /// Serializes <paramref name="message"/> with the header fields of <paramref name="header"/> into an array rented from
    /// <see cref="ArrayPool{T}.Shared"/>, for a datagram that is sent and then dropped (the caller returns the array).
    /// </summary>
    internal byte[] SerializeRented(CoapMessage message, in WireHeader header, out int length)
    {
        Layout layout = Measure(message, header.Type, header.Token.Length);
        byte[] bytes = ArrayPool<byte>.Shared.Rent(layout.Total);
        Write(message, header, layout, bytes);
        length = layout.Total;
        return bytes;
    }

    /// <summary>Serializes <paramref name="message"/> with the header fields of <paramref name="header"/> into a buffer writer.</summary>
    internal int Serialize(CoapMessage message, in WireHeader header, IBufferWriter<byte> writer)
    {
        Layout layout = Measure(message, header.Type, header.Token.Length);
        WriteHead(message, header, layout, writer.GetSpan(layout.Head));
        writer.Advance(layout.Head);
        writer.Write(message.Payload.Span);
        return layout.Total;
    }

    /// <summary>Serializes a message into a new array.</summary>
    /// <param name="message">The message.</param>
    /// <returns>The bytes: one datagram, or one stream frame.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="message"/> is null.</exception>
    /// <exception cref="ArgumentException">
    /// The message is an Empty message (0.00) with a token, options or payload (RFC 7252 section 4.1),
    /// or it is larger than <see cref="MaxMessageSize"/> (for datagrams, larger than a UDP datagram holds).
    /// </exception>
    public byte[] Serialize(CoapMessage message)
    {
        ArgumentNullException.ThrowIfNull(message);
        return Serialize(message, WireHeader.Of(message));
    }

    /// <summary>Serializes a message into <paramref name="destination"/>.</summary>
    /// <param name="message">The message.</param>
    /// <param name="destination">Where to write; at least <see cref="GetSerializedLength(CoapMessage)"/> bytes.</param>
    /// <returns>The number of bytes written.</returns>
    /// <exception cref="ArgumentException">The destination is too small, or the message cannot be serialized.</exception>
    public int Serialize(CoapMessage message, Span<byte> destination)
    {
        if (!TrySerialize(message, destination, out int written))
        {
            throw new ArgumentException($"The destination holds {destination.Length} bytes; the message needs {GetSerializedLength(message)}.", nameof(destination));
        }

        return written;
    }

    /// <summary>Serializes a message into <paramref name="destination"/> when it fits.</summary>
    /// <param name="message">The message.</param>
    /// <param name="destination">Where to write.</param>
    /// <param name="bytesWritten">The number of bytes written; 0 when it does not fit.</param>
    /// <returns>False when the destination is too small.</returns>
    /// <exception cref="ArgumentException">The message cannot be serialized.</exception>
    public bool TrySerialize(CoapMessage message, Span<byte> destination, out int bytesWritten)
    {
        Layout layout = Measure(message);
        if (destination.Length < layout.Total)
        {
            bytesWritten = 0;
            return false;
        }

        Write(message, WireHeader.Of(message), layout, destination);
        bytesWritten = layout.Total;
        return true;
    }

    /// <summary>Serializes a message into a buffer writer, such as a pooled buffer or a <see cref="System.IO.Pipelines.PipeWriter"/>.</summary>
    /// <param name="message">The message.</param>
    /// <param name="writer">The writer.</param>
    /// <returns>The number of bytes written.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="writer"/> is null.</exception>
    /// <exception cref="ArgumentException">The message cannot be serialized.</exception>
    public int Serialize(CoapMessage message, IBufferWriter<byte> writer)
    {
        ArgumentNullException.ThrowIfNull(writer);
        ArgumentNullException.ThrowIfNull(message);

        // The payload may be larger than any one buffer the writer hands out; Write spans segments.
        return Serialize(message, WireHeader.Of(message), writer);
    }

    /// <summary>The header fields a message goes out with (type and Message ID on datagrams only, and the token).</summary>
    internal readonly record struct WireHeader(CoapMessageType Type, ushort MessageId, ReadOnlyMemory<byte> Token)
    {
        /// <summary>The message's own.</summary>
        public static WireHeader Of(CoapMessage message) => new(message.Type, message.MessageId, message.Token);
    }

    /// <summary>Sizes of a serialized message: everything before the payload (Head) and the total.</summary>
    private readonly record struct Layout(int Head, int Total, int OptionsLength, int BodyLength);

    private Layout Measure(CoapMessage message)
    {
        ArgumentNullException.ThrowIfNull(message);
        return Measure(message, message.Type, message.Token.Length);
    }

    private Layout Measure(CoapMessage message, CoapMessageType type, int tokenLength)
    {
        int payloadLength = message.Payload.Length;
        long optionsLength = message.TryGetWireOptions(out ReadOnlyMemory<byte> wire) ? wire.Length : message.HasOptions ? MeasureOptions(message.Options) : 0;

        // RFC 7252 section 4.1: an Empty message is only the header.
        if (message.Code.IsEmpty && (tokenLength != 0 || optionsLength != 0 || payloadLength != 0))
        {
            ThrowNotEmpty();
        }

        long body = optionsLength + (payloadLength == 0 ? 0 : 1 + payloadLength);
        long head;
        if (Framing == CoapFraming.Datagram)
        {
            if ((uint)type > 3)
            {
                ThrowBadType(type);
            }

            head = 4 + tokenLength;
        }
        else
        {
            head = 1 + ExtendedLengthBytes(LengthNibble(body)) + 1 + tokenLength;
        }

        long total = head + body;
        if (total > _maxMessageSize)
        {
            ThrowTooLarge(total, payloadLength);
        }

        return new Layout((int)(total - payloadLength), (int)total, (int)optionsLength, (int)body);
    }

    // The refusals of Measure, out of its line: their messages' formatting would otherwise give every measurement (two
    // a response) a larger frame to clear, which was most of Measure's time under pipelined TCP load (issue 39).
    [DoesNotReturn]
    private static void ThrowNotEmpty()
        => throw new ArgumentException("An Empty message (code 0.00) carries no token, options or payload (RFC 7252 section 4.1).", "message");

    [DoesNotReturn]
    private static void ThrowBadType(CoapMessageType type)
        => throw new ArgumentException($"Message type {type} is not CON, NON, ACK or RST.", "message");

    [DoesNotReturn]
    private void ThrowTooLarge(long total, int payloadLength)
        => throw new ArgumentException(
            Framing == CoapFraming.Datagram
                ? $"The message is {total} bytes; a datagram from this serializer holds at most {_maxMessageSize} (the payload is {payloadLength} bytes). Use block-wise transfer (RFC 7959) or a larger MaxMessageSize."
                : $"The message is {total} bytes; a stream frame from this serializer holds at most {_maxMessageSize}. Raise CoapSerializerOptions.MaxMessageSize.",
            "message");

    // RFC 7252 section 3.1: each option takes a header byte, its extended delta and length, and its value.
    private static long MeasureOptions(CoapOptionCollection options)
    {
        long length = 0;
        int previous = 0;
        using OptionBatches batches = new(options);
        for (int start = 0; start < options.Count;)
        {
            ReadOnlySpan<CoapOptionEntry> batch = batches.Next(start);
            foreach (CoapOptionEntry option in batch)
            {
                int number = (int)option.Number;
                int valueLength = option.Value.Length;
                length += 1 + ExtendedSize(number - previous) + ExtendedSize(valueLength) + valueLength;
                previous = number;
            }

            start += batch.Length;
        }

        return length;
    }

    // RFC 8323 section 3.2: Len is the body length itself below 13, else 13/14/15 with 1/2/4 extended bytes.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int LengthNibble(long bodyLength) => bodyLength < 13 ? (int)bodyLength : bodyLength < 269 ? 13 : bodyLength < 65805 ? 14 : 15;

    /// <summary>
    /// Writes the header of an RFC 8323 stream frame (section 3.2), the Len/TKL byte and the extended length, for a frame
    /// whose token is <paramref name="tokenLength"/> bytes and whose options, payload marker and payload are
    /// <paramref name="bodyLength"/>; the code, token and body follow it. The counterpart of
    /// <see cref="ReadStreamFrameHeader"/>, for a transport that turns frames of its own framing (a WebSocket message,
    /// RFC 8323 section 4.2) back into stream frames.
    /// </summary>
    /// <param name="destination">Where to write; five bytes are always enough.</param>
    /// <param name="tokenLength">The token's length, 0 to 8.</param>
    /// <param name="bodyLength">The length of the options, payload marker and payload.</param>
    /// <returns>The bytes written (1 to 5).</returns>
    /// <exception cref="ArgumentOutOfRangeException">The token length is outside 0-8, or the body length outside what Len can say.</exception>
    /// <exception cref="ArgumentException"><paramref name="destination"/> is too short.</exception>
    public static int WriteStreamFrameHeader(Span<byte> destination, int tokenLength, long bodyLength)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(tokenLength);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(tokenLength, CoapMessage.MaxTokenLength);
        ArgumentOutOfRangeException.ThrowIfNegative(bodyLength);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(bodyLength, 65805L + uint.MaxValue);
        int nibble = LengthNibble(bodyLength);
        int length = 1 + ExtendedLengthBytes(nibble);
        if (destination.Length < length)
        {
            throw new ArgumentException($"The destination holds {destination.Length} bytes; the header needs {length}.", nameof(destination));
        }

        destination[0] = (byte)((nibble << 4) | tokenLength);
        switch (nibble)
        {
            case 13:
                destination[1] = (byte)(bodyLength - 13);
                break;
            case 14:
                BinaryPrimitives.WriteUInt16BigEndian(destination[1..], (ushort)(bodyLength - 269));
                break;
            case 15:
                BinaryPrimitives.WriteUInt32BigEndian(destination[1..], (uint)(bodyLength - 65805));
                break;
        }

        return length;
    }

    // RFC 7252 section 3.1: extra bytes for an option delta or length.
    private static int ExtendedSize(int value) => value < 13 ? 0 : value < 269 ? 1 : 2;

    /// <summary>Writes the whole message, measured as <paramref name="layout"/>, into contiguous memory.</summary>
    private void Write(CoapMessage message, in WireHeader header, in Layout layout, Span<byte> destination)
    {
        WriteHead(message, header, layout, destination);
        message.Payload.Span.CopyTo(destination[layout.Head..]);
    }

    /// <summary>Writes header, token, options and (when there is a payload) the marker: layout.Head bytes.</summary>
    private void WriteHead(CoapMessage message, in WireHeader header, in Layout layout, Span<byte> destination)
    {
        int position;
        int tokenLength = header.Token.Length;
        if (Framing == CoapFraming.Datagram)
        {
            // RFC 7252 section 3: Ver = 1, T, TKL | Code | Message ID.
            destination[0] = (byte)(0x40 | ((int)header.Type << 4) | tokenLength);
            destination[1] = message.Code.Value;
            BinaryPrimitives.WriteUInt16BigEndian(destination[2..], header.MessageId);
            position = 4;
        }
        else
        {
            // RFC 8323 section 3.2: Len | TKL, extended length, Code.
            position = WriteStreamFrameHeader(destination, tokenLength, layout.BodyLength);
            destination[position++] = message.Code.Value;
        }

        header.Token.Span.CopyTo(destination[position..]);
        position += tokenLength;
        if (message.TryGetWireOptions(out ReadOnlyMemory<byte> wire))
        {
            // The options as they arrived: the parser validated them, and their encoding is the only one (RFC 7252 section 3.1).
            wire.Span.CopyTo(destination[position..]);
            position += wire.Length;
        }
        else if (message.HasOptions)
        {
            CoapOptionCollection options = message.Options;
            int previous = 0;
            using OptionBatches batches = new(options);
            for (int start = 0; start < options.Count;)
            {
                ReadOnlySpan<CoapOptionEntry> batch = batches.Next(start);
                position = WriteOptions(batch, destination, position, ref previous);
                start += batch.Length;
            }
        }

        if (!message.Payload.IsEmpty)
        {
            destination[position] = 0xFF;
        }
    }

    private static int WriteOptions(ReadOnlySpan<CoapOptionEntry> options, Span<byte> destination, int position, ref int previous)
    {
        foreach (CoapOptionEntry option in options)
        {
            int number = (int)option.Number;
            ReadOnlySpan<byte> value = option.Value.Span;
            int header = position++;
            int deltaNibble = WriteExtended(number - previous, destination, ref position);
            int lengthNibble = WriteExtended(value.Length, destination, ref position);
            destination[header] = (byte)((deltaNibble << 4) | lengthNibble);
            value.CopyTo(destination[position..]);
            position += value.Length;
            previous = number;
        }

        return position;
    }

    // RFC 7252 section 3.1: values 13-268 as nibble 13 plus (value - 13); 269-65804 as nibble 14 plus (value - 269).
    private static int WriteExtended(int value, Span<byte> destination, ref int position)
    {
        if (value < 13)
        {
            return value;
        }

        if (value < 269)
        {
            destination[position++] = (byte)(value - 13);
            return 13;
        }

        BinaryPrimitives.WriteUInt16BigEndian(destination[position..], (ushort)(value - 269));
        position += 2;
        return 14;
    }

    /// <summary>
    /// The options in spans: all at once when the collection holds an entry array, or decoded a batch at a
    /// time into pooled scratch space when it is a parsed message's compact table, so writing a message with
    /// a hundred thousand options back out allocates no entry array (RFC 8323 streams carry such messages).
    /// </summary>
    private readonly ref struct OptionBatches
    {
        private const int BatchLength = 256;

        private readonly CoapOptionCollection _options;
        private readonly CoapOptionEntry[]? _scratch;

        public OptionBatches(CoapOptionCollection options)
        {
            _options = options;
            _scratch = options.IsCompact ? ArrayPool<CoapOptionEntry>.Shared.Rent(BatchLength) : null;
        }

        public ReadOnlySpan<CoapOptionEntry> Next(int start) => _options.GetBatch(start, _scratch);

        public void Dispose()
        {
            if (_scratch is not null)
            {
                // Cleared: the entries refer to the message's memory, which the pool must not keep alive.
                ArrayPool<CoapOptionEntry>.Shared.Return(_scratch, clearArray: true);
            }
        }
    }
}
