namespace CoapNet.Messages;

/// <summary>
/// Option numbers from the IANA "CoAP Option Numbers" registry that an RFC defines.
/// </summary>
/// <remarks>
/// Any value from 0 to 65535 is a valid option number on the wire; an unregistered one is
/// carried as <c>(CoapOptionNumber)n</c> and survives a round trip unchanged. Whether an option
/// is critical, unsafe to forward or excluded from the cache key follows from its number
/// alone (RFC 7252 section 5.4.6); see <see cref="CoapOptionNumberExtensions.IsCritical(CoapOptionNumber)"/>.
/// </remarks>
public enum CoapOptionNumber : ushort
{
    /// <summary>If-Match (1), opaque 0-8 bytes, repeatable (RFC 7252 section 5.10.8.1).</summary>
    IfMatch = 1,

    /// <summary>Uri-Host (3), string 1-255 bytes (RFC 7252 section 5.10.1).</summary>
    UriHost = 3,

    /// <summary>ETag (4), opaque 1-8 bytes, repeatable in requests (RFC 7252 section 5.10.6).</summary>
    ETag = 4,

    /// <summary>If-None-Match (5), empty (RFC 7252 section 5.10.8.2).</summary>
    IfNoneMatch = 5,

    /// <summary>Observe (6), uint 0-3 bytes (RFC 7641 section 2).</summary>
    Observe = 6,

    /// <summary>Uri-Port (7), uint 0-2 bytes (RFC 7252 section 5.10.1).</summary>
    UriPort = 7,

    /// <summary>Location-Path (8), string 0-255 bytes, repeatable (RFC 7252 section 5.10.7).</summary>
    LocationPath = 8,

    /// <summary>OSCORE (9), opaque 0-255 bytes (RFC 8613 section 2).</summary>
    Oscore = 9,

    /// <summary>Uri-Path (11), string 0-255 bytes, repeatable (RFC 7252 section 5.10.1).</summary>
    UriPath = 11,

    /// <summary>Content-Format (12), uint 0-2 bytes (RFC 7252 section 5.10.3).</summary>
    ContentFormat = 12,

    /// <summary>Max-Age (14), uint 0-4 bytes, default 60 seconds (RFC 7252 section 5.10.5).</summary>
    MaxAge = 14,

    /// <summary>Uri-Query (15), string 0-255 bytes, repeatable (RFC 7252 section 5.10.1).</summary>
    UriQuery = 15,

    /// <summary>Hop-Limit (16), uint 1 byte (RFC 8768 section 3).</summary>
    HopLimit = 16,

    /// <summary>Accept (17), uint 0-2 bytes (RFC 7252 section 5.10.4).</summary>
    Accept = 17,

    /// <summary>Q-Block1 (19), uint 0-3 bytes (RFC 9177 section 4).</summary>
    QBlock1 = 19,

    /// <summary>Location-Query (20), string 0-255 bytes, repeatable (RFC 7252 section 5.10.7).</summary>
    LocationQuery = 20,

    /// <summary>EDHOC (21), empty (RFC 9668 section 3.1).</summary>
    Edhoc = 21,

    /// <summary>Block2 (23), uint 0-3 bytes (RFC 7959 section 2.1).</summary>
    Block2 = 23,

    /// <summary>Block1 (27), uint 0-3 bytes (RFC 7959 section 2.1).</summary>
    Block1 = 27,

    /// <summary>Size2 (28), uint 0-4 bytes (RFC 7959 section 4).</summary>
    Size2 = 28,

    /// <summary>Q-Block2 (31), uint 0-3 bytes, repeatable (RFC 9177 section 4).</summary>
    QBlock2 = 31,

    /// <summary>Proxy-Uri (35), string 1-1034 bytes (RFC 7252 section 5.10.2).</summary>
    ProxyUri = 35,

    /// <summary>Proxy-Scheme (39), string 1-255 bytes (RFC 7252 section 5.10.2).</summary>
    ProxyScheme = 39,

    /// <summary>Size1 (60), uint 0-4 bytes (RFC 7252 section 5.10.9).</summary>
    Size1 = 60,

    /// <summary>Echo (252), opaque 1-40 bytes (RFC 9175 section 2.2).</summary>
    Echo = 252,

    /// <summary>No-Response (258), uint 0-1 bytes (RFC 7967 section 2).</summary>
    NoResponse = 258,

    /// <summary>Request-Tag (292), opaque 0-8 bytes, repeatable (RFC 9175 section 3.2).</summary>
    RequestTag = 292,
}
