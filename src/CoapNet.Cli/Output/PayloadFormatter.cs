using System.Buffers;
using System.Globalization;
using System.Text;
using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Unicode;
using CoapNet.Messages;

namespace CoapNet.Cli.Output;

/// <summary>
/// A payload shown for a reader, by its Content-Format (RFC 7252 section 12.3): CBOR and the formats built on it in
/// diagnostic notation (RFC 8949 section 8), JSON and its relatives indented, text as it is, any other bytes as a hex
/// dump. What cannot be shown as its format says (CBOR that is not well-formed, JSON that does not parse) is shown as
/// bytes or text, with a warning saying why.
/// </summary>
internal static class PayloadFormatter
{
    private static readonly JsonWriterOptions Indented = new() { Indented = true, Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping };

    /// <summary>The payload as text for a terminal.</summary>
    /// <param name="payload">The payload.</param>
    /// <param name="contentFormat">Its Content-Format, or null.</param>
    /// <param name="warning">Why the payload is not shown as its format says, or null.</param>
    /// <returns>The text.</returns>
    public static string Format(ReadOnlyMemory<byte> payload, ushort? contentFormat, out string? warning)
    {
        warning = null;
        if (ContentFormats.IsCbor(contentFormat))
        {
            if (CborDiagnostic.TryFormat(payload, out string diagnostic, out string? error))
            {
                return diagnostic;
            }

            warning = $"the {ContentFormats.Describe(contentFormat!.Value)} payload is {error}; shown as bytes.";
            return HexDump(payload.Span);
        }

        if (ContentFormats.IsJson(contentFormat))
        {
            if (TryIndentJson(payload, out string? json))
            {
                return json;
            }

            warning = $"the {ContentFormats.Describe(contentFormat!.Value)} payload does not parse as JSON; shown as it came.";
        }

        return IsText(payload.Span, contentFormat) ? Encoding.UTF8.GetString(payload.Span) : HexDump(payload.Span);
    }

    /// <summary>True for a text format, or for valid UTF-8 with no Content-Format (RFC 7252 section 5.10.3 leaves it to the client).</summary>
    /// <param name="payload">The payload.</param>
    /// <param name="contentFormat">Its Content-Format, or null.</param>
    /// <returns>Whether it is shown as text.</returns>
    public static bool IsText(ReadOnlySpan<byte> payload, ushort? contentFormat)
        => (ContentFormats.IsText(contentFormat) || contentFormat is null) && Utf8.IsValid(payload);

    private static bool TryIndentJson(ReadOnlyMemory<byte> payload, out string json)
    {
        try
        {
            using JsonDocument document = JsonDocument.Parse(payload, new JsonDocumentOptions { MaxDepth = 256 });
            ArrayBufferWriter<byte> buffer = new(payload.Length * 2);
            using (Utf8JsonWriter writer = new(buffer, Indented))
            {
                document.WriteTo(writer);
            }

            json = Encoding.UTF8.GetString(buffer.WrittenSpan);
            return true;
        }
        catch (JsonException)
        {
            json = string.Empty;
            return false;
        }
    }

    /// <summary>16 bytes a line: offset, hex, and the printable ASCII beside it.</summary>
    private static string HexDump(ReadOnlySpan<byte> bytes)
    {
        StringBuilder dump = new();
        for (int offset = 0; offset < bytes.Length; offset += 16)
        {
            ReadOnlySpan<byte> row = bytes.Slice(offset, Math.Min(16, bytes.Length - offset));
            dump.Append(offset.ToString("x8", CultureInfo.InvariantCulture)).Append("  ");
            for (int i = 0; i < 16; i++)
            {
                dump.Append(i < row.Length ? row[i].ToString("x2", CultureInfo.InvariantCulture) + " " : "   ");
            }

            dump.Append(' ');
            foreach (byte b in row)
            {
                dump.Append(b is >= 0x20 and < 0x7f ? (char)b : '.');
            }

            dump.Append('\n');
        }

        return dump.ToString();
    }
}
