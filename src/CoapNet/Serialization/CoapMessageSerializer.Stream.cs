using System.Buffers;
using CoapNet.Messages;

namespace CoapNet.Serialization;

// Stream entry points, synchronous and asynchronous. Both read exactly the bytes of one message
// (so successive calls read successive messages of one connection and nothing is read ahead),
// then run the same synchronous parser; they differ only in the I/O calls.
public sealed partial class CoapMessageSerializer
{
    // Messages up to this size are written with one I/O call; larger payloads are written from the
    // message's own memory after the head, so a large payload is never copied (RFC 8323 streams).
    private const int InlinePayloadLimit = 16 * 1024;

    /// <summary>
    /// Reads the next message from <paramref name="stream"/>. With stream framing, reads exactly one
    /// frame; with datagram framing, reads the stream to its end as one datagram.
    /// </summary>
    /// <param name="stream">The stream.</param>
    /// <returns>The message, or null when the stream ended cleanly before its first byte.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="stream"/> is null.</exception>
    /// <exception cref="CoapFormatException">
    /// The bytes are malformed, or the stream ended inside a message (<see cref="CoapFormatErrorReason.UnexpectedEndOfStream"/>).
    /// </exception>
    public CoapMessage? Deserialize(Stream stream)
    {
        ArgumentNullException.ThrowIfNull(stream);
        if (Framing == CoapFraming.Datagram)
        {
            return ParseDatagram(ReadDatagram(stream));
        }

        Span<byte> head = stackalloc byte[MaxStreamLengthHeader];
        if (stream.ReadAtLeast(head[..1], 1, throwOnEndOfStream: false) == 0)
        {
            return null;
        }

        int headLength = StreamHeadLength(head[0]);
        ReadExactly(stream, head[1..headLength], 1);
        byte[] frame = AllocateFrame(head[..headLength]);
        ReadExactly(stream, frame.AsSpan(headLength), headLength);
        return ParseOwned(frame);
    }

    /// <inheritdoc cref="Deserialize(Stream)"/>
    /// <param name="stream">The stream.</param>
    /// <param name="cancellationToken">Cancels the read; the stream is then left inside a message and should be closed.</param>
    /// <exception cref="OperationCanceledException">The token was canceled.</exception>
    public async ValueTask<CoapMessage?> DeserializeAsync(Stream stream, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(stream);
        cancellationToken.ThrowIfCancellationRequested();
        if (Framing == CoapFraming.Datagram)
        {
            return ParseDatagram(await ReadDatagramAsync(stream, cancellationToken).ConfigureAwait(false));
        }

        byte[] head = ArrayPool<byte>.Shared.Rent(MaxStreamLengthHeader);
        try
        {
            if (await stream.ReadAtLeastAsync(head.AsMemory(0, 1), 1, throwOnEndOfStream: false, cancellationToken).ConfigureAwait(false) == 0)
            {
                return null;
            }

            int headLength = StreamHeadLength(head[0]);
            await ReadExactlyAsync(stream, head.AsMemory(1, headLength - 1), 1, cancellationToken).ConfigureAwait(false);
            byte[] frame = AllocateFrame(head.AsSpan(0, headLength));
            await ReadExactlyAsync(stream, frame.AsMemory(headLength), headLength, cancellationToken).ConfigureAwait(false);
            return ParseOwned(frame);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(head);
        }
    }

