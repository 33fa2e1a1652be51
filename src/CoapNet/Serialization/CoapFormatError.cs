namespace CoapNet.Serialization;

/// <summary>Why bytes are not a well-formed CoAP message, and where the problem starts.</summary>
public readonly struct CoapFormatError : IEquatable<CoapFormatError>
{
    /// <summary>Creates an error.</summary>
    /// <param name="reason">The reason.</param>
    /// <param name="offset">The byte offset, from the start of the message, where the problem was found.</param>
    public CoapFormatError(CoapFormatErrorReason reason, long offset)
    {
        Reason = reason;
        Offset = offset;
    }

    /// <summary>The reason; <see cref="CoapFormatErrorReason.None"/> when there is no error.</summary>
    public CoapFormatErrorReason Reason { get; }

    /// <summary>The byte offset, from the start of the message, where the problem was found.</summary>
    public long Offset { get; }

    /// <summary>A sentence for logs and exception messages.</summary>
    public string Message => Reason switch
    {
        CoapFormatErrorReason.None => "No error.",
        CoapFormatErrorReason.MessageTooShort => "The message is shorter than its fixed header.",
        CoapFormatErrorReason.UnsupportedVersion => "The version is not 1 (RFC 7252 section 3).",
        CoapFormatErrorReason.InvalidTokenLength => "The token length is 9-15, which is reserved (RFC 7252 section 3).",
        CoapFormatErrorReason.TruncatedToken => "The message ends inside the token.",
        CoapFormatErrorReason.TruncatedFrame => "The frame is shorter than its Len field says (RFC 8323 section 3.2).",
        CoapFormatErrorReason.TrailingBytes => "Bytes follow the end of the frame its Len field describes (RFC 8323 section 3.2).",
        CoapFormatErrorReason.EmptyMessageNotEmpty => "An Empty message (0.00) has a token, options or payload (RFC 7252 section 4.1).",
        CoapFormatErrorReason.InvalidOptionDelta => "An option delta nibble is 15 outside the payload marker (RFC 7252 section 3.1).",
        CoapFormatErrorReason.InvalidOptionLength => "An option length nibble is 15 (RFC 7252 section 3.1).",
        CoapFormatErrorReason.TruncatedOption => "The message ends inside an option.",
        CoapFormatErrorReason.OptionNumberTooLarge => "The option deltas add up to more than 65535.",
        CoapFormatErrorReason.PayloadMarkerWithoutPayload => "A payload marker is followed by no payload (RFC 7252 section 3).",
        CoapFormatErrorReason.InvalidOptionValueLength => "An option value is outside its registered length bounds (RFC 7252 section 5.4.3).",
        CoapFormatErrorReason.MessageTooLarge => "The message is larger than the configured maximum message size.",
        CoapFormatErrorReason.UnexpectedEndOfStream => "The stream ended inside a message.",
        CoapFormatErrorReason.TooManyOptions => "The message carries more options than the configured maximum option count.",
        CoapFormatErrorReason.InvalidFraming => "The transport's framing is broken: over WebSockets, a text message or a Len field other than 0 (RFC 8323 section 4.2).",
        _ => "Unknown format error.",
    };

    /// <inheritdoc/>
    public bool Equals(CoapFormatError other) => Reason == other.Reason && Offset == other.Offset;

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is CoapFormatError other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => HashCode.Combine(Reason, Offset);

    /// <summary>Compares two errors.</summary>
    /// <param name="left">The first error.</param>
    /// <param name="right">The second error.</param>
    public static bool operator ==(CoapFormatError left, CoapFormatError right) => left.Equals(right);

    /// <summary>Compares two errors.</summary>
    /// <param name="left">The first error.</param>
    /// <param name="right">The second error.</param>
    public static bool operator !=(CoapFormatError left, CoapFormatError right) => !left.Equals(right);

    /// <summary>"Reason at byte N: sentence".</summary>
    public override string ToString() => $"{Reason} at byte {Offset}: {Message}";
}
