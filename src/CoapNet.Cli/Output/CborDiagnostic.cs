using System.Formats.Cbor;
using System.Globalization;
using System.Text;

namespace CoapNet.Cli.Output;

/// <summary>
/// CBOR (RFC 8949) in diagnostic notation (section 8, with the indefinite-length forms of Appendix G.2), for people to
/// read: <c>{"t": 42, "u": h'0a0b', "v": [1.5, true, null]}</c>. A container that fits a line stays on one; a larger one
/// is broken over lines and indented. A CBOR sequence (RFC 8742) is shown one item a line.
/// </summary>
internal static class CborDiagnostic
{
    // A container whose items fit in this many characters is written on one line.
    private const int LineWidth = 72;

    /// <summary>Renders <paramref name="cbor"/> in diagnostic notation.</summary>
    /// <param name="cbor">The encoded items.</param>
    /// <param name="diagnostic">The notation, one top-level item a line.</param>
    /// <param name="error">Why the bytes are not CBOR, when they are not.</param>
    /// <returns>True when every byte was part of a well-formed item.</returns>
    public static bool TryFormat(ReadOnlyMemory<byte> cbor, out string diagnostic, out string? error)
    {
        CborReader reader = new(cbor, CborConformanceMode.Lax, allowMultipleRootLevelValues: true);
        StringBuilder text = new();
        try
        {
            while (reader.PeekState() != CborReaderState.Finished)
            {
                if (text.Length > 0)
                {
                    text.Append('\n');
                }

                text.Append(Item(reader, 0));
            }

            diagnostic = text.ToString();
            error = null;
            return true;
        }
        catch (Exception e) when (e is CborContentException or InvalidOperationException or FormatException)
        {
            diagnostic = string.Empty;
            error = $"not well-formed CBOR at byte {cbor.Length - reader.BytesRemaining}: {e.Message}";
            return false;
        }
    }

    /// <summary>
    /// One data item, its nested items written at <paramref name="depth"/> + 1. The recursion is bounded by the reader,
    /// which refuses items nested deeper than 64, so a hostile payload of nested arrays cannot exhaust the stack.
    /// </summary>
    private static string Item(CborReader reader, int depth)
    {
        switch (reader.PeekState())
        {
            case CborReaderState.UnsignedInteger:
                return reader.ReadUInt64().ToString(CultureInfo.InvariantCulture);
            case CborReaderState.NegativeInteger:
                // The encoded value n stands for -1 - n, which may lie below long.MinValue (section 3.1, major type 1).
                return (-1 - (System.Numerics.BigInteger)reader.ReadCborNegativeIntegerRepresentation()).ToString(CultureInfo.InvariantCulture);
            case CborReaderState.ByteString:
                return "h'" + Convert.ToHexStringLower(reader.ReadByteString()) + "'";
            case CborReaderState.TextString:
                return Quote(reader.ReadTextString());
            case CborReaderState.StartIndefiniteLengthByteString:
                reader.ReadStartIndefiniteLengthByteString();
                return Chunks(reader, static r => "h'" + Convert.ToHexStringLower(r.ReadByteString()) + "'", CborReaderState.EndIndefiniteLengthByteString, static r => r.ReadEndIndefiniteLengthByteString());
            case CborReaderState.StartIndefiniteLengthTextString:
                reader.ReadStartIndefiniteLengthTextString();
                return Chunks(reader, static r => Quote(r.ReadTextString()), CborReaderState.EndIndefiniteLengthTextString, static r => r.ReadEndIndefiniteLengthTextString());
            case CborReaderState.StartArray:
                return Array(reader, depth);
            case CborReaderState.StartMap:
                return Map(reader, depth);
            case CborReaderState.Tag:
                // Section 8.1: a tag is its number followed by the tagged item in parentheses.
                ulong tag = (ulong)reader.ReadTag();
                return tag.ToString(CultureInfo.InvariantCulture) + "(" + Item(reader, depth + 1) + ")";
            case CborReaderState.HalfPrecisionFloat:
                return Number((double)reader.ReadHalf());
            case CborReaderState.SinglePrecisionFloat:
                return Number(reader.ReadSingle());
            case CborReaderState.DoublePrecisionFloat:
                return Number(reader.ReadDouble());
            case CborReaderState.Boolean:
                return reader.ReadBoolean() ? "true" : "false";
            case CborReaderState.Null:
                reader.ReadNull();
                return "null";
            case CborReaderState.Undefined:
            case CborReaderState.SimpleValue:
                CborSimpleValue simple = reader.ReadSimpleValue();
                return simple == CborSimpleValue.Undefined ? "undefined" : "simple(" + ((byte)simple).ToString(CultureInfo.InvariantCulture) + ")";
            default:
                throw new FormatException($"unexpected {reader.PeekState()}.");
        }
    }