    /// <summary>Writes one message to <paramref name="stream"/>: a frame, or (datagram framing) the datagram's bytes.</summary>
    /// <param name="stream">The stream.</param>
    /// <param name="message">The message.</param>
    /// <exception cref="ArgumentNullException">An argument is null.</exception>
    /// <exception cref="ArgumentException">The message cannot be serialized (see <see cref="Serialize(CoapMessage)"/>).</exception>
    public void Serialize(Stream stream, CoapMessage message)
    {
        ArgumentNullException.ThrowIfNull(stream);
        byte[] buffer = RentHead(message, out int count, out bool payloadWritten);
        try
        {
            stream.Write(buffer, 0, count);
            if (!payloadWritten)
            {
                stream.Write(message.Payload.Span);
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    /// <inheritdoc cref="Serialize(Stream, CoapMessage)"/>
    /// <param name="stream">The stream.</param>
    /// <param name="message">The message.</param>
    /// <param name="cancellationToken">Cancels the write.</param>
    /// <remarks>A large payload is written straight from the message's memory: memory use does not grow with the payload.</remarks>
    /// <exception cref="OperationCanceledException">The token was canceled.</exception>
    public async ValueTask SerializeAsync(Stream stream, CoapMessage message, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(stream);
        cancellationToken.ThrowIfCancellationRequested();
        byte[] buffer = RentHead(message, out int count, out bool payloadWritten);
        try
        {
            await stream.WriteAsync(buffer.AsMemory(0, count), cancellationToken).ConfigureAwait(false);
            if (!payloadWritten)
            {
                await stream.WriteAsync(message.Payload, cancellationToken).ConfigureAwait(false);
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    /// <summary>Serializes the head (and a small payload) into a pooled buffer.</summary>
    private byte[] RentHead(CoapMessage message, out int count, out bool payloadWritten)
    {
        Layout layout = Measure(message);
        payloadWritten = layout.Total <= InlinePayloadLimit;
        count = payloadWritten ? layout.Total : layout.Head;
        byte[] buffer = ArrayPool<byte>.Shared.Rent(count);
        WriteHead(message, layout, buffer);
        if (payloadWritten)
        {
            message.Payload.Span.CopyTo(buffer.AsSpan(layout.Head));
        }

        return buffer;
    }

    private static int StreamHeadLength(byte first) => 1 + ExtendedLengthBytes(first >> 4);

    /// <summary>Allocates the array for a whole frame from its length header and copies the header in.</summary>
    private byte[] AllocateFrame(ReadOnlySpan<byte> head)
    {
        if (ReadStreamLength(head, out long frameLength, out CoapFormatError error) != OperationStatus.Done)
        {
            ThrowFormat(error);
        }

        byte[] frame = GC.AllocateUninitializedArray<byte>((int)frameLength);
        head.CopyTo(frame);
        return frame;
    }

    private CoapMessage ParseOwned(byte[] frame)
    {
        if (!TryParse(frame, frame, out CoapMessage? message, out CoapFormatError error))
        {
            ThrowFormat(error);
        }

        return message;
    }

    private CoapMessage? ParseDatagram(byte[]? datagram) => datagram is null ? null : ParseOwned(datagram);

    private static void ReadExactly(Stream stream, Span<byte> buffer, int offset)
    {
        int read = stream.ReadAtLeast(buffer, buffer.Length, throwOnEndOfStream: false);
        if (read < buffer.Length)
        {
            ThrowFormat(new CoapFormatError(CoapFormatErrorReason.UnexpectedEndOfStream, offset + read));
        }
    }

    private static async ValueTask ReadExactlyAsync(Stream stream, Memory<byte> buffer, int offset, CancellationToken cancellationToken)
    {
        int read = await stream.ReadAtLeastAsync(buffer, buffer.Length, throwOnEndOfStream: false, cancellationToken).ConfigureAwait(false);
        if (read < buffer.Length)
        {
            ThrowFormat(new CoapFormatError(CoapFormatErrorReason.UnexpectedEndOfStream, offset + read));
        }
    }

    // A datagram is the whole stream; it is bounded by MaxMessageSize, so a stream that never ends cannot grow it.
    private byte[]? ReadDatagram(Stream stream)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(Math.Min(_maxMessageSize + 1, 4096));
        int length = 0;
        try
        {
            int read;
            while ((read = stream.Read(buffer, length, buffer.Length - length)) > 0)
            {
                length += read;
                buffer = GrowDatagramBuffer(buffer, length);
            }

            return length == 0 ? null : buffer.AsSpan(0, length).ToArray();
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    private async ValueTask<byte[]?> ReadDatagramAsync(Stream stream, CancellationToken cancellationToken)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(Math.Min(_maxMessageSize + 1, 4096));
        int length = 0;
        try
        {
            int read;
            while ((read = await stream.ReadAsync(buffer.AsMemory(length), cancellationToken).ConfigureAwait(false)) > 0)
            {
                length += read;
                buffer = GrowDatagramBuffer(buffer, length);
            }

            return length == 0 ? null : buffer.AsSpan(0, length).ToArray();
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    private byte[] GrowDatagramBuffer(byte[] buffer, int length)
    {
        if (length > _maxMessageSize)
        {
            ThrowFormat(new CoapFormatError(CoapFormatErrorReason.MessageTooLarge, _maxMessageSize));
        }

        if (length < buffer.Length)
        {
            return buffer;
        }

        byte[] larger = ArrayPool<byte>.Shared.Rent(Math.Min((long)buffer.Length * 2, _maxMessageSize + 1L) is long n ? (int)n : 0);
        buffer.AsSpan(0, length).CopyTo(larger);
        ArrayPool<byte>.Shared.Return(buffer);
        return larger;
    }
}
