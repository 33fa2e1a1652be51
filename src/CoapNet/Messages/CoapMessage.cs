using System.Globalization;
using System.Runtime.CompilerServices;
using System.Text;

namespace CoapNet.Messages;

/// <summary>
/// A CoAP message: type, code, Message ID, token, options and payload (RFC 7252 section 3).
/// The same object models a datagram message (RFC 7252) and a stream message (RFC 8323), where
/// <see cref="Type"/> and <see cref="MessageId"/> are not on the wire.
/// </summary>
/// <remarks>
/// Build one with an object initializer and the typed accessors, or start from
/// <see cref="CreateRequest(CoapCode, Uri, CoapMessageType)"/>, <see cref="CreateResponse(CoapCode)"/>
/// and <see cref="CreateEmpty(CoapMessageType, ushort)"/>. A message is not thread-safe.
/// A message parsed from a <see cref="ReadOnlyMemory{T}"/> refers to that memory: keep it
/// unchanged while the message is in use.
/// </remarks>
public sealed partial class CoapMessage
{
    /// <summary>The longest token: 8 bytes (RFC 7252 section 3, TKL 9-15 are reserved).</summary>
    public const int MaxTokenLength = 8;

    // The token (its first _tokenLength bytes) and, on a parsed message, the options' wire bytes right after it, as
    // they arrived (RFC 7252 section 3 puts them side by side). The collection is built only when something asks for
    // Options: the server reads a request's path and critical options straight from the bytes, and the collection
    // with its entry array was a fifth of the bytes a request cost (issue 11); one memory for both keeps the message
    // at 64 bytes. While _options is null the wire bytes are the options; once it exists, it alone is the truth.
    private ReadOnlyMemory<byte> _head;
    private CoapOptionCollection? _options;
    private byte _tokenLength;

    // What the wire bytes in _head hold, so that a lookup of an option the message does not carry (most of the stages'
    // lookups) answers without reading them: which of the numbers 0-15 are present (If-Match, Uri-Host, ETag, Observe,
    // OSCORE, Uri-Path, Content-Format, Uri-Query among them; issue 39), and the highest number, as options come in
    // ascending order (RFC 7252 section 3.1), 255 standing for any above 254 (issue 25). Both fit the padding of the
    // 64-byte object.
    private ushort _lowWireOptions;
    private byte _lastWireOption;

    /// <summary>Creates an empty confirmable message with code 0.00.</summary>
    public CoapMessage()
    {
    }

    // The parser builds the message in one step with already validated parts: the token, then either the options
    // collection, or in head after the token the options' wire bytes (without the payload marker) to read on demand.
    // lastWireOption and lowWireOptions describe the wire bytes: the highest number among them, and a bit for each number
    // below 16 among them.
    internal CoapMessage(CoapMessageType type, CoapCode code, ushort messageId, ReadOnlyMemory<byte> head, int tokenLength, CoapOptionCollection? options, ReadOnlyMemory<byte> payload, int lastWireOption, ushort lowWireOptions)
    {
        Type = type;
        Code = code;
        MessageId = messageId;
        _head = head;
        _tokenLength = (byte)tokenLength;
        _options = options;
        Payload = payload;
        _lastWireOption = (byte)Math.Min(lastWireOption, byte.MaxValue);
        _lowWireOptions = lowWireOptions;
    }

    /// <summary>The message type (datagram framing only).</summary>
    public CoapMessageType Type { get; set; }

    /// <summary>The code: a method, a response code, 0.00 for Empty, or a signaling code.</summary>
    public CoapCode Code { get; set; }

    /// <summary>The Message ID, used for deduplication and to match ACK/RST (datagram framing only, RFC 7252 section 4.4).</summary>
    public ushort MessageId { get; set; }

    /// <summary>The token, 0 to 8 bytes, that matches a response to its request (RFC 7252 section 5.3.1).</summary>
    /// <exception cref="ArgumentException">The value is longer than 8 bytes.</exception>
    public ReadOnlyMemory<byte> Token
    {
        get => _head[.._tokenLength];
        set
        {
            if (value.Length > MaxTokenLength)
            {
                throw new ArgumentException($"A token holds at most {MaxTokenLength} bytes (RFC 7252 section 3); this one has {value.Length}.", nameof(value));
            }

            if (_options is null && _head.Length > _tokenLength)
            {
                // The options' wire bytes follow the token they replace: they become a collection first.
                CreateOptions();
            }

            _head = value;
            _tokenLength = (byte)value.Length;
        }
    }

