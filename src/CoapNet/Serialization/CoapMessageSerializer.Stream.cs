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

    [ThreadStatic]
    private static byte[]? t_streamHead;

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

        // The 5-byte head buffer is cached per thread (taken while in use, so interleaved calls never share
        // it): renting it from ArrayPool cost as much as parsing a small message.
        byte[] head = t_streamHead ?? new byte[MaxStreamLengthHeader];
        t_streamHead = null;
        try
        {
            if (await FillAsync(stream, head.AsMemory(0, 1), cancellationToken).ConfigureAwait(false) == 0)
            {
                return null;
            }

            int headLength = StreamHeadLength(head[0]);
            if (headLength > 1)
            {
                EnsureFilled(await FillAsync(stream, head.AsMemory(1, headLength - 1), cancellationToken).ConfigureAwait(false), headLength - 1, 1);
            }

            byte[] frame = AllocateFrame(head.AsSpan(0, headLength));
            EnsureFilled(await FillAsync(stream, frame.AsMemory(headLength), cancellationToken).ConfigureAwait(false), frame.Length - headLength, headLength);
            return ParseOwned(frame);
        }
        finally
        {
            t_streamHead = head;
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

    /// <summary>
    /// Reads until <paramref name="buffer"/> is full or the stream ends; returns the count read. Not an
    /// async method: when the stream completes its reads synchronously (in-memory and buffered streams,
    /// data already received) no state machine runs besides the caller's. Stream.ReadAtLeastAsync runs
    /// one per call, which on a small message cost more than parsing it.
    /// </summary>
    private static ValueTask<int> FillAsync(Stream stream, Memory<byte> buffer, CancellationToken cancellationToken)
    {
        int total = 0;
        while (total < buffer.Length)
        {
            ValueTask<int> pending = stream.ReadAsync(buffer[total..], cancellationToken);
            if (!pending.IsCompletedSuccessfully)
            {
                return FillSlowAsync(stream, buffer, total, pending, cancellationToken);
            }

            int read = pending.Result;
            if (read == 0)
            {
                break;
            }

            total += read;
        }

        return new ValueTask<int>(total);
    }

    private static async ValueTask<int> FillSlowAsync(Stream stream, Memory<byte> buffer, int total, ValueTask<int> pending, CancellationToken cancellationToken)
    {
        int read = await pending.ConfigureAwait(false);
        while (read > 0)
        {
            total += read;
            if (total == buffer.Length)
            {
                break;
            }

            read = await stream.ReadAsync(buffer[total..], cancellationToken).ConfigureAwait(false);
        }

        return total;
    }

    private static void EnsureFilled(int read, int expected, int offset)
    {
        if (read < expected)
        {
            ThrowFormat(new CoapFormatError(CoapFormatErrorReason.UnexpectedEndOfStream, offset + read));
        }
    }

    // A datagram is the whole stream; it is bounded by MaxMessageSize, so a stream that never ends cannot grow it.
    private byte[]? ReadDatagram(Stream stream)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(Math.Min(_maxMessageSize, 4095) + 1); // not _maxMessageSize + 1: int.MaxValue must not overflow
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
        byte[] buffer = ArrayPool<byte>.Shared.Rent(Math.Min(_maxMessageSize, 4095) + 1); // not _maxMessageSize + 1: int.MaxValue must not overflow
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

        // Double, but never past one byte over the limit (enough to detect MessageTooLarge) nor past the largest array.
        int size = (int)Math.Min(Math.Min((long)buffer.Length * 2, _maxMessageSize + 1L), Array.MaxLength);
        byte[] larger = ArrayPool<byte>.Shared.Rent(size);
        buffer.AsSpan(0, length).CopyTo(larger);
        ArrayPool<byte>.Shared.Return(buffer);
        return larger;
    }
}
