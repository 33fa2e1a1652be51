using System.Buffers.Binary;
using System.Text;

namespace CoapNet.Messages;

/// <summary>
/// One option as it sits in a message: its number and a slice of its value bytes.
/// Decoding to a string or an integer happens on access, so parsing a message allocates
/// nothing per option.
/// </summary>
public readonly struct CoapOptionEntry : IEquatable<CoapOptionEntry>
{
    /// <summary>The largest value length the option encoding can express: 65535 + 269 (RFC 7252 section 3.1).</summary>
    public const int MaxValueLength = 65535 + 269;

    /// <summary>Creates an entry.</summary>
    /// <param name="number">The option number.</param>
    /// <param name="value">The encoded value.</param>
    /// <exception cref="ArgumentException">The value is longer than <see cref="MaxValueLength"/>.</exception>
    public CoapOptionEntry(CoapOptionNumber number, ReadOnlyMemory<byte> value)
    {
        if (value.Length > MaxValueLength)
        {
            throw new ArgumentException($"An option value holds at most {MaxValueLength} bytes (RFC 7252 section 3.1); this one has {value.Length}.", nameof(value));
        }

        Number = number;
        Value = value;
    }

    // The parser has already checked the length; skip the check on the hot path.
    internal CoapOptionEntry(ReadOnlyMemory<byte> value, CoapOptionNumber number)
    {
        Number = number;
        Value = value;
    }

    /// <summary>The option number.</summary>
    public CoapOptionNumber Number { get; }

    /// <summary>The encoded value bytes.</summary>
    public ReadOnlyMemory<byte> Value { get; }

    /// <summary>The registered name of the option, or its number.</summary>
    public string Name => CoapOptionDefinition.GetName(Number);

    /// <summary>True when the option is critical (RFC 7252 section 5.4.6).</summary>
    public bool IsCritical => Number.IsCritical();

    /// <summary>True when the option number is registered by an RFC.</summary>
    public bool IsRecognized => CoapOptionDefinition.TryGet(Number, out _);

    /// <summary>
    /// True when the value length is within the registered bounds. An out-of-bounds option must be
    /// treated as an unrecognized option (RFC 7252 section 5.4.3). Unregistered options are always valid here.
    /// </summary>
    public bool HasValidLength => CoapOptionDefinition.IsValidLength(Number, Value.Length);

    /// <summary>Decodes the value as a UTF-8 string.</summary>
    /// <returns>The string.</returns>
    public string GetString() => Encoding.UTF8.GetString(Value.Span);

    /// <summary>Decodes the value as an unsigned integer in network byte order (RFC 7252 section 3.2).</summary>
    /// <returns>The integer; 0 for an empty value.</returns>
    /// <exception cref="FormatException">The value is longer than 4 bytes.</exception>
    public uint GetUInt()
    {
        if (!TryGetUInt(out uint value))
        {
            throw new FormatException($"Option {Name} holds {Value.Length} bytes; an unsigned integer option holds at most 4.");
        }

        return value;
    }

    /// <summary>Decodes the value as an unsigned integer in network byte order.</summary>
    /// <param name="value">The integer; 0 for an empty value.</param>
    /// <returns>False when the value is longer than 4 bytes.</returns>
    public bool TryGetUInt(out uint value) => UIntCodec.TryRead(Value.Span, out value);

    /// <summary>Creates the typed view of this option (<see cref="StringOption"/>, <see cref="UIntOption"/>, ...), as the registry defines its format.</summary>
    /// <returns>A new typed option object.</returns>
    public CoapOption ToOption() => CoapOption.Create(Number, Value);

    /// <inheritdoc/>
    public bool Equals(CoapOptionEntry other) => Number == other.Number && Value.Span.SequenceEqual(other.Value.Span);

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is CoapOptionEntry other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode()
    {
        HashCode hash = default;
        hash.Add(Number);
        hash.AddBytes(Value.Span);
        return hash.ToHashCode();
    }

    /// <summary>Compares two entries by number and value bytes.</summary>
    /// <param name="left">The first entry.</param>
    /// <param name="right">The second entry.</param>
    public static bool operator ==(CoapOptionEntry left, CoapOptionEntry right) => left.Equals(right);

    /// <summary>Compares two entries by number and value bytes.</summary>
    /// <param name="left">The first entry.</param>
    /// <param name="right">The second entry.</param>
    public static bool operator !=(CoapOptionEntry left, CoapOptionEntry right) => !left.Equals(right);

    /// <summary>"Uri-Path: temperature", with the value shown in the option's format.</summary>
    public override string ToString() => ToOption().ToString();
}

/// <summary>The minimal big-endian unsigned integer encoding of RFC 7252 section 3.2.</summary>
internal static class UIntCodec
{
    public static int GetLength(uint value) => value == 0 ? 0 : value < 0x100 ? 1 : value < 0x10000 ? 2 : value < 0x1000000 ? 3 : 4;

    public static int Write(uint value, Span<byte> destination)
    {
        int length = GetLength(value);
        for (int i = length - 1; i >= 0; i--)
        {
            destination[i] = (byte)value;
            value >>= 8;
        }

        return length;
    }

    public static byte[] Encode(uint value)
    {
        // RFC 7252 section 3.2: 0 is the empty value, and one shared empty array needs no allocation.
        if (value == 0)
        {
            return [];
        }

        byte[] bytes = new byte[GetLength(value)];
        Write(value, bytes);
        return bytes;
    }

    public static bool TryRead(ReadOnlySpan<byte> bytes, out uint value)
    {
        // Leading zero bytes are tolerated on input (a sender SHOULD NOT send them, RFC 7252 section 3.2).
        switch (bytes.Length)
        {
            case 0:
                value = 0;
                return true;
            case 1:
                value = bytes[0];
                return true;
            case 2:
                value = BinaryPrimitives.ReadUInt16BigEndian(bytes);
                return true;
            case 3:
                value = (uint)(bytes[0] << 16 | bytes[1] << 8 | bytes[2]);
                return true;
            case 4:
                value = BinaryPrimitives.ReadUInt32BigEndian(bytes);
                return true;
            default:
                value = 0;
                return false;
        }
    }
}
