namespace CoapNet.Messages;

/// <summary>
/// Walks a message's options in wire order without building anything: over a parsed message's option bytes as
/// they arrived (decoding each header on the way, RFC 7252 section 3.1), or over an options collection. The
/// server reads every request's Uri-Path and critical options this way, so a request whose handler never asks
/// for <see cref="CoapMessage.Options"/> allocates no collection (issue 11).
/// </summary>
/// <remarks>
/// A ref struct holding the bytes as a span, so a step reads them without going through the memory's owner again, and
/// holding the current option as its number and where its value lies: a walk that only looks at numbers and lengths
/// (the critical-option check) makes no entry at all (issue 39).
/// </remarks>
internal ref struct CoapOptionReader
{
    private readonly CoapOptionCollection? _collection;
    private readonly ReadOnlyMemory<byte> _wire;
    private readonly ReadOnlySpan<byte> _bytes;
    private int _position;
    private int _number;
    private int _valueStart;
    private int _valueLength;

    /// <summary>Reads a collection.</summary>
    public CoapOptionReader(CoapOptionCollection collection)
    {
        _collection = collection;
        _position = -1;
    }

    /// <summary>Reads options as they are on the wire: already validated by the parser, without the payload marker.</summary>
    public CoapOptionReader(ReadOnlyMemory<byte> wire)
    {
        _wire = wire;
        _bytes = wire.Span;
    }

    /// <summary>The option at the current position.</summary>
    public readonly CoapOptionEntry Current
        => _collection is null ? new CoapOptionEntry(_wire.Slice(_valueStart, _valueLength), (CoapOptionNumber)_number) : _collection[_position];

    /// <summary>The current option's number, without making its entry.</summary>
    public readonly CoapOptionNumber Number => (CoapOptionNumber)_number;

    /// <summary>The length of the current option's value in bytes, without making its entry.</summary>
    public readonly int Length => _valueLength;

    /// <summary>The current option's value, without making its entry.</summary>
    public readonly ReadOnlySpan<byte> Value
        => _collection is null ? _bytes.Slice(_valueStart, _valueLength) : _collection[_position].Value.Span;

    /// <summary>Advances to the next option.</summary>
    /// <returns>False past the last option.</returns>
    public bool MoveNext()
    {
        if (_collection is not null)
        {
            return MoveNextInCollection();
        }

        ReadOnlySpan<byte> wire = _bytes;
        int position = _position;
        if ((uint)position >= (uint)wire.Length)
        {
            return false;
        }

        // The parser validated these bytes, so no nibble is 15 and every value lies within them.
        int header = wire[position++];
        _number += ReadExtended(wire, header >> 4, ref position);
        _valueLength = ReadExtended(wire, header & 0x0F, ref position);
        _valueStart = position;
        _position = position + _valueLength;
        return true;
    }

    /// <summary>Lets <c>foreach</c> walk the reader.</summary>
    public readonly CoapOptionReader GetEnumerator() => this;

    private bool MoveNextInCollection()
    {
        if (++_position >= _collection!.Count)
        {
            return false;
        }

        CoapOptionEntry entry = _collection[_position];
        _number = (int)entry.Number;
        _valueLength = entry.Value.Length;
        return true;
    }

    // RFC 7252 section 3.1: nibble 13 adds one byte (value - 13), nibble 14 two bytes (value - 269).
    private static int ReadExtended(ReadOnlySpan<byte> wire, int nibble, ref int position)
    {
        if (nibble < 13)
        {
            return nibble;
        }

        if (nibble == 13)
        {
            return wire[position++] + 13;
        }

        int value = ((wire[position] << 8) | wire[position + 1]) + 269;
        position += 2;
        return value;
    }
}
