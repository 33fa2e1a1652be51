namespace CoapNet.Messages;

/// <summary>
/// Walks a message's options in wire order without building anything: over a parsed message's option bytes as
/// they arrived (decoding each header on the way, RFC 7252 section 3.1), or over an options collection. The
/// server reads every request's Uri-Path and critical options this way, so a request whose handler never asks
/// for <see cref="CoapMessage.Options"/> allocates no collection (issue 11).
/// </summary>
internal struct CoapOptionReader
{
    private readonly CoapOptionCollection? _collection;
    private readonly ReadOnlyMemory<byte> _wire;
    private int _position;
    private int _number;
    private CoapOptionEntry _current;

    /// <summary>Reads a collection.</summary>
    public CoapOptionReader(CoapOptionCollection collection)
    {
        _collection = collection;
        _position = -1;
    }

    /// <summary>Reads options as they are on the wire: already validated by the parser, without the payload marker.</summary>
    public CoapOptionReader(ReadOnlyMemory<byte> wire) => _wire = wire;

    /// <summary>The option at the current position.</summary>
    public readonly CoapOptionEntry Current => _current;

    /// <summary>Advances to the next option.</summary>
    /// <returns>False past the last option.</returns>
    public bool MoveNext()
    {
        if (_collection is not null)
        {
            if (++_position >= _collection.Count)
            {
                return false;
            }

            _current = _collection[_position];
            return true;
        }

        ReadOnlySpan<byte> wire = _wire.Span;
        if (_position >= wire.Length)
        {
            return false;
        }

        // The parser validated these bytes, so no nibble is 15 and every value lies within them.
        int header = wire[_position++];
        int delta = ReadExtended(wire, header >> 4);
        int length = ReadExtended(wire, header & 0x0F);
        _number += delta;
        _current = new CoapOptionEntry(_wire.Slice(_position, length), (CoapOptionNumber)_number);
        _position += length;
        return true;
    }

    /// <summary>Lets <c>foreach</c> walk the reader.</summary>
    public readonly CoapOptionReader GetEnumerator() => this;

    // RFC 7252 section 3.1: nibble 13 adds one byte (value - 13), nibble 14 two bytes (value - 269).
    private int ReadExtended(ReadOnlySpan<byte> wire, int nibble)
    {
        if (nibble < 13)
        {
            return nibble;
        }

        if (nibble == 13)
        {
            return wire[_position++] + 13;
        }

        int value = ((wire[_position] << 8) | wire[_position + 1]) + 269;
        _position += 2;
        return value;
    }
}
