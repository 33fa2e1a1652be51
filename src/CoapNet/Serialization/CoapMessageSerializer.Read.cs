using System.Buffers;
using System.Buffers.Binary;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using CoapNet.Messages;

namespace CoapNet.Serialization;

// Parsing from contiguous memory: the one synchronous core behind every read entry point.
public sealed partial class CoapMessageSerializer
{
    /// <summary>Parses one message, copying the bytes it keeps (token, option values, payload) into one new array.</summary>
    /// <param name="data">Exactly one datagram, or exactly one stream frame.</param>
    /// <returns>The message.</returns>
    /// <exception cref="CoapFormatException">The bytes are not a well-formed message.</exception>
    public CoapMessage Deserialize(ReadOnlySpan<byte> data)
    {
        if (!TryParse(data, default, out CoapMessage? message, out CoapFormatError error))
        {
            ThrowFormat(error);
        }

        return message;
    }

    /// <summary>
    /// Parses one message without copying: its token, option values and payload are slices of
    /// <paramref name="data"/>, which must stay unchanged while the message is in use.
    /// </summary>
    /// <param name="data">Exactly one datagram, or exactly one stream frame.</param>
    /// <returns>The message.</returns>
    /// <exception cref="CoapFormatException">The bytes are not a well-formed message.</exception>
    public CoapMessage Deserialize(ReadOnlyMemory<byte> data)
    {
        if (!TryParse(data.Span, data, out CoapMessage? message, out CoapFormatError error))
        {
            ThrowFormat(error);
        }

        return message;
    }

    /// <summary>Parses one message without throwing for malformed input; copies like <see cref="Deserialize(ReadOnlySpan{byte})"/>.</summary>
    /// <param name="data">Exactly one datagram, or exactly one stream frame.</param>
    /// <param name="message">The message, when well-formed.</param>
    /// <param name="error">Why the bytes are malformed, and where.</param>
    /// <returns>True when the bytes are a well-formed message.</returns>
    public bool TryDeserialize(ReadOnlySpan<byte> data, [NotNullWhen(true)] out CoapMessage? message, out CoapFormatError error)
        => TryParse(data, default, out message, out error);

    /// <summary>Parses one message without throwing and without copying; see <see cref="Deserialize(ReadOnlyMemory{byte})"/>.</summary>
    /// <param name="data">Exactly one datagram, or exactly one stream frame.</param>
    /// <param name="message">The message, when well-formed.</param>
    /// <param name="error">Why the bytes are malformed, and where.</param>
    /// <returns>True when the bytes are a well-formed message.</returns>
    public bool TryDeserialize(ReadOnlyMemory<byte> data, [NotNullWhen(true)] out CoapMessage? message, out CoapFormatError error)
        => TryParse(data.Span, data, out message, out error);

