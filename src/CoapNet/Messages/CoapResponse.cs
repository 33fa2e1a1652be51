using System.Net;
using System.Text;
using CoapNet.Messaging;

namespace CoapNet.Messages;

/// <summary>
/// A response: what a server handler returns and what a client receives. It wraps a
/// <see cref="CoapMessage"/>, whose typed accessors (ETag, MaxAge, Block2, ...) stay available
/// through <see cref="Message"/>; the messaging layer fills in type, Message ID and token.
/// </summary>
public sealed class CoapResponse
{
    /// <summary>Creates an empty response with <paramref name="code"/>.</summary>
    /// <param name="code">A response code (class 2, 4 or 5).</param>
    /// <exception cref="ArgumentException"><paramref name="code"/> is not a response code.</exception>
    public CoapResponse(CoapCode code)
    {
        if (!code.IsResponse)
        {
            throw new ArgumentException($"{code} is not a response code.", nameof(code));
        }

        Message = new CoapMessage { Code = code };
    }

    /// <summary>Creates a response with a payload.</summary>
    /// <param name="code">A response code.</param>
    /// <param name="payload">The payload.</param>
    /// <param name="contentFormat">Its Content-Format, or null (for a diagnostic payload, RFC 7252 section 5.5.2).</param>
    /// <exception cref="ArgumentException"><paramref name="code"/> is not a response code.</exception>
    public CoapResponse(CoapCode code, ReadOnlyMemory<byte> payload, ushort? contentFormat)
    {
        if (!code.IsResponse)
        {
            throw new ArgumentException($"{code} is not a response code.", nameof(code));
        }

        // The Content-Format as its wire bytes, shared by every response with the same format: a message reads such
        // bytes like a parsed message's options and builds a collection only if its options are changed or listed;
        // a collection and its entry were about 100 bytes of every request a server answered (issue 11).
        ReadOnlyMemory<byte> options = contentFormat is ushort format ? ContentFormatOption(format) : default;
        Message = new CoapMessage(CoapMessageType.Confirmable, code, 0, options, 0, null, payload, options.IsEmpty ? 0 : (int)CoapOptionNumber.ContentFormat, options.IsEmpty ? (ushort)0 : CoapMessage.LowOptionBit((int)CoapOptionNumber.ContentFormat));
    }

    /// <summary>
    /// A Content-Format option as the first option on the wire (RFC 7252 section 3.1: delta 12 from 0, then the value in
    /// its shortest form, section 3.2): slices of one table for formats below 256, a new array for the rest.
    /// </summary>
    private static ReadOnlyMemory<byte> ContentFormatOption(ushort format) => format switch
    {
        0 => SmallContentFormats.AsMemory(0, 1),
        < 256 => SmallContentFormats.AsMemory(2 * format, 2),
        _ => new byte[] { 0xC2, (byte)(format >> 8), (byte)format },
    };

    // Entry 0 is [0xC0] (format 0, the empty value); entry n at 2n is [0xC1, n].
    private static readonly byte[] SmallContentFormats = BuildSmallContentFormats();

    private static byte[] BuildSmallContentFormats()
    {
        byte[] table = new byte[512];
        table[0] = 0xC0;
        for (int format = 1; format < 256; format++)
        {
            table[2 * format] = 0xC1;
            table[(2 * format) + 1] = (byte)format;
        }

        return table;
    }

    /// <summary>Creates a response with a text payload, text/plain by default.</summary>
    /// <param name="code">A response code.</param>
    /// <param name="text">The text, sent as UTF-8.</param>
    /// <param name="contentFormat">Its Content-Format (default text/plain, 0); null for a diagnostic payload.</param>
    /// <exception cref="ArgumentException"><paramref name="code"/> is not a response code.</exception>
    public CoapResponse(CoapCode code, string text, ushort? contentFormat = CoapContentFormat.TextPlain)
        : this(code, Encoding.UTF8.GetBytes(text ?? throw new ArgumentNullException(nameof(text))), contentFormat)
    {
    }

    internal CoapResponse(CoapMessage message, IPEndPoint? remote)
    {
        Message = message;
        RemoteEndPoint = remote;
    }

    /// <summary>The response message.</summary>
    public CoapMessage Message { get; }

    private int? _blockSize;

    /// <summary>Who sent the response (for responses a client received); null for one built by a handler.</summary>
    public IPEndPoint? RemoteEndPoint { get; }

    /// <summary>The response code.</summary>
    public CoapCode Code => Message.Code;

    /// <summary>True for a 2.xx code.</summary>
    public bool IsSuccess => Message.Code.IsSuccess;

    /// <summary>
    /// True when no response was awaited: the request's No-Response option asked the server to suppress
    /// every class (<see cref="NoResponse.CoapNoResponse.All"/>, RFC 7967 section 2.1), so the call
    /// completed once the request was delivered (a NON sent, a CON acknowledged with an empty ACK). The
    /// message then has code 0.00 (Empty), the request's token, no options and no payload; whether the
    /// request succeeded is not known. A server that answered anyway, in the ACK, gives its response instead.
    /// </summary>
    public bool IsSuppressed => Message.Code.IsEmpty;

    /// <summary>The options.</summary>
    public CoapOptionCollection Options => Message.Options;

