namespace CoapNet.QBlock;

/// <summary>
/// The payload of a 4.08 Request Entity Incomplete with Content-Format application/missing-blocks+cbor-seq (272, RFC 9177
/// section 5): the missing block numbers as a CBOR sequence (RFC 8742) of unsigned integers, ascending, without an array
/// around them.
/// </summary>
internal static class MissingBlocks
{
    /// <summary>The numbers, each as a CBOR unsigned integer (major type 0) in its shortest form (RFC 8949 section 3.1).</summary>
    public static byte[] Encode(IReadOnlyList<int> numbers)
    {
        int length = 0;
        foreach (int number in numbers)
        {
            length += number < 24 ? 1 : number < 0x100 ? 2 : number < 0x10000 ? 3 : 5;
        }

        byte[] payload = new byte[length];
        int at = 0;
        foreach (int number in numbers)
        {
            uint value = (uint)number;
            if (value < 24)
            {
                payload[at++] = (byte)value;
            }
            else if (value < 0x100)
            {
                payload[at++] = 0x18;
                payload[at++] = (byte)value;
            }
            else if (value < 0x10000)
            {
                payload[at++] = 0x19;
                System.Buffers.Binary.BinaryPrimitives.WriteUInt16BigEndian(payload.AsSpan(at), (ushort)value);
                at += 2;
            }
            else
            {
                payload[at++] = 0x1a;
                System.Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(payload.AsSpan(at), value);
                at += 4;
            }
        }

        return payload;
    }

    /// <summary>
    /// The numbers in <paramref name="payload"/>; false when it is not a sequence of unsigned integers up to
    /// <paramref name="limit"/>, or they are not strictly ascending (RFC 9177 section 5: such a 4.08 is dropped).
    /// </summary>
    public static bool TryDecode(ReadOnlySpan<byte> payload, int limit, out List<int> numbers)
    {
        numbers = [];
        long previous = -1;
        while (!payload.IsEmpty)
        {
            byte initial = payload[0];
            if (initial >> 5 != 0)
            {
                return false;
            }

            int extra = (initial & 0x1f) switch
            {
                < 24 => 0,
                24 => 1,
                25 => 2,
                26 => 4,
                _ => -1,
            };
            if (extra < 0 || payload.Length < 1 + extra)
            {
                return false;
            }

            uint value = extra switch
            {
                0 => (uint)(initial & 0x1f),
                1 => payload[1],
                2 => System.Buffers.Binary.BinaryPrimitives.ReadUInt16BigEndian(payload[1..]),
                _ => System.Buffers.Binary.BinaryPrimitives.ReadUInt32BigEndian(payload[1..]),
            };
            if (value <= previous || value > limit)
            {
                return false;
            }

            numbers.Add((int)value);
            previous = value;
            payload = payload[(1 + extra)..];
        }

        return true;
    }
}