    /// <summary>
    /// Reads the next message from buffered stream bytes without consuming anything on incomplete
    /// input: the building block of a connection's read loop (RFC 8323 framing). With datagram
    /// framing the whole buffer is taken as one datagram.
    /// </summary>
    /// <param name="buffer">The bytes received so far.</param>
    /// <param name="message">The message, when <see cref="OperationStatus.Done"/>; it owns a copy of its bytes.</param>
    /// <param name="consumed">The end of the message, when done; the start of <paramref name="buffer"/> otherwise.</param>
    /// <param name="error">Why the bytes are malformed, when <see cref="OperationStatus.InvalidData"/>.</param>
    /// <returns>
    /// <see cref="OperationStatus.Done"/> with a message; <see cref="OperationStatus.NeedMoreData"/> when the
    /// buffer holds only part of a frame; <see cref="OperationStatus.InvalidData"/> when it is malformed
    /// (the connection cannot be resynchronized and should be aborted, RFC 8323 section 5.6).
    /// </returns>
    public OperationStatus ReadFrame(in ReadOnlySequence<byte> buffer, out CoapMessage? message, out SequencePosition consumed, out CoapFormatError error)
    {
        message = null;
        consumed = buffer.Start;
        long frameLength;
        if (Framing == CoapFraming.Datagram)
        {
            frameLength = buffer.Length;
            if (frameLength > _maxMessageSize)
            {
                error = new CoapFormatError(CoapFormatErrorReason.MessageTooLarge, _maxMessageSize);
                return OperationStatus.InvalidData;
            }
        }
        else
        {
            // The header is read in place when the first segment holds it (it nearly always does), else gathered.
            ReadOnlySpan<byte> first = buffer.FirstSpan;
            OperationStatus status;
            if (first.Length >= MaxStreamLengthHeader || buffer.IsSingleSegment)
            {
                status = ReadStreamLength(first[..Math.Min(first.Length, MaxStreamLengthHeader)], out frameLength, out error);
            }
            else
            {
                Span<byte> head = stackalloc byte[MaxStreamLengthHeader];
                ReadOnlySequence<byte> headBytes = buffer.Length > head.Length ? buffer.Slice(0, head.Length) : buffer;
                headBytes.CopyTo(head);
                status = ReadStreamLength(head[..(int)headBytes.Length], out frameLength, out error);
            }

            if (status != OperationStatus.Done)
            {
                return status;
            }

            if (buffer.Length < frameLength)
            {
                return OperationStatus.NeedMoreData;
            }

            if (first.Length >= frameLength)
            {
                // A frame within one segment (a pipe's segment holds many small ones) is parsed where it lies, the parser
                // copying once what the message keeps; only a frame that spans segments is gathered first.
                if (!TryParse(first[..(int)frameLength], default, out message, out error))
                {
                    return OperationStatus.InvalidData;
                }

                consumed = buffer.GetPosition(frameLength);
                return OperationStatus.Done;
            }
        }

        // A datagram, or a frame that spans segments. The buffer is recycled once the caller advances past it, so the
        // message gets its own copy: the frame's own array, or for a mid-sized frame the copying parser's arrays, off
        // the Large Object Heap (IsPooledFrame).
        ReadOnlySequence<byte> frame = buffer.Slice(0, frameLength);
        bool pooled = IsPooledFrame((int)frameLength);
        byte[] owned = pooled ? ArrayPool<byte>.Shared.Rent((int)frameLength) : GC.AllocateUninitializedArray<byte>((int)frameLength);
        frame.CopyTo(owned);
        bool parsed = pooled
            ? TryParse(owned.AsSpan(0, (int)frameLength), default, out message, out error)
            : TryParse(owned, owned, out message, out error);
        if (pooled)
        {
            ArrayPool<byte>.Shared.Return(owned);
        }

        if (!parsed)
        {
            return OperationStatus.InvalidData;
        }

        consumed = frame.End;
        return OperationStatus.Done;
    }

    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowFormat(CoapFormatError error) => throw new CoapFormatException(error);

    /// <summary>The bytes needed to know a stream frame's length: Len/TKL and up to 4 extended length bytes.</summary>
    private const int MaxStreamLengthHeader = 5;

    // RFC 8323 section 3.2: Len nibbles 13, 14 and 15 add 1, 2 and 4 extended length bytes.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int ExtendedLengthBytes(int lengthNibble) => lengthNibble < 13 ? 0 : lengthNibble == 13 ? 1 : lengthNibble == 14 ? 2 : 4;

