namespace CoapNet.Messages;

/// <summary>
/// The value of a Block1 or Block2 option (RFC 7959 section 2.2): the block number NUM, the
/// more flag M and the size exponent SZX, where the block size is 2^(SZX + 4).
/// </summary>
public readonly struct CoapBlock : IEquatable<CoapBlock>
{
    /// <summary>The largest block number the 3-byte option can carry (2^20 - 1).</summary>
    public const int MaxNumber = 0xFFFFF;

    /// <summary>Creates a block value.</summary>
    /// <param name="number">The block number NUM, 0 to <see cref="MaxNumber"/>.</param>
    /// <param name="more">The M flag: more blocks follow.</param>
    /// <param name="sizeExponent">SZX, 0 (16 bytes) to 6 (1024 bytes); 7 is BERT over reliable transports (RFC 8323 section 6).</param>
    /// <exception cref="ArgumentOutOfRangeException">NUM or SZX is out of range.</exception>
    public CoapBlock(int number, bool more, int sizeExponent)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(number);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(number, MaxNumber);
        ArgumentOutOfRangeException.ThrowIfNegative(sizeExponent);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(sizeExponent, 7);
        Number = number;
        More = more;
        SizeExponent = sizeExponent;
    }

    /// <summary>The block number NUM.</summary>
    public int Number { get; }

    /// <summary>The M flag: more blocks follow this one.</summary>
    public bool More { get; }

    /// <summary>SZX, the size exponent.</summary>
    public int SizeExponent { get; }

    /// <summary>The block size in bytes, 2^(SZX + 4); 1024 for SZX 7 (BERT blocks are multiples of 1024).</summary>
    public int Size => 1 << (Math.Min(SizeExponent, 6) + 4);

    /// <summary>The byte offset of this block in the whole body: NUM x size.</summary>
    public long Offset => (long)Number * Size;

    /// <summary>The option value: NUM &lt;&lt; 4 | M &lt;&lt; 3 | SZX.</summary>
    public uint Encoded => ((uint)Number << 4) | (More ? 8u : 0u) | (uint)SizeExponent;

    /// <summary>Decodes an option value.</summary>
    /// <param name="value">The unsigned integer value of the option.</param>
    /// <returns>The block.</returns>
    /// <exception cref="ArgumentOutOfRangeException">The value needs more than 3 bytes.</exception>
    public static CoapBlock FromEncoded(uint value)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThan(value, 0xFFFFFFu);
        return new CoapBlock((int)(value >> 4), (value & 8) != 0, (int)(value & 7));
    }

    /// <summary>The size exponent for a block size: 16 -> 0, ..., 1024 -> 6.</summary>
    /// <param name="size">A power of two from 16 to 1024.</param>
    /// <returns>SZX.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="size"/> is not such a power of two.</exception>
    public static int GetSizeExponent(int size)
    {
        if (size < 16 || size > 1024 || (size & (size - 1)) != 0)
        {
            throw new ArgumentOutOfRangeException(nameof(size), size, "A block size is a power of two from 16 to 1024 (RFC 7959 section 2.2).");
        }

        return System.Numerics.BitOperations.Log2((uint)size) - 4;
    }

    /// <inheritdoc/>
    public bool Equals(CoapBlock other) => Encoded == other.Encoded;

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is CoapBlock other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => (int)Encoded;

    /// <summary>Compares two blocks.</summary>
    /// <param name="left">The first block.</param>
    /// <param name="right">The second block.</param>
    public static bool operator ==(CoapBlock left, CoapBlock right) => left.Equals(right);

    /// <summary>Compares two blocks.</summary>
    /// <param name="left">The first block.</param>
    /// <param name="right">The second block.</param>
    public static bool operator !=(CoapBlock left, CoapBlock right) => !left.Equals(right);

    /// <summary>"NUM/M/size", as in "2/1/64"; a BERT block (SZX 7, RFC 8323 section 6) as "2/1/BERT", since its size is the payload's.</summary>
    public override string ToString() => SizeExponent == 7 ? $"{Number}/{(More ? 1 : 0)}/BERT" : $"{Number}/{(More ? 1 : 0)}/{Size}";
}