    /// <summary>The options, in ascending number order.</summary>
    /// <remarks>On a parsed message the collection is built on first access; the typed accessors read the options without it.</remarks>
    public CoapOptionCollection Options => _options ?? CreateOptions();

    /// <summary>True when the message has at least one option (without creating the collection).</summary>
    public bool HasOptions => _options is { } options ? options.Count > 0 : _head.Length > _tokenLength;

    /// <summary>Walks the options in wire order without creating the collection.</summary>
    /// <remarks>Inlined, so the reader is made in its caller's frame rather than copied out of a call: the server walks every request's options two or three times (issue 39).</remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal CoapOptionReader ReadOptions() => _options is { } options ? new CoapOptionReader(options) : new CoapOptionReader(_head[_tokenLength..]);

    /// <summary>The options exactly as they arrived, while no collection was built (the writer then copies them as they are).</summary>
    internal bool TryGetWireOptions(out ReadOnlyMemory<byte> wire)
    {
        wire = _options is null ? _head[_tokenLength..] : default;
        return !wire.IsEmpty;
    }

    private CoapOptionCollection CreateOptions()
    {
        ReadOnlyMemory<byte> wire = _head[_tokenLength..];
        CoapOptionCollection created = wire.IsEmpty ? new CoapOptionCollection() : Serialization.CoapMessageSerializer.ParseWireOptions(wire);

        // A getter may run on two threads at once (a log line and a handler); both then use the one collection kept.
        return Interlocked.CompareExchange(ref _options, created, null) ?? created;
    }

    /// <summary>The payload; empty when there is none.</summary>
    public ReadOnlyMemory<byte> Payload { get; set; }

    /// <summary>Creates a request for <paramref name="uri"/>: the method, and Uri-Host, Uri-Port, Uri-Path and Uri-Query from the URI (RFC 7252 section 6.4).</summary>
    /// <param name="method">The request method, such as <see cref="CoapCode.Get"/>.</param>
    /// <param name="uri">An absolute coap, coaps, coap+tcp, coaps+tcp, coap+ws or coaps+ws URI without a fragment.</param>
    /// <param name="type">Confirmable (the default) or non-confirmable.</param>
    /// <returns>The request.</returns>
    /// <exception cref="ArgumentException"><paramref name="method"/> is not a request code, or the URI is not a CoAP URI.</exception>
    public static CoapMessage CreateRequest(CoapCode method, Uri uri, CoapMessageType type = CoapMessageType.Confirmable)
        => CreateRequest(method, uri, type, null);

    /// <summary>As <see cref="CreateRequest(CoapCode, Uri, CoapMessageType)"/>, for a URI whose scheme a registered transport speaks: its default port decides whether Uri-Port is sent.</summary>
    internal static CoapMessage CreateRequest(CoapCode method, Uri uri, CoapMessageType type, Func<string, int?>? defaultPortOf)
    {
        if (!method.IsRequest)
        {
            throw new ArgumentException($"{method} is not a request method.", nameof(method));
        }

        if (type is not (CoapMessageType.Confirmable or CoapMessageType.NonConfirmable))
        {
            throw new ArgumentException("A request is confirmable or non-confirmable (RFC 7252 section 4).", nameof(type));
        }

        // The parser's array, already in option-number order, becomes the collection: nothing to insert or grow.
        CoapOptionEntry[] entries = ParseUri(uri, defaultPortOf);
        return new CoapMessage(type, method, 0, default, 0, entries.Length == 0 ? null : new CoapOptionCollection(entries), default, 0, 0);
    }