    private static string Array(CborReader reader, int depth)
    {
        int? length = reader.ReadStartArray();
        List<string> items = [];
        while (reader.PeekState() != CborReaderState.EndArray)
        {
            items.Add(Item(reader, depth + 1));
        }

        reader.ReadEndArray();
        return Layout(length is null ? "[_ " : "[", "]", items, depth);
    }

    private static string Map(CborReader reader, int depth)
    {
        int? length = reader.ReadStartMap();
        List<string> pairs = [];
        while (reader.PeekState() != CborReaderState.EndMap)
        {
            string key = Item(reader, depth + 1);
            pairs.Add(key + ": " + Item(reader, depth + 1));
        }

        reader.ReadEndMap();
        return Layout(length is null ? "{_ " : "{", "}", pairs, depth);
    }

    /// <summary>Appendix G.2: an indefinite-length string is its chunks in parentheses, after an underscore.</summary>
    private static string Chunks(CborReader reader, Func<CborReader, string> chunk, CborReaderState end, Action<CborReader> readEnd)
    {
        List<string> chunks = [];
        while (reader.PeekState() != end)
        {
            chunks.Add(chunk(reader));
        }

        readEnd(reader);
        return "(_ " + string.Join(", ", chunks) + ")";
    }

    /// <summary>On one line when short and flat enough, else one item a line, indented two spaces past the container.</summary>
    private static string Layout(string open, string close, List<string> items, int depth)
    {
        if (items.Count == 0)
        {
            // "[]", and "[_ ]" for an empty indefinite-length array (Appendix G.2).
            return open + close;
        }

        int width = open.Length + close.Length + (2 * (items.Count - 1));
        bool flat = true;
        foreach (string item in items)
        {
            width += item.Length;
            flat &= !item.Contains('\n', StringComparison.Ordinal);
        }

        if (flat && width + (2 * depth) <= LineWidth)
        {
            return open + string.Join(", ", items) + close;
        }

        string indent = new(' ', 2 * (depth + 1));
        StringBuilder text = new(open.TrimEnd());
        for (int i = 0; i < items.Count; i++)
        {
            text.Append('\n').Append(indent).Append(items[i]).Append(i < items.Count - 1 ? "," : string.Empty);
        }

        return text.Append('\n').Append(' ', 2 * depth).Append(close).ToString();
    }

    /// <summary>Section 8: a float always shows it is one (1.0, not 1); NaN and the infinities by name.</summary>
    private static string Number(double value)
    {
        if (double.IsNaN(value))
        {
            return "NaN";
        }

        if (double.IsInfinity(value))
        {
            return value > 0 ? "Infinity" : "-Infinity";
        }

        // "R" writes 1E+300 and 5.9E-08; the notation's examples write 1.0e+300 and 5.9e-8.
        string text = value.ToString("R", CultureInfo.InvariantCulture);
        int e = text.IndexOf('E', StringComparison.Ordinal);
        string mantissa = e < 0 ? text : text[..e];
        if (!mantissa.Contains('.', StringComparison.Ordinal))
        {
            mantissa += ".0";
        }

        if (e < 0)
        {
            return mantissa;
        }

        char sign = text[e + 1];
        string digits = text[(e + 2)..].TrimStart('0');
        return mantissa + "e" + sign + (digits.Length == 0 ? "0" : digits);
    }

    /// <summary>A text string as JSON writes one (section 8): quotes, backslash escapes, control characters as \u00XX.</summary>
    private static string Quote(string value)
    {
        StringBuilder text = new(value.Length + 2);
        text.Append('"');
        foreach (char c in value)
        {
            switch (c)
            {
                case '"':
                    text.Append("\\\"");
                    break;
                case '\\':
                    text.Append("\\\\");
                    break;
                case '\n':
                    text.Append("\\n");
                    break;
                case '\r':
                    text.Append("\\r");
                    break;
                case '\t':
                    text.Append("\\t");
                    break;
                case < ' ' or '\u007f':
                    text.Append("\\u").Append(((int)c).ToString("x4", CultureInfo.InvariantCulture));
                    break;
                default:
                    text.Append(c);
                    break;
            }
        }

        return text.Append('"').ToString();
    }
}