    /// <summary>
    /// Reads the header of the RFC 8323 stream frame (section 3.2) that starts <paramref name="head"/>: the Len/TKL byte and
    /// the extended length, which give the frame's whole length before the rest of it is there. For a transport that
    /// carries frames in a framing of its own and must find their ends in the stream the connection layer writes, such as
    /// WebSockets (RFC 8323 section 4.2), where a frame travels as one WebSocket message with Len set to 0.
    /// </summary>
    /// <param name="head">The first bytes of the frame; five are always enough.</param>
    /// <param name="headerLength">The length of the Len/TKL byte and the extended length (1 to 5), when done.</param>
    /// <param name="frameLength">The frame's whole length, header, code, token, options and payload, when done.</param>
    /// <returns>
    /// <see cref="OperationStatus.Done"/>; <see cref="OperationStatus.NeedMoreData"/> when <paramref name="head"/> ends
    /// inside the extended length; <see cref="OperationStatus.InvalidData"/> when the token length is 9 to 15, reserved.
    /// </returns>
    public static OperationStatus ReadStreamFrameHeader(ReadOnlySpan<byte> head, out int headerLength, out long frameLength)
    {
        headerLength = 0;
        frameLength = 0;
        if (head.IsEmpty)
        {
            return OperationStatus.NeedMoreData;
        }

        int lengthNibble = head[0] >> 4;
        int tokenLength = head[0] & 0x0F;
        if (tokenLength > CoapMessage.MaxTokenLength)
        {
            return OperationStatus.InvalidData;
        }

        int extended = ExtendedLengthBytes(lengthNibble);
        if (head.Length < 1 + extended)
        {
            return OperationStatus.NeedMoreData;
        }

        // Len counts options, marker and payload; the frame adds Len/TKL, extended length, code and token.
        long bodyLength = extended switch
        {
            0 => lengthNibble,
            1 => 13L + head[1],
            2 => 269L + BinaryPrimitives.ReadUInt16BigEndian(head[1..]),
            _ => 65805L + BinaryPrimitives.ReadUInt32BigEndian(head[1..]),
        };
        headerLength = 1 + extended;
        frameLength = headerLength + 1 + tokenLength + bodyLength;
        return OperationStatus.Done;
    }

    /// <summary>Computes a stream frame's total length from its first bytes (1 + extended length bytes are enough).</summary>
    private OperationStatus ReadStreamLength(ReadOnlySpan<byte> head, out long frameLength, out CoapFormatError error)
    {
        error = default;
        OperationStatus status = ReadStreamFrameHeader(head, out _, out frameLength);
        if (status == OperationStatus.InvalidData)
        {
            error = new CoapFormatError(CoapFormatErrorReason.InvalidTokenLength, 0);
        }
        else if (status == OperationStatus.Done && frameLength > _maxMessageSize)
        {
            error = new CoapFormatError(CoapFormatErrorReason.MessageTooLarge, 0);
            return OperationStatus.InvalidData;
        }

        return status;
    }