    /// <summary>
    /// Creates a response to this request with the same token. For a confirmable request the
    /// response is a piggybacked ACK with the request's Message ID (RFC 7252 section 5.2.1);
    /// otherwise it is a non-confirmable response whose Message ID the sender assigns.
    /// </summary>
    /// <param name="code">The response code.</param>
    /// <returns>The response.</returns>
    /// <exception cref="ArgumentException"><paramref name="code"/> is not a response code.</exception>
    public CoapMessage CreateResponse(CoapCode code)
    {
        if (!code.IsResponse)
        {
            throw new ArgumentException($"{code} is not a response code.", nameof(code));
        }

        bool piggybacked = Type == CoapMessageType.Confirmable;
        return new CoapMessage
        {
            Type = piggybacked ? CoapMessageType.Acknowledgement : CoapMessageType.NonConfirmable,
            Code = code,
            MessageId = piggybacked ? MessageId : (ushort)0,
            _head = Token,
            _tokenLength = _tokenLength,
        };
    }

    /// <summary>Creates an Empty message (code 0.00): an empty ACK, a RST, or a CoAP ping as an empty CON (RFC 7252 section 4.1).</summary>
    /// <param name="type">The message type.</param>
    /// <param name="messageId">The Message ID.</param>
    /// <returns>The Empty message.</returns>
    public static CoapMessage CreateEmpty(CoapMessageType type, ushort messageId) => new() { Type = type, MessageId = messageId };

    /// <summary>Sets the payload to the UTF-8 encoding of <paramref name="text"/>.</summary>
    /// <param name="text">The text.</param>
    /// <exception cref="ArgumentNullException"><paramref name="text"/> is null.</exception>
    public void SetPayload(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        Payload = Encoding.UTF8.GetBytes(text);
    }

    /// <summary>Decodes the payload as UTF-8 text.</summary>
    /// <returns>The text.</returns>
    public string GetPayloadString() => Encoding.UTF8.GetString(Payload.Span);

    /// <summary>A one-line summary for logs: "CON 0.01 GET MID=4660 Token=0A0B [Uri-Path: a, ...] 12 bytes".</summary>
    public override string ToString()
    {
        StringBuilder builder = new();
        builder.Append(Type switch
        {
            CoapMessageType.Confirmable => "CON",
            CoapMessageType.NonConfirmable => "NON",
            CoapMessageType.Acknowledgement => "ACK",
            _ => "RST",
        });
        builder.Append(' ').Append(Code.ToString());
        builder.Append(" MID=").Append(MessageId.ToString(CultureInfo.InvariantCulture));
        if (_tokenLength > 0)
        {
            builder.Append(" Token=").Append(Convert.ToHexString(Token.Span));
        }

        if (HasOptions)
        {
            builder.Append(" [");
            bool first = true;
            foreach (CoapOptionEntry option in ReadOptions())
            {
                builder.Append(first ? string.Empty : ", ").Append(option.ToString());
                first = false;
            }

            builder.Append(']');
        }

        if (!Payload.IsEmpty)
        {
            builder.Append(' ').Append(Payload.Length.ToString(CultureInfo.InvariantCulture)).Append(" bytes");
        }

        return builder.ToString();
    }

    /// <summary>A shallow copy with <paramref name="token"/> (options and payload shared): what goes on the wire for a response, for a log line.</summary>
    internal CoapMessage WithToken(ReadOnlyMemory<byte> token)
        => new(Type, Code, MessageId, token, token.Length, _options ?? (TryGetWireOptions(out ReadOnlyMemory<byte> wire) ? Serialization.CoapMessageSerializer.ParseWireOptions(wire) : null), Payload, 0, 0);

    /// <summary>A copy (type, code, token, the same payload memory) without the options numbered <paramref name="except"/>: for the stages, which must not modify a message a handler may share.</summary>
    internal CoapMessage CopyWithout(CoapOptionNumber except) => CopyWithout(except, except);

    /// <summary>A copy without the options numbered <paramref name="except"/> or <paramref name="alsoExcept"/>.</summary>
    internal CoapMessage CopyWithout(CoapOptionNumber except, CoapOptionNumber alsoExcept)
    {
        CoapMessage copy = new() { Type = Type, Code = Code, Token = Token, Payload = Payload };
        if (HasOptions)
        {
            foreach (CoapOptionEntry option in ReadOptions())
            {
                if (option.Number != except && option.Number != alsoExcept)
                {
                    copy.Options.Add(option);
                }
            }
        }

        return copy;
    }
}
