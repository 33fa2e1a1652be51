namespace CoapNet.Messages;

/// <summary>
/// Where the token and option values of a parsed message live: one memory whose index 0 is a given
/// offset of the parsed bytes, or, for a large copied message, several arrays each below the
/// Large Object Heap threshold (85,000 bytes), cut between options so that no value spans two of them.
/// </summary>
internal readonly struct CoapMessageBytes
{
    private readonly ReadOnlyMemory<byte> _source;
    private readonly int _shift;
    private readonly byte[][]? _segments;
    private readonly int[]? _starts;

    /// <summary>One memory holding the parsed bytes from offset <paramref name="shift"/> on.</summary>
    public CoapMessageBytes(ReadOnlyMemory<byte> source, int shift)
    {
        _source = source;
        _shift = shift;
    }

    /// <summary>Segments in order; segment k holds the parsed bytes from offset starts[k] on.</summary>
    public CoapMessageBytes(byte[][] segments, int[] starts)
    {
        _segments = segments;
        _starts = starts;
    }

    /// <summary>The value at <paramref name="offset"/> of the parsed bytes; it lies within one segment.</summary>
    public ReadOnlyMemory<byte> Slice(int offset, int length)
    {
        if (_segments is null)
        {
            return _source.Slice(offset - _shift, length);
        }

        // Few segments (one per 84,000 bytes), so a binary search for the last start at or before offset is cheap.
        int k = Array.BinarySearch(_starts!, offset);
        k = k >= 0 ? k : ~k - 1;
        return _segments[k].AsMemory(offset - _starts![k], length);
    }
}