    /// <summary>
    /// The core parser. <paramref name="memory"/> is the same bytes as <paramref name="data"/> for the
    /// zero-copy entry points, or empty when the message must own a copy.
    /// </summary>
    private bool TryParse(ReadOnlySpan<byte> data, ReadOnlyMemory<byte> memory, [NotNullWhen(true)] out CoapMessage? message, out CoapFormatError error)
    {
        message = null;
        CoapMessageType type = CoapMessageType.Confirmable;
        ushort messageId = 0;
        int tokenStart;
        int tokenLength;
        byte code;
        if (Framing == CoapFraming.Datagram)
        {
            if (data.Length > _maxMessageSize)
            {
                return Fail(CoapFormatErrorReason.MessageTooLarge, _maxMessageSize, out error);
            }

            if (data.Length < 4)
            {
                return Fail(CoapFormatErrorReason.MessageTooShort, data.Length, out error);
            }

            byte first = data[0];

            // RFC 7252 section 3: Ver is 01 in binary; other versions are silently ignored by the caller.
            if (first >> 6 != 1)
            {
                return Fail(CoapFormatErrorReason.UnsupportedVersion, 0, out error);
            }

            tokenLength = first & 0x0F;
            if (tokenLength > CoapMessage.MaxTokenLength)
            {
                return Fail(CoapFormatErrorReason.InvalidTokenLength, 0, out error);
            }

            type = (CoapMessageType)((first >> 4) & 0x03);
            code = data[1];
            messageId = BinaryPrimitives.ReadUInt16BigEndian(data[2..]);
            tokenStart = 4;
        }
        else
        {
            OperationStatus status = ReadStreamLength(data[..Math.Min(data.Length, MaxStreamLengthHeader)], out long frameLength, out error);
            if (status == OperationStatus.InvalidData)
            {
                return false;
            }

            if (status == OperationStatus.NeedMoreData || data.Length < frameLength)
            {
                return Fail(data.IsEmpty ? CoapFormatErrorReason.MessageTooShort : CoapFormatErrorReason.TruncatedFrame, data.Length, out error);
            }

            if (data.Length > frameLength)
            {
                return Fail(CoapFormatErrorReason.TrailingBytes, frameLength, out error);
            }

            tokenLength = data[0] & 0x0F;
            int codeOffset = 1 + ExtendedLengthBytes(data[0] >> 4);
            code = data[codeOffset];
            tokenStart = codeOffset + 1;
        }

        // RFC 7252 section 4.1: an Empty message has TKL 0 and nothing after the header.
        if (code == 0 && data.Length != tokenStart)
        {
            return Fail(CoapFormatErrorReason.EmptyMessageNotEmpty, tokenStart, out error);
        }

        int optionsStart = tokenStart + tokenLength;
        if (optionsStart > data.Length)
        {
            return Fail(CoapFormatErrorReason.TruncatedToken, data.Length, out error);
        }

        OptionSlots slots = new(stackalloc ulong[16]);
        try
        {
            // RFC 8323 section 5.2: signaling (class 7) options are numbered per signaling code, so the
            // registered bounds of request/response options (4 is ETag there, Block-Wise-Transfer here) do not apply.
            bool checkLengths = _rejectInvalidOptionLengths && code >> 5 != 7;
            if (!ScanOptions(data, optionsStart, checkLengths, _maxOptionCount, ref slots, out int payloadStart, out error))
            {
                return false;
            }

            CoapMessageBytes bytes = new(memory, 0);
            ReadOnlyMemory<byte> payload = memory.IsEmpty || payloadStart == data.Length ? default : memory[payloadStart..];
            bool contiguous = true;
            if (memory.IsEmpty && data.Length > tokenStart)
            {
                if (data.Length - tokenStart <= MaxCopySegment)
                {
                    // The copying entry points copy everything after the fixed header once; offsets shift by tokenStart.
                    byte[] copy = CopyUninitialized(data[tokenStart..]);
                    bytes = new CoapMessageBytes(copy, tokenStart);
                    payload = payloadStart == data.Length ? default : copy.AsMemory(payloadStart - tokenStart);
                }
                else
                {
                    contiguous = false;
                    bytes = CopySegmented(data, tokenStart, payloadStart, slots.Packed);
                    payload = payloadStart == data.Length ? default : CopyUninitialized(data[payloadStart..]);
                }
            }

            if (slots.Count == 0)
            {
                message = new CoapMessage(type, new CoapCode(code), messageId, tokenLength == 0 ? default : bytes.Slice(tokenStart, tokenLength), tokenLength, null, payload, 0, 0);
                return true;
            }

            // A message of a few options keeps their wire bytes, read on demand (CoapOptionReader); one with many, or
            // one copied in segments, gets its collection now, so that no lookup walks thousands of option headers.
            int optionsEnd = payloadStart == data.Length ? data.Length : payloadStart - 1;
            message = contiguous && slots.Count <= CompactOptionThreshold
                ? new CoapMessage(type, new CoapCode(code), messageId, bytes.Slice(tokenStart, optionsEnd - tokenStart), tokenLength, null, payload, slots.LastNumber, slots.LowNumbers)
                : new CoapMessage(type, new CoapCode(code), messageId, tokenLength == 0 ? default : bytes.Slice(tokenStart, tokenLength), tokenLength, slots.ToCollection(bytes), payload, 0, 0);
            return true;
        }
        finally
        {
            slots.Dispose();
        }
    }

    /// <summary>Builds the collection of options that <see cref="TryParse"/> validated and a message kept as wire bytes.</summary>
    internal static CoapOptionCollection ParseWireOptions(ReadOnlyMemory<byte> wire)
    {
        OptionSlots slots = new(stackalloc ulong[16]);
        try
        {
            ScanOptions(wire.Span, 0, checkLengths: false, int.MaxValue, ref slots, out _, out _);
            return slots.ToCollection(new CoapMessageBytes(wire, 0));
        }
        finally
        {
            slots.Dispose();
        }
    }

