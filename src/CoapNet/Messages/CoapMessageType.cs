namespace CoapNet.Messages;

/// <summary>
/// The message type of an RFC 7252 datagram (the T field of the header, RFC 7252 section 3).
/// </summary>
/// <remarks>
/// The RFC 8323 stream framing has no type field: reliable transports make every message
/// behave as non-confirmable, and the serializer ignores <see cref="CoapMessage.Type"/> there.
/// </remarks>
public enum CoapMessageType : byte
{
    /// <summary>CON: a message that requires an acknowledgement (RFC 7252 section 4.2).</summary>
    Confirmable = 0,

    /// <summary>NON: a message that does not require an acknowledgement (RFC 7252 section 4.3).</summary>
    NonConfirmable = 1,

    /// <summary>ACK: acknowledges a confirmable message, optionally carrying a piggybacked response.</summary>
    Acknowledgement = 2,

    /// <summary>RST: tells the sender that a message was received but could not be processed.</summary>
    Reset = 3,
}
