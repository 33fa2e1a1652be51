using System.Runtime.CompilerServices;

namespace CoapNet.Messages;

/// <summary>
/// The options of a parsed message with many options, as compact 8-byte entries over the message's
/// backing buffer instead of 24-byte <see cref="CoapOptionEntry"/> values.
/// </summary>
/// <remarks>
/// <para>
/// Each entry packs the option number (16 bits), the value length (17 bits: at most 65,804, RFC 7252
/// section 3.1) and the value's offset in the parsed bytes (31 bits). The parser records exactly these
/// while it scans, so building the table is a copy.
/// </para>
/// <para>
/// The entries live in chunks of <see cref="ChunkLength"/> (64 KiB each), below the runtime's 85,000-byte
/// Large Object Heap threshold. One exact-size array of 24-byte entries crossed it from about 3,540
/// options, and the gen2 collections that Large Object Heap allocations trigger then more than doubled
/// the cost of parsing an option.
/// </para>
/// </remarks>
internal sealed class CoapOptionTable
{
    /// <summary>Entries per chunk: 8,192 x 8 B = 64 KiB, below the Large Object Heap threshold.</summary>
    public const int ChunkLength = 8192;

    private const int ChunkShift = 13;
    private const int OffsetBits = 31;
    private const int LengthBits = 17;
    private const int NumberShift = OffsetBits + LengthBits;

    private readonly CoapMessageBytes _bytes;
    private readonly ulong[][] _chunks;

    /// <summary>Creates a table from packed entries (see <see cref="Pack"/>), copying them into chunks.</summary>
    /// <param name="packed">The entries in wire order; their offsets index the parsed bytes.</param>
    /// <param name="bytes">Where the message keeps the parsed bytes.</param>
    public CoapOptionTable(ReadOnlySpan<ulong> packed, in CoapMessageBytes bytes)
    {
        _bytes = bytes;
        Count = packed.Length;
        _chunks = new ulong[(packed.Length + ChunkLength - 1) >> ChunkShift][];
        for (int i = 0; i < _chunks.Length; i++)
        {
            ReadOnlySpan<ulong> part = packed.Slice(i << ChunkShift, Math.Min(ChunkLength, packed.Length - (i << ChunkShift)));
            ulong[] chunk = GC.AllocateUninitializedArray<ulong>(part.Length);
            part.CopyTo(chunk);
            _chunks[i] = chunk;
        }
    }

    /// <summary>The number of options.</summary>
    public int Count { get; }

    /// <summary>Packs one option as the parser records it.</summary>
    /// <param name="number">The option number, at most 65,535.</param>
    /// <param name="offset">The value's offset in the parsed bytes, below 2^31.</param>
    /// <param name="length">The value's length, at most 65,804.</param>
    /// <returns>The packed entry.</returns>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong Pack(int number, int offset, int length) => ((ulong)(uint)number << NumberShift) | ((ulong)(uint)length << OffsetBits) | (uint)offset;

    /// <summary>The option number of a packed entry.</summary>
    /// <param name="packed">The packed entry.</param>
    /// <returns>The number.</returns>
    public static CoapOptionNumber NumberOf(ulong packed) => (CoapOptionNumber)(ushort)(packed >> NumberShift);

    /// <summary>The value offset of a packed entry in the parsed bytes.</summary>
    /// <param name="packed">The packed entry.</param>
    /// <returns>The offset.</returns>
    public static int OffsetOf(ulong packed) => (int)(packed & int.MaxValue);

    /// <summary>The value length of a packed entry.</summary>
    /// <param name="packed">The packed entry.</param>
    /// <returns>The length.</returns>
    public static int LengthOf(ulong packed) => (int)(packed >> OffsetBits) & ((1 << LengthBits) - 1);

    /// <summary>The entry of a packed option whose value lies in <paramref name="bytes"/>.</summary>
    /// <param name="packed">The packed entry.</param>
    /// <param name="bytes">Where the message keeps the parsed bytes.</param>
    /// <returns>The entry.</returns>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static CoapOptionEntry Unpack(ulong packed, in CoapMessageBytes bytes) => new(bytes.Slice(OffsetOf(packed), LengthOf(packed)), NumberOf(packed));

    /// <summary>The option at <paramref name="index"/>; the caller has checked the bounds.</summary>
    /// <param name="index">The position.</param>
    public CoapOptionEntry this[int index] => Unpack(_chunks[index >> ChunkShift][index & (ChunkLength - 1)], _bytes);

    /// <summary>The option number at <paramref name="index"/>, without building the entry.</summary>
    /// <param name="index">The position.</param>
    /// <returns>The number.</returns>
    public CoapOptionNumber NumberAt(int index) => NumberOf(_chunks[index >> ChunkShift][index & (ChunkLength - 1)]);

    /// <summary>Decodes the entries from <paramref name="start"/> into <paramref name="destination"/>, as many as fit.</summary>
    /// <param name="start">The first position.</param>
    /// <param name="destination">Where to write.</param>
    /// <returns>How many entries were written.</returns>
    public int CopyTo(int start, Span<CoapOptionEntry> destination)
    {
        int count = Math.Min(destination.Length, Count - start);
        int written = 0;
        while (written < count)
        {
            int index = start + written;
            ReadOnlySpan<ulong> chunk = _chunks[index >> ChunkShift].AsSpan(index & (ChunkLength - 1));
            int n = Math.Min(chunk.Length, count - written);
            for (int i = 0; i < n; i++)
            {
                destination[written + i] = Unpack(chunk[i], _bytes);
            }

            written += n;
        }

        return written;
    }
}