    /// <summary>
    /// The most bytes the copying entry points copy into one array: the largest byte array that stays below the
    /// Large Object Heap's 85,000-byte object threshold (the array header included), whose gen2 collections
    /// doubled the cost of parsing an option in messages of tens of thousands of options. A larger message is
    /// copied in pieces of at most this size, cut between options, plus its payload on its own, so every array
    /// but a payload of 85,000 bytes or more stays off the Large Object Heap; a 64 KiB payload with its head is
    /// still one copy. The largest option (5 + 65,804 bytes) fits in one piece.
    /// </summary>
    private const int MaxCopySegment = 84_000;

    /// <summary>Copies bytes into a new array without first zeroing it (every byte is overwritten).</summary>
    private static byte[] CopyUninitialized(ReadOnlySpan<byte> source)
    {
        byte[] copy = GC.AllocateUninitializedArray<byte>(source.Length);
        source.CopyTo(copy);
        return copy;
    }

    /// <summary>Copies data[start..end) (token and options) in segments of at most <see cref="MaxCopySegment"/> bytes, cut only after an option's value.</summary>
    private static CoapMessageBytes CopySegmented(ReadOnlySpan<byte> data, int start, int end, ReadOnlySpan<ulong> slots)
    {
        List<int> starts = [start];
        int segmentStart = start;
        int previousEnd = start;
        foreach (ulong slot in slots)
        {
            int valueEnd = CoapOptionTable.OffsetOf(slot) + CoapOptionTable.LengthOf(slot);
            if (valueEnd - segmentStart > MaxCopySegment && previousEnd > segmentStart)
            {
                starts.Add(previousEnd);
                segmentStart = previousEnd;
            }

            previousEnd = valueEnd;
        }

        byte[][] segments = new byte[starts.Count][];
        for (int k = 0; k < segments.Length; k++)
        {
            int segmentEnd = k + 1 < starts.Count ? starts[k + 1] : end;
            segments[k] = CopyUninitialized(data[starts[k]..segmentEnd]);
        }

        return new CoapMessageBytes(segments, [.. starts]);
    }

    /// <summary>
    /// Walks the options (RFC 7252 section 3.1) from <paramref name="position"/> to the payload
    /// marker or the end, validating each and recording (number, offset, length); at most
    /// <paramref name="maxOptions"/> of them, one compare per option.
    /// </summary>
    private static bool ScanOptions(ReadOnlySpan<byte> data, int position, bool checkLengths, int maxOptions, ref OptionSlots slots, out int payloadStart, out CoapFormatError error)
    {
        int number = 0;
        while ((uint)position < (uint)data.Length)
        {
            int start = position;
            int header = data[position++];
            if (header == 0xFF)
            {
                // RFC 7252 section 3: a marker followed by a zero-length payload is a format error.
                if (position == data.Length)
                {
                    payloadStart = 0;
                    return Fail(CoapFormatErrorReason.PayloadMarkerWithoutPayload, start, out error);
                }

                payloadStart = position;
                error = default;
                return true;
            }

            int delta = header >> 4;
            int length = header & 0x0F;
            if (delta >= 13)
            {
                if (delta == 15)
                {
                    payloadStart = 0;
                    return Fail(CoapFormatErrorReason.InvalidOptionDelta, start, out error);
                }

                if (!TryReadExtended(data, ref position, delta, out delta))
                {
                    payloadStart = 0;
                    return Fail(CoapFormatErrorReason.TruncatedOption, start, out error);
                }
            }

            if (length >= 13)
            {
                if (length == 15)
                {
                    payloadStart = 0;
                    return Fail(CoapFormatErrorReason.InvalidOptionLength, start, out error);
                }

                if (!TryReadExtended(data, ref position, length, out length))
                {
                    payloadStart = 0;
                    return Fail(CoapFormatErrorReason.TruncatedOption, start, out error);
                }
            }

            number += delta;
            if (number > ushort.MaxValue)
            {
                payloadStart = 0;
                return Fail(CoapFormatErrorReason.OptionNumberTooLarge, start, out error);
            }

            if (length > data.Length - position)
            {
                payloadStart = 0;
                return Fail(CoapFormatErrorReason.TruncatedOption, start, out error);
            }

            if (checkLengths && !CoapOptionDefinition.IsValidLength((CoapOptionNumber)number, length))
            {
                payloadStart = 0;
                return Fail(CoapFormatErrorReason.InvalidOptionValueLength, start, out error);
            }

            if (slots.Count == maxOptions)
            {
                payloadStart = 0;
                return Fail(CoapFormatErrorReason.TooManyOptions, start, out error);
            }

            slots.Add(number, position, length);
            position += length;
        }

        payloadStart = data.Length;
        error = default;
        return true;
    }