    /// <summary>The Observe option (RFC 7641): the sequence value of a notification, or null for a response that is not one.</summary>
    public uint? Observe => Message.Observe;

    /// <summary>The payload.</summary>
    public ReadOnlyMemory<byte> Payload
    {
        get => Message.Payload;
        set => Message.Payload = value;
    }

    /// <summary>The Content-Format option, or null.</summary>
    public ushort? ContentFormat
    {
        get => Message.ContentFormat;
        set => Message.ContentFormat = value;
    }

    /// <summary>
    /// 2.05 Content with a body read from a seekable stream (a file) as the client asks for it: the
    /// server's block-wise stage (RFC 7959) reads one block at a time and never holds the body whole,
    /// keeps the stream open for the follow-up block requests, and closes it when the transfer's stored
    /// state expires. Without an ETag of the handler's, the ETag is made from the body's length. Only a
    /// <see cref="Server.CoapServer"/> reads a stream body; the stream belongs to the response from here on.
    /// A response whose code is changed to an error keeps its body in one message: one longer than a block
    /// is refused (the client gets 5.00 with the reason), never cut short.
    /// </summary>
    /// <param name="body">A readable, seekable stream, read from its current position.</param>
    /// <param name="contentFormat">The body's Content-Format.</param>
    /// <returns>The response.</returns>
    /// <exception cref="ArgumentException">The stream cannot be read or cannot seek.</exception>
    public static CoapResponse Content(Stream body, ushort contentFormat)
    {
        ArgumentNullException.ThrowIfNull(body);
        if (!body.CanRead || !body.CanSeek)
        {
            throw new ArgumentException("A response body stream must be readable and seekable (the block-wise stage reads the block each request asks for).", nameof(body));
        }

        return new CoapResponse(CoapCode.Content, ReadOnlyMemory<byte>.Empty, contentFormat) { BodyStream = body };
    }

    /// <summary>
    /// The block size this response's body is cut into when it does not fit one message (RFC 7959
    /// section 2.2): 16 to 1024, a power of two; null for the server's <c>BlockwiseOptions.BlockSize</c>.
    /// A client asking for smaller blocks still gets those; over TCP it also turns BERT off for this body.
    /// </summary>
    /// <exception cref="ArgumentException">The size is not a power of two from 16 to 1024.</exception>
    public int? BlockSize
    {
        get => _blockSize;
        set
        {
            if (value is int size && (size is < 16 or > 1024 || (size & (size - 1)) != 0))
            {
                throw new ArgumentException($"BlockSize {size} is not a power of two from 16 to 1024 (RFC 7959 section 2.2).", nameof(value));
            }

            _blockSize = value;
        }
    }

    /// <summary>
    /// True when the representation never changes, as a firmware image at a versioned URI does: cut into blocks (RFC 7959
    /// section 2.4, "entirely static" representations), it goes without the ETag the server otherwise adds so a client
    /// can tell a changed representation's blocks from the first one's, which saves its bytes in every block on a
    /// constrained link. An ETag the handler sets itself still goes. Default false: the server adds an ETag
    /// (<see cref="Blockwise.BlockwiseOptions.ETagLength"/> bytes).
    /// </summary>
    public bool Immutable { get; set; }

    /// <summary>The body as a stream, when the handler gave one (<see cref="Content(Stream, ushort)"/>).</summary>
    internal Stream? BodyStream { get; private init; }

    /// <summary>2.05 Content with a text/plain payload.</summary>
    /// <param name="text">The text.</param>
    /// <returns>The response.</returns>
    public static CoapResponse Content(string text) => new(CoapCode.Content, text);

    /// <summary>2.05 Content with a payload of the given format.</summary>
    /// <param name="payload">The payload.</param>
    /// <param name="contentFormat">Its Content-Format.</param>
    /// <returns>The response.</returns>
    public static CoapResponse Content(ReadOnlyMemory<byte> payload, ushort contentFormat) => new(CoapCode.Content, payload, contentFormat);

    /// <summary>A response with a diagnostic payload: UTF-8 text without Content-Format (RFC 7252 section 5.5.2).</summary>
    /// <param name="code">An error code.</param>
    /// <param name="diagnostic">A short human-readable explanation.</param>
    /// <returns>The response.</returns>
    public static CoapResponse Diagnostic(CoapCode code, string diagnostic) => new(code, diagnostic, null);

    /// <summary>The payload decoded as UTF-8.</summary>
    /// <returns>The text.</returns>
    public string GetPayloadString() => Message.GetPayloadString();

    /// <summary>Throws unless the code is 2.xx, or no response was awaited (<see cref="IsSuppressed"/>: no error was reported).</summary>
    /// <returns>This response.</returns>
    /// <exception cref="CoapException">The code is not a success code; the message includes the code and any diagnostic payload.</exception>
    public CoapResponse EnsureSuccess()
    {
        if (!IsSuccess && !IsSuppressed)
        {
            string diagnostic = Payload.IsEmpty ? string.Empty : ": " + GetPayloadString();
            throw new CoapException($"{RemoteEndPoint?.ToString() ?? "The server"} answered {Code}{diagnostic}", RemoteEndPoint);
        }

        return this;
    }

    /// <summary>A summary of the response message.</summary>
    public override string ToString() => Message.ToString();
}
