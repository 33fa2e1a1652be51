namespace CoapNet.Serialization;

/// <summary>Why bytes are not a well-formed CoAP message.</summary>
/// <remarks>
/// RFC 7252 section 4.2 and 4.3 say what a recipient does with a datagram that has a message
/// format error: reset it when it is confirmable, ignore it otherwise. A datagram with
/// <see cref="UnsupportedVersion"/> is silently ignored (RFC 7252 section 3). Over a stream
/// (RFC 8323), a malformed message aborts the connection.
/// </remarks>
public enum CoapFormatErrorReason : byte
{
    /// <summary>No error.</summary>
    None = 0,

    /// <summary>A datagram shorter than the 4-byte header, or an empty frame.</summary>
    MessageTooShort,

    /// <summary>The version field is not 1 (RFC 7252 section 3).</summary>
    UnsupportedVersion,

    /// <summary>The token length is 9 to 15, which are reserved (RFC 7252 section 3, RFC 8323 section 3.2).</summary>
    InvalidTokenLength,

    /// <summary>The message ends inside the token.</summary>
    TruncatedToken,

    /// <summary>A stream frame is shorter than its Len field says.</summary>
    TruncatedFrame,

    /// <summary>Bytes follow the end of the stream frame that the Len field describes.</summary>
    TrailingBytes,

    /// <summary>An Empty message (code 0.00) has a token, options or payload (RFC 7252 section 4.1).</summary>
    EmptyMessageNotEmpty,

    /// <summary>An option delta nibble is 15 but the byte is not the 0xFF payload marker (RFC 7252 section 3.1).</summary>
    InvalidOptionDelta,

    /// <summary>An option length nibble is 15 (RFC 7252 section 3.1).</summary>
    InvalidOptionLength,

    /// <summary>The message ends inside an option's extended delta, extended length or value.</summary>
    TruncatedOption,

    /// <summary>The option deltas add up to a number above 65535.</summary>
    OptionNumberTooLarge,

    /// <summary>A payload marker is followed by no payload (RFC 7252 section 3).</summary>
    PayloadMarkerWithoutPayload,

    /// <summary>An option value is outside the length bounds its definition registers (reported only when <see cref="CoapSerializerOptions.RejectInvalidOptionLengths"/> is set).</summary>
    InvalidOptionValueLength,

    /// <summary>The message is longer than <see cref="CoapSerializerOptions.MaxMessageSize"/>.</summary>
    MessageTooLarge,

    /// <summary>The stream ended inside a message.</summary>
    UnexpectedEndOfStream,

    /// <summary>The message carries more options than <see cref="CoapSerializerOptions.MaxOptionCount"/> allows.</summary>
    TooManyOptions,

    /// <summary>
    /// The framing the transport carries messages in is broken: over WebSockets a text message, or a Len field other than
    /// 0, which the WebSocket message's own length replaces (RFC 8323 section 4.2).
    /// </summary>
    InvalidFraming,
}
