using System.Globalization;
using CoapNet.Messages;

namespace CoapNet.Cli;

/// <summary>
/// Content-Format names for the command line and the wire dump: short names (json), media types
/// (application/json) and numbers from the IANA registry (RFC 7252 section 12.3) all name one format.
/// </summary>
internal static class ContentFormats
{
    // Short name, media type, number. The short names follow libcoap's coap-client -t/-A where it has one.
    private static readonly (string Name, string MediaType, ushort Number)[] Known =
    [
        ("text", "text/plain", CoapContentFormat.TextPlain),
        ("cose-encrypt0", "application/cose; cose-type=\"cose-encrypt0\"", CoapContentFormat.CoseEncrypt0),
        ("link", "application/link-format", CoapContentFormat.LinkFormat),
        ("xml", "application/xml", CoapContentFormat.Xml),
        ("octet", "application/octet-stream", CoapContentFormat.OctetStream),
        ("exi", "application/exi", CoapContentFormat.Exi),
        ("json", "application/json", CoapContentFormat.Json),
        ("json-patch", "application/json-patch+json", CoapContentFormat.JsonPatchJson),
        ("merge-patch", "application/merge-patch+json", CoapContentFormat.MergePatchJson),
        ("cbor", "application/cbor", CoapContentFormat.Cbor),
        ("cwt", "application/cwt", CoapContentFormat.Cwt),
        ("senml+json", "application/senml+json", CoapContentFormat.SenmlJson),
        ("senml+cbor", "application/senml+cbor", CoapContentFormat.SenmlCbor),
    ];

    /// <summary>The short names, for the help text.</summary>
    public static string Names => string.Join(", ", Array.ConvertAll(Known, k => k.Name));

    /// <summary>Reads a short name, a media type or a number from 0 to 65535.</summary>
    /// <param name="text">What the user typed.</param>
    /// <param name="format">The Content-Format number.</param>
    /// <returns>True when the text names a format.</returns>
    public static bool TryParse(string text, out ushort format)
    {
        if (ushort.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out format))
        {
            return true;
        }

        foreach ((string name, string mediaType, ushort number) in Known)
        {
            if (string.Equals(text, name, StringComparison.OrdinalIgnoreCase) || string.Equals(text, mediaType, StringComparison.OrdinalIgnoreCase))
            {
                format = number;
                return true;
            }
        }

        return false;
    }

    /// <summary>The media type of a format ("text/plain"), or its number when it is not one of the known ones.</summary>
    /// <param name="format">The Content-Format number.</param>
    /// <returns>The display text.</returns>
    public static string Describe(ushort format)
    {
        foreach ((_, string mediaType, ushort number) in Known)
        {
            if (number == format)
            {
                return mediaType;
            }
        }

        return format.ToString(CultureInfo.InvariantCulture);
    }

    /// <summary>The format a file is served with, by its extension; application/octet-stream for any other.</summary>
    /// <param name="path">The file name or path.</param>
    /// <returns>The Content-Format number.</returns>
    public static ushort ForFile(string path) => Path.GetExtension(path).ToLowerInvariant() switch
    {
        ".txt" or ".text" or ".log" or ".md" => CoapContentFormat.TextPlain,
        ".wlnk" => CoapContentFormat.LinkFormat,
        ".xml" => CoapContentFormat.Xml,
        ".exi" => CoapContentFormat.Exi,
        ".json" => CoapContentFormat.Json,
        ".cbor" => CoapContentFormat.Cbor,
        ".cwt" => CoapContentFormat.Cwt,
        ".senml" => CoapContentFormat.SenmlJson,
        _ => CoapContentFormat.OctetStream,
    };

    /// <summary>True for formats whose payload is text, which the tool prints as text on a terminal.</summary>
    /// <param name="format">The Content-Format, or null.</param>
    /// <returns>True for text, link-format, XML, JSON and its relatives.</returns>
    public static bool IsText(ushort? format) => format is CoapContentFormat.TextPlain or CoapContentFormat.LinkFormat or CoapContentFormat.Xml
        or CoapContentFormat.Json or CoapContentFormat.JsonPatchJson or CoapContentFormat.MergePatchJson or CoapContentFormat.SenmlJson;

    /// <summary>
    /// True for CBOR and the formats built on it, shown in diagnostic notation: application/cbor, cbor-seq (RFC 8742),
    /// CWT, COSE, SenML and SenSML in CBOR, and RFC 9177's missing-blocks list.
    /// </summary>
    /// <param name="format">The Content-Format, or null.</param>
    /// <returns>Whether the payload is CBOR.</returns>
    public static bool IsCbor(ushort? format) => format is CoapContentFormat.CoseEncrypt0 or CoapContentFormat.Cbor or CoapContentFormat.Cwt or 63
        or 96 or 97 or 98 or 101 or 102 or CoapContentFormat.SenmlCbor or 113 or CoapContentFormat.MissingBlocksCborSeq;

    /// <summary>True for JSON and the formats built on it, which are indented on a terminal.</summary>
    /// <param name="format">The Content-Format, or null.</param>
    /// <returns>Whether the payload is JSON.</returns>
    public static bool IsJson(ushort? format) => format is CoapContentFormat.Json or CoapContentFormat.JsonPatchJson or CoapContentFormat.MergePatchJson
        or CoapContentFormat.SenmlJson or 111;
}
