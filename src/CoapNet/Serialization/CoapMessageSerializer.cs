namespace CoapNet.Serialization;

/// <summary>
/// Turns bytes into <see cref="Messages.CoapMessage"/> objects and back, for one framing:
/// RFC 7252 datagrams (<see cref="Udp"/>) or RFC 8323 stream frames (<see cref="Tcp"/>).
/// </summary>
/// <remarks>
/// <para>
/// Every entry point (span, memory, stream, pipe; synchronous and asynchronous) runs the same
/// synchronous core; the asynchronous ones only buffer the bytes of one message first. Parsing
/// allocates the message, one array for the bytes it refers to (none with the
/// <see cref="ReadOnlyMemory{T}"/> overloads) and one array of option entries; no object per option.
/// </para>
/// <para>An instance holds no per-message state and is safe to use from many threads at once.</para>
/// </remarks>
public sealed partial class CoapMessageSerializer
{
    private readonly int _maxMessageSize;
    private readonly bool _rejectInvalidOptionLengths;
    private readonly int _maxOptionCount;

    /// <summary>Creates a serializer.</summary>
    /// <param name="framing">The framing.</param>
    /// <param name="options">Limits and strictness; null for the defaults.</param>
    /// <exception cref="ArgumentOutOfRangeException">
    /// The framing is unknown, <see cref="CoapSerializerOptions.MaxMessageSize"/> is too small for a header,
    /// or <see cref="CoapSerializerOptions.MaxOptionCount"/> is negative.
    /// </exception>
    public CoapMessageSerializer(CoapFraming framing, CoapSerializerOptions? options = null)
    {
        if (framing is not (CoapFraming.Datagram or CoapFraming.Stream))
        {
            throw new ArgumentOutOfRangeException(nameof(framing), framing, "The framing is Datagram or Stream.");
        }

        Framing = framing;
        _maxMessageSize = options?.MaxMessageSize
            ?? (framing == CoapFraming.Datagram ? CoapSerializerOptions.DefaultMaxDatagramSize : CoapSerializerOptions.DefaultMaxStreamMessageSize);
        if (_maxMessageSize < 4)
        {
            throw new ArgumentOutOfRangeException(nameof(options), _maxMessageSize, "MaxMessageSize must leave room for a header (at least 4 bytes).");
        }

        _rejectInvalidOptionLengths = options?.RejectInvalidOptionLengths ?? false;
        _maxOptionCount = options?.MaxOptionCount ?? CoapSerializerOptions.DefaultMaxOptionCount;
        if (_maxOptionCount < 0)
        {
            throw new ArgumentOutOfRangeException(nameof(options), _maxOptionCount, "MaxOptionCount must not be negative.");
        }
    }

    /// <summary>The RFC 7252 datagram serializer with default options, for UDP and DTLS.</summary>
    public static CoapMessageSerializer Udp { get; } = new(CoapFraming.Datagram);

    /// <summary>The RFC 8323 stream serializer with default options, for TCP and TLS.</summary>
    public static CoapMessageSerializer Tcp { get; } = new(CoapFraming.Stream);

    /// <summary>The framing this serializer reads and writes.</summary>
    public CoapFraming Framing { get; }

    /// <summary>The largest message, in bytes, this serializer reads or writes.</summary>
    public int MaxMessageSize => _maxMessageSize;

    /// <summary>The most options a message this serializer reads may carry (<see cref="CoapSerializerOptions.MaxOptionCount"/>).</summary>
    public int MaxOptionCount => _maxOptionCount;
}
