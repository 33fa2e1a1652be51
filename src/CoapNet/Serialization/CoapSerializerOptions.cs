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
    /// The default limit on options per message: 1024. Real messages carry a handful (RFC 7252 section 5.10
    /// registers about twenty, a few of them repeatable); the limit only stops a peer from making one small
    /// message cost a table entry and a scan step per byte, up to 8 million for an 8 MiB stream frame.
    /// </summary>
    public const int DefaultMaxOptionCount = 1024;

    /// <summary>
    /// The most options a message may carry when read; null for <see cref="DefaultMaxOptionCount"/>. A message
    /// with more is malformed (<see cref="CoapFormatErrorReason.TooManyOptions"/>): a datagram is answered like
    /// any other malformed one (RST for a confirmable message, RFC 7252 sections 4.2 and 4.3, silence otherwise),
    /// a stream frame aborts its connection (RFC 8323 section 5.6). Writing is not limited.
    /// </summary>
    public int? MaxOptionCount { get; init; }

    /// <summary>
    /// When true, a registered option whose value length is outside its bounds makes the message
    /// malformed (<see cref="CoapFormatErrorReason.InvalidOptionValueLength"/>). When false (the
    /// default, as RFC 7252 section 5.4.3 asks), such an option is kept, reads as absent through the
    /// typed accessors, and is reported by <see cref="Messages.CoapOptionCollection.TryGetFirstInvalid"/>.
    /// </summary>
    public bool RejectInvalidOptionLengths { get; init; }
}
