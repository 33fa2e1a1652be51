namespace CoapNet.Serialization;

/// <summary>Limits and strictness of a <see cref="CoapMessageSerializer"/>.</summary>
public sealed class CoapSerializerOptions
{
    /// <summary>The default limit for datagrams: 65507 bytes, the largest UDP payload over IPv4.</summary>
    public const int DefaultMaxDatagramSize = 65507;

    /// <summary>The default limit for stream frames: 8 MiB, so that a peer's Len field cannot make us allocate without bound.</summary>
    public const int DefaultMaxStreamMessageSize = 8 * 1024 * 1024;

    /// <summary>
    /// The largest message, in bytes including the header, that the serializer reads or writes; null
    /// for the framing's default (<see cref="DefaultMaxDatagramSize"/> or <see cref="DefaultMaxStreamMessageSize"/>).
    /// A larger message is rejected: reading reports <see cref="CoapFormatErrorReason.MessageTooLarge"/>,
    /// writing throws <see cref="ArgumentException"/>.
    /// </summary>
    public int? MaxMessageSize { get; init; }

    /// <summary>
    /// When true, a registered option whose value length is outside its bounds makes the message
    /// malformed (<see cref="CoapFormatErrorReason.InvalidOptionValueLength"/>). When false (the
    /// default, as RFC 7252 section 5.4.3 asks), such an option is kept, reads as absent through the
    /// typed accessors, and is reported by <see cref="Messages.CoapOptionCollection.TryGetFirstInvalid"/>.
    /// </summary>
    public bool RejectInvalidOptionLengths { get; init; }
}
