using System.Diagnostics.CodeAnalysis;

namespace CoapNet.Messages;

/// <summary>
/// A CoAP code: a 3-bit class and a 5-bit detail, written "c.dd" (RFC 7252 section 3).
/// Class 0 holds the request methods (and 0.00, the Empty message), classes 2, 4 and 5 the
/// responses, and class 7 the RFC 8323 signaling codes.
/// </summary>
/// <remarks>
/// Every code registered by RFC 7252, RFC 7959, RFC 8132, RFC 8323, RFC 8516 and RFC 8768 has a
/// named static member. Any other byte value is still a valid <see cref="CoapCode"/>: an
/// unknown code survives a round trip unchanged.
/// </remarks>
public readonly struct CoapCode : IEquatable<CoapCode>, IComparable<CoapCode>
{
    /// <summary>Creates a code from its wire byte (class in the top 3 bits, detail in the low 5).</summary>
    /// <param name="value">The code byte as it appears on the wire.</param>
    public CoapCode(byte value) => Value = value;

    /// <summary>Creates a code from its class and detail, as in "4.04".</summary>
    /// <param name="codeClass">The class, 0 to 7.</param>
    /// <param name="detail">The detail, 0 to 31.</param>
    /// <exception cref="ArgumentOutOfRangeException">The class or the detail is out of range.</exception>
    public CoapCode(int codeClass, int detail)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(codeClass);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(codeClass, 7);
        ArgumentOutOfRangeException.ThrowIfNegative(detail);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(detail, 31);
        Value = (byte)((codeClass << 5) | detail);
    }

    /// <summary>The code byte as it appears on the wire.</summary>
    public byte Value { get; }

    /// <summary>The class: 0 (request or Empty), 2 (success), 4 (client error), 5 (server error), 7 (signaling).</summary>
    public int Class => Value >> 5;

    /// <summary>The detail, 0 to 31.</summary>
    public int Detail => Value & 0x1F;

    /// <summary>True for 0.00, the code of an Empty message (RFC 7252 section 4.1).</summary>
    public bool IsEmpty => Value == 0;

    /// <summary>True for a request method (0.01 to 0.31).</summary>
    public bool IsRequest => Value is > 0 and < 32;

    /// <summary>True for a response code (classes 2, 4 and 5; class 3 is reserved, RFC 7252 section 12.1).</summary>
    public bool IsResponse => Value >> 5 is 2 or 4 or 5;

    /// <summary>True for a success response (class 2).</summary>
    public bool IsSuccess => Value >> 5 == 2;

    /// <summary>True for a client error response (class 4).</summary>
    public bool IsClientError => Value >> 5 == 4;

    /// <summary>True for a server error response (class 5).</summary>
    public bool IsServerError => Value >> 5 == 5;

    /// <summary>True for an RFC 8323 signaling code (class 7).</summary>
    public bool IsSignaling => Value >> 5 == 7;

    /// <summary>The registered name of the code ("Content" for 2.05), or null when it is not registered.</summary>
    public string? Name => Value switch
    {
        0x00 => "Empty",
        0x01 => "GET",
        0x02 => "POST",
        0x03 => "PUT",
        0x04 => "DELETE",
        0x05 => "FETCH",
        0x06 => "PATCH",
        0x07 => "iPATCH",
        0x41 => "Created",
        0x42 => "Deleted",
        0x43 => "Valid",
        0x44 => "Changed",
        0x45 => "Content",
        0x5F => "Continue",
        0x80 => "Bad Request",
        0x81 => "Unauthorized",
        0x82 => "Bad Option",
        0x83 => "Forbidden",
        0x84 => "Not Found",
        0x85 => "Method Not Allowed",
        0x86 => "Not Acceptable",
        0x88 => "Request Entity Incomplete",
        0x89 => "Conflict",
        0x8C => "Precondition Failed",
        0x8D => "Request Entity Too Large",
        0x8F => "Unsupported Content-Format",
        0x96 => "Unprocessable Entity",
        0x9D => "Too Many Requests",
        0xA0 => "Internal Server Error",
        0xA1 => "Not Implemented",
        0xA2 => "Bad Gateway",
        0xA3 => "Service Unavailable",
        0xA4 => "Gateway Timeout",
        0xA5 => "Proxying Not Supported",
        0xA8 => "Hop Limit Reached",
        0xE1 => "CSM",
        0xE2 => "Ping",
        0xE3 => "Pong",
        0xE4 => "Release",
        0xE5 => "Abort",
        _ => null,
    };

    /// <summary>0.00: the Empty message (RFC 7252 section 4.1).</summary>
    public static CoapCode Empty => new(0x00);

    /// <summary>0.01 GET (RFC 7252 section 5.8.1).</summary>
    public static CoapCode Get => new(0x01);

    /// <summary>0.02 POST (RFC 7252 section 5.8.2).</summary>
    public static CoapCode Post => new(0x02);

    /// <summary>0.03 PUT (RFC 7252 section 5.8.3).</summary>
    public static CoapCode Put => new(0x03);

    /// <summary>0.04 DELETE (RFC 7252 section 5.8.4).</summary>
    public static CoapCode Delete => new(0x04);

    /// <summary>0.05 FETCH (RFC 8132 section 2).</summary>
    public static CoapCode Fetch => new(0x05);

    /// <summary>0.06 PATCH (RFC 8132 section 3).</summary>
    public static CoapCode Patch => new(0x06);

    /// <summary>0.07 iPATCH, the idempotent PATCH (RFC 8132 section 3).</summary>
    public static CoapCode IPatch => new(0x07);

    /// <summary>2.01 Created (RFC 7252 section 5.9.1.1).</summary>
    public static CoapCode Created => new(0x41);

    /// <summary>2.02 Deleted (RFC 7252 section 5.9.1.2).</summary>
    public static CoapCode Deleted => new(0x42);

    /// <summary>2.03 Valid (RFC 7252 section 5.9.1.3).</summary>
    public static CoapCode Valid => new(0x43);

    /// <summary>2.04 Changed (RFC 7252 section 5.9.1.4).</summary>
    public static CoapCode Changed => new(0x44);

    /// <summary>2.05 Content (RFC 7252 section 5.9.1.5).</summary>
    public static CoapCode Content => new(0x45);

    /// <summary>2.31 Continue (RFC 7959 section 2.9.1).</summary>
    public static CoapCode Continue => new(0x5F);

    /// <summary>4.00 Bad Request (RFC 7252 section 5.9.2.1).</summary>
    public static CoapCode BadRequest => new(0x80);

    /// <summary>4.01 Unauthorized (RFC 7252 section 5.9.2.2).</summary>
    public static CoapCode Unauthorized => new(0x81);

    /// <summary>4.02 Bad Option (RFC 7252 section 5.9.2.3).</summary>
    public static CoapCode BadOption => new(0x82);

    /// <summary>4.03 Forbidden (RFC 7252 section 5.9.2.4).</summary>
    public static CoapCode Forbidden => new(0x83);

    /// <summary>4.04 Not Found (RFC 7252 section 5.9.2.5).</summary>
    public static CoapCode NotFound => new(0x84);

    /// <summary>4.05 Method Not Allowed (RFC 7252 section 5.9.2.6).</summary>
    public static CoapCode MethodNotAllowed => new(0x85);

    /// <summary>4.06 Not Acceptable (RFC 7252 section 5.9.2.7).</summary>
    public static CoapCode NotAcceptable => new(0x86);

    /// <summary>4.08 Request Entity Incomplete (RFC 7959 section 2.9.2).</summary>
    public static CoapCode RequestEntityIncomplete => new(0x88);

    /// <summary>4.09 Conflict (RFC 8132 section 3.4).</summary>
    public static CoapCode Conflict => new(0x89);

    /// <summary>4.12 Precondition Failed (RFC 7252 section 5.9.2.8).</summary>
    public static CoapCode PreconditionFailed => new(0x8C);

    /// <summary>4.13 Request Entity Too Large (RFC 7252 section 5.9.2.9).</summary>
    public static CoapCode RequestEntityTooLarge => new(0x8D);

    /// <summary>4.15 Unsupported Content-Format (RFC 7252 section 5.9.2.10).</summary>
    public static CoapCode UnsupportedContentFormat => new(0x8F);

    /// <summary>4.22 Unprocessable Entity (RFC 8132 section 3.4).</summary>
    public static CoapCode UnprocessableEntity => new(0x96);

    /// <summary>4.29 Too Many Requests (RFC 8516 section 3).</summary>
    public static CoapCode TooManyRequests => new(0x9D);

    /// <summary>5.00 Internal Server Error (RFC 7252 section 5.9.3.1).</summary>
    public static CoapCode InternalServerError => new(0xA0);

    /// <summary>5.01 Not Implemented (RFC 7252 section 5.9.3.2).</summary>
    public static CoapCode NotImplemented => new(0xA1);

    /// <summary>5.02 Bad Gateway (RFC 7252 section 5.9.3.3).</summary>
    public static CoapCode BadGateway => new(0xA2);

    /// <summary>5.03 Service Unavailable (RFC 7252 section 5.9.3.4).</summary>
    public static CoapCode ServiceUnavailable => new(0xA3);

    /// <summary>5.04 Gateway Timeout (RFC 7252 section 5.9.3.5).</summary>
    public static CoapCode GatewayTimeout => new(0xA4);

    /// <summary>5.05 Proxying Not Supported (RFC 7252 section 5.9.3.6).</summary>
    public static CoapCode ProxyingNotSupported => new(0xA5);

    /// <summary>5.08 Hop Limit Reached (RFC 8768 section 3).</summary>
    public static CoapCode HopLimitReached => new(0xA8);

    /// <summary>7.01 CSM, Capabilities and Settings Message (RFC 8323 section 5.3).</summary>
    public static CoapCode Csm => new(0xE1);

    /// <summary>7.02 Ping (RFC 8323 section 5.4).</summary>
    public static CoapCode Ping => new(0xE2);

    /// <summary>7.03 Pong (RFC 8323 section 5.4).</summary>
    public static CoapCode Pong => new(0xE3);

    /// <summary>7.04 Release (RFC 8323 section 5.5).</summary>
    public static CoapCode Release => new(0xE4);

    /// <summary>7.05 Abort (RFC 8323 section 5.6).</summary>
    public static CoapCode Abort => new(0xE5);

    /// <summary>Converts a wire byte to a code.</summary>
    /// <param name="value">The code byte.</param>
    public static implicit operator CoapCode(byte value) => new(value);

    /// <summary>Converts a code to its wire byte.</summary>
    /// <param name="code">The code.</param>
    public static explicit operator byte(CoapCode code) => code.Value;

    /// <summary>Compares two codes for equality.</summary>
    /// <param name="left">The first code.</param>
    /// <param name="right">The second code.</param>
    public static bool operator ==(CoapCode left, CoapCode right) => left.Value == right.Value;

    /// <summary>Compares two codes for inequality.</summary>
    /// <param name="left">The first code.</param>
    /// <param name="right">The second code.</param>
    public static bool operator !=(CoapCode left, CoapCode right) => left.Value != right.Value;

    /// <summary>Orders codes by their wire byte.</summary>
    /// <param name="left">The first code.</param>
    /// <param name="right">The second code.</param>
    public static bool operator <(CoapCode left, CoapCode right) => left.Value < right.Value;

    /// <summary>Orders codes by their wire byte.</summary>
    /// <param name="left">The first code.</param>
    /// <param name="right">The second code.</param>
    public static bool operator >(CoapCode left, CoapCode right) => left.Value > right.Value;

    /// <summary>Orders codes by their wire byte.</summary>
    /// <param name="left">The first code.</param>
    /// <param name="right">The second code.</param>
    public static bool operator <=(CoapCode left, CoapCode right) => left.Value <= right.Value;

    /// <summary>Orders codes by their wire byte.</summary>
    /// <param name="left">The first code.</param>
    /// <param name="right">The second code.</param>
    public static bool operator >=(CoapCode left, CoapCode right) => left.Value >= right.Value;

    /// <summary>Parses "c.dd" (for example "4.04") into a code.</summary>
    /// <param name="text">The text to parse.</param>
    /// <param name="code">The parsed code.</param>
    /// <returns>True when <paramref name="text"/> is a class digit 0-7, a dot and a two-digit detail 00-31.</returns>
    public static bool TryParse([NotNullWhen(true)] string? text, out CoapCode code)
    {
        code = default;

        // RFC 7252 section 3: the detail is always written with two digits, so "4.4" and "4.004" are not codes.
        if (text is null || text.Length != 4 || text[1] != '.' || text[0] < '0' || text[0] > '7')
        {
            return false;
        }

        if (!int.TryParse(text.AsSpan(2), System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out int detail) || detail > 31)
        {
            return false;
        }

        code = new CoapCode(text[0] - '0', detail);
        return true;
    }

    /// <inheritdoc/>
    public bool Equals(CoapCode other) => Value == other.Value;

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is CoapCode other && Value == other.Value;

    /// <inheritdoc/>
    public override int GetHashCode() => Value;

    /// <inheritdoc/>
    public int CompareTo(CoapCode other) => Value.CompareTo(other.Value);

    /// <summary>The dotted form followed by the name when registered: "2.05 Content", "0.01 GET", "4.27".</summary>
    public override string ToString()
    {
        string dotted = string.Create(4, Value, static (span, v) =>
        {
            span[0] = (char)('0' + (v >> 5));
            span[1] = '.';
            span[2] = (char)('0' + ((v & 0x1F) / 10));
            span[3] = (char)('0' + ((v & 0x1F) % 10));
        });
        string? name = Name;
        return name is null ? dotted : dotted + " " + name;
    }
}
