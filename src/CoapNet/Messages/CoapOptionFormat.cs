namespace CoapNet.Messages;

/// <summary>The value format of an option (RFC 7252 section 3.2).</summary>
public enum CoapOptionFormat : byte
{
    /// <summary>A sequence of bytes; unregistered options are treated as opaque.</summary>
    Opaque = 0,

    /// <summary>A zero-length value.</summary>
    Empty = 1,

    /// <summary>A non-negative integer in network byte order, with no leading zero bytes (RFC 7252 section 3.2).</summary>
    UInt = 2,

    /// <summary>A UTF-8 string in Net-Unicode form (RFC 5198).</summary>
    String = 3,
}
