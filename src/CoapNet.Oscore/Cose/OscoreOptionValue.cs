namespace CoapNet.Oscore.Cose;

/// <summary>
/// The value of the OSCORE option (RFC 8613 section 6.1): a flag byte (n, the Partial IV's length in bits 0-2; k, a kid
/// follows, bit 3; h, a kid context follows, bit 4; bits 5-7 reserved), the Partial IV, the kid context with its length
/// byte, and the kid, which takes the rest. Every field absent is an empty value.
/// </summary>
internal readonly struct OscoreOptionValue
{
    private const byte KidFlag = 0x08;
    private const byte KidContextFlag = 0x10;
    private const byte ReservedFlags = 0xE0;

    private OscoreOptionValue(ReadOnlyMemory<byte> partialIv, ReadOnlyMemory<byte>? kidContext, ReadOnlyMemory<byte>? kid)
    {
        PartialIv = partialIv;
        KidContext = kidContext;
        Kid = kid;
    }

    /// <summary>The Partial IV; empty when absent.</summary>
    public ReadOnlyMemory<byte> PartialIv { get; }

    /// <summary>The kid context, or null when absent.</summary>
    public ReadOnlyMemory<byte>? KidContext { get; }

    /// <summary>The kid, or null when absent (an empty kid is present: the flag says so).</summary>
    public ReadOnlyMemory<byte>? Kid { get; }

    /// <summary>The longest value: a flag byte, 5 bytes of Partial IV, a kid context of up to 255 bytes with its length, a kid of 7.</summary>
    public static int MaxLength(int kidContextLength) => 1 + 5 + 1 + kidContextLength + OscoreAlgorithm.MaxIdLength;

    /// <summary>Writes a value; returns its length (0 when every field is absent).</summary>
    public static int Write(Span<byte> destination, ReadOnlySpan<byte> partialIv, ReadOnlySpan<byte> kidContext, bool hasKidContext, ReadOnlySpan<byte> kid, bool hasKid)
    {
        if (partialIv.IsEmpty && !hasKidContext && !hasKid)
        {
            return 0;
        }

        int length = 1;
        byte flags = (byte)partialIv.Length;
        partialIv.CopyTo(destination[length..]);
        length += partialIv.Length;
        if (hasKidContext)
        {
            flags |= KidContextFlag;
            destination[length++] = (byte)kidContext.Length;
            kidContext.CopyTo(destination[length..]);
            length += kidContext.Length;
        }

        if (hasKid)
        {
            flags |= KidFlag;
            kid.CopyTo(destination[length..]);
            length += kid.Length;
        }

        destination[0] = flags;
        return length;
    }

    /// <summary>Reads a value; false when it is malformed (reserved bits or lengths, fields past the end, RFC 8613 section 6.1).</summary>
    public static bool TryRead(ReadOnlyMemory<byte> value, out OscoreOptionValue result)
    {
        result = default;
        if (value.IsEmpty)
        {
            result = new OscoreOptionValue(ReadOnlyMemory<byte>.Empty, null, null);
            return true;
        }

        ReadOnlySpan<byte> bytes = value.Span;
        byte flags = bytes[0];
        int n = flags & 0x07;
        if ((flags & ReservedFlags) != 0 || n > 5 || (flags == 0 && value.Length == 1))
        {
            // n of 6 and 7 are reserved; a flag byte of 0 is sent as an empty value instead.
            return false;
        }

        int position = 1;
        if (bytes.Length < position + n)
        {
            return false;
        }

        ReadOnlyMemory<byte> partialIv = value.Slice(position, n);
        position += n;
        ReadOnlyMemory<byte>? kidContext = null;
        if ((flags & KidContextFlag) != 0)
        {
            if (bytes.Length < position + 1 || bytes.Length < position + 1 + bytes[position])
            {
                return false;
            }

            int s = bytes[position];
            kidContext = value.Slice(position + 1, s);
            position += 1 + s;
        }

        ReadOnlyMemory<byte>? kid = null;
        if ((flags & KidFlag) != 0)
        {
            kid = value[position..];
        }
        else if (position != bytes.Length)
        {
            return false;
        }

        result = new OscoreOptionValue(partialIv, kidContext, kid);
        return true;
    }
}
