using System.Buffers.Binary;

namespace CoapNet.Oscore.Cose;

/// <summary>
/// The few CBOR items (RFC 8949) OSCORE writes: the HKDF info array (RFC 8613 section 3.2.1), the external_aad array and
/// the Enc_structure of the AAD (section 5.4). Arrays, byte and text strings, unsigned integers and null; definite
/// lengths only, each head in its shortest form, as deterministic encoding requires.
/// </summary>
internal ref struct Cbor
{
    private readonly Span<byte> _destination;

    public Cbor(Span<byte> destination)
    {
        _destination = destination;
        Length = 0;
    }

    /// <summary>How many bytes are written.</summary>
    public int Length { get; private set; }

    /// <summary>The largest head: an initial byte and an 8-byte argument.</summary>
    public const int MaxHeadLength = 9;

    public void WriteArray(int count) => WriteHead(4, (ulong)count);

    public void WriteUInt(ulong value) => WriteHead(0, value);

    public void WriteNull() => _destination[Length++] = 0xF6;

    public void WriteBytes(scoped ReadOnlySpan<byte> value)
    {
        WriteHead(2, (ulong)value.Length);
        value.CopyTo(_destination[Length..]);
        Length += value.Length;
    }

    /// <summary>A text string of ASCII characters (the labels "Key", "IV", "Encrypt0").</summary>
    public void WriteAscii(string value)
    {
        WriteHead(3, (ulong)value.Length);
        foreach (char c in value)
        {
            _destination[Length++] = (byte)c;
        }
    }

    /// <summary>The head of a byte string whose <paramref name="length"/> bytes the caller writes next.</summary>
    public void WriteBytesHead(int length) => WriteHead(2, (ulong)length);

    private void WriteHead(int major, ulong argument)
    {
        byte type = (byte)(major << 5);
        Span<byte> destination = _destination[Length..];
        if (argument < 24)
        {
            destination[0] = (byte)(type | (byte)argument);
            Length += 1;
        }
        else if (argument <= byte.MaxValue)
        {
            destination[0] = (byte)(type | 24);
            destination[1] = (byte)argument;
            Length += 2;
        }
        else if (argument <= ushort.MaxValue)
        {
            destination[0] = (byte)(type | 25);
            BinaryPrimitives.WriteUInt16BigEndian(destination[1..], (ushort)argument);
            Length += 3;
        }
        else if (argument <= uint.MaxValue)
        {
            destination[0] = (byte)(type | 26);
            BinaryPrimitives.WriteUInt32BigEndian(destination[1..], (uint)argument);
            Length += 5;
        }
        else
        {
            destination[0] = (byte)(type | 27);
            BinaryPrimitives.WriteUInt64BigEndian(destination[1..], argument);
            Length += 9;
        }
    }
}
