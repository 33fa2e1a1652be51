namespace CoapNet.Messages;

/// <summary>
/// Commonly used numbers from the IANA "CoAP Content-Formats" registry (RFC 7252 section 12.3),
/// for the Content-Format and Accept options.
/// </summary>
public static class CoapContentFormat
{
    /// <summary>text/plain; charset=utf-8 (0).</summary>
    public const ushort TextPlain = 0;

    /// <summary>application/cose; cose-type="cose-encrypt0" (16).</summary>
    public const ushort CoseEncrypt0 = 16;

    /// <summary>application/link-format, RFC 6690 (40).</summary>
    public const ushort LinkFormat = 40;

    /// <summary>application/xml (41).</summary>
    public const ushort Xml = 41;

    /// <summary>application/octet-stream (42).</summary>
    public const ushort OctetStream = 42;

    /// <summary>application/exi (47).</summary>
    public const ushort Exi = 47;

    /// <summary>application/json (50).</summary>
    public const ushort Json = 50;

    /// <summary>application/json-patch+json (51).</summary>
    public const ushort JsonPatchJson = 51;

    /// <summary>application/merge-patch+json (52).</summary>
    public const ushort MergePatchJson = 52;

    /// <summary>application/cbor (60).</summary>
    public const ushort Cbor = 60;

    /// <summary>application/cwt (61).</summary>
    public const ushort Cwt = 61;

    /// <summary>application/senml+json (110).</summary>
    public const ushort SenmlJson = 110;

    /// <summary>application/senml+cbor (112).</summary>
    public const ushort SenmlCbor = 112;

    /// <summary>application/missing-blocks+cbor-seq (272): the block numbers a 4.08 asks to be sent again (RFC 9177 section 5).</summary>
    public const ushort MissingBlocksCborSeq = 272;
}