    // RFC 7252 section 3.1: nibble 13 adds one byte (value - 13), nibble 14 two bytes (value - 269).
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool TryReadExtended(ReadOnlySpan<byte> data, ref int position, int nibble, out int value)
    {
        if (nibble == 13)
        {
            if ((uint)position >= (uint)data.Length)
            {
                value = 0;
                return false;
            }

            value = data[position++] + 13;
            return true;
        }

        if (position + 1 >= data.Length)
        {
            value = 0;
            return false;
        }

        value = ((data[position] << 8) | data[position + 1]) + 269;
        position += 2;
        return true;
    }

    private static bool Fail(CoapFormatErrorReason reason, long offset, out CoapFormatError error)
    {
        error = new CoapFormatError(reason, offset);
        return false;
    }

    /// <summary>
    /// Above this many options a parsed message keeps them as a compact <see cref="CoapOptionTable"/>
    /// (8 B per option in 64 KiB chunks, copied from the scan's slots) instead of one array of 24-byte entries,
    /// each built with a slice and a GC write barrier. One array crossed the 85,000-byte Large Object Heap
    /// threshold from about 3,540 options; and at 1,024 options the table parsed in 7 us against 18 us for the
    /// array (same run, OptionScalingBenchmarks). Everyday messages have a handful of options and keep the
    /// array, which AsSpan and GetAll (the server pipeline uses them) return as it is.
    /// </summary>
    private const int CompactOptionThreshold = 64;

    /// <summary>
    /// Each option as <see cref="CoapOptionTable.Pack"/>ed (number, offset, length), on the stack for typical
    /// messages and in a pooled array beyond that, so the scan runs once and the collection is allocated at its exact size.
    /// </summary>
    private ref struct OptionSlots
    {
        private Span<ulong> _slots;
        private ulong[]? _rented;

        public OptionSlots(Span<ulong> initial)
        {
            _slots = initial;
            _rented = null;
            Count = 0;
        }

        public int Count { get; private set; }

        /// <summary>The number of the last option added: the highest, as options come in ascending order.</summary>
        public int LastNumber { get; private set; }

        /// <summary>A bit for each option number below 16 added (see CoapMessage's _lowWireOptions).</summary>
        public ushort LowNumbers { get; private set; }

        public readonly ReadOnlySpan<ulong> Packed => _slots[..Count];

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void Add(int number, int offset, int length)
        {
            if (Count == _slots.Length)
            {
                Grow();
            }

            _slots[Count++] = CoapOptionTable.Pack(number, offset, length);
            LastNumber = number;
            LowNumbers |= CoapMessage.LowOptionBit(number);
        }

        public readonly CoapOptionCollection ToCollection(in CoapMessageBytes bytes)
        {
            ReadOnlySpan<ulong> slots = _slots[..Count];
            if (slots.Length > CompactOptionThreshold)
            {
                return new CoapOptionCollection(new CoapOptionTable(slots, bytes));
            }

            CoapOptionEntry[] entries = new CoapOptionEntry[slots.Length];
            for (int i = 0; i < entries.Length; i++)
            {
                entries[i] = CoapOptionTable.Unpack(slots[i], bytes);
            }

            return new CoapOptionCollection(entries);
        }

        public void Dispose()
        {
            if (_rented is not null)
            {
                ArrayPool<ulong>.Shared.Return(_rented);
                _rented = null;
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private void Grow()
        {
            ulong[] larger = ArrayPool<ulong>.Shared.Rent(Math.Max(64, _slots.Length * 2));
            _slots.CopyTo(larger);
            if (_rented is not null)
            {
                ArrayPool<ulong>.Shared.Return(_rented);
            }

            _rented = larger;
            _slots = larger;
        }
    }
}
