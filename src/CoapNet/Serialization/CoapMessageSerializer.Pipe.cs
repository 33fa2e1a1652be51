using System.Buffers;
using System.IO.Pipelines;
using CoapNet.Messages;

namespace CoapNet.Serialization;

// System.IO.Pipelines entry points: the same ReadFrame / Serialize core over pooled pipe memory.
public sealed partial class CoapMessageSerializer
{
    /// <summary>
    /// Reads the next message from <paramref name="reader"/>. With stream framing, consumes exactly one
    /// frame and leaves the rest buffered in the pipe for the next call; with datagram framing, reads
    /// until the writer completes and parses everything as one datagram.
    /// </summary>
    /// <param name="reader">The pipe reader.</param>
    /// <param name="cancellationToken">Cancels the read.</param>
    /// <returns>The message, or null when the pipe completed cleanly before the first byte of a message.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="reader"/> is null.</exception>
    /// <exception cref="CoapFormatException">The bytes are malformed, or the pipe completed inside a message.</exception>
    /// <exception cref="OperationCanceledException">The token was canceled, or the read was canceled through <see cref="PipeReader.CancelPendingRead"/>.</exception>
    public async ValueTask<CoapMessage?> DeserializeAsync(PipeReader reader, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(reader);
        while (true)
        {
            ReadResult result = await reader.ReadAsync(cancellationToken).ConfigureAwait(false);
            ReadOnlySequence<byte> buffer = result.Buffer;
            SequencePosition consumed = buffer.Start;
            SequencePosition examined = buffer.End;
            try
            {
                if (result.IsCanceled)
                {
                    throw new OperationCanceledException("The pending read was canceled.");
                }

                if (buffer.IsEmpty && result.IsCompleted)
                {
                    return null;
                }

                // A datagram ends when the writer completes; past MaxMessageSize it is rejected without waiting for that,
                // so a peer that never completes cannot grow the buffer without bound (as ReadDatagram does for streams).
                if (Framing == CoapFraming.Stream || result.IsCompleted || buffer.Length > _maxMessageSize)
                {
                    OperationStatus status = ReadFrame(buffer, out CoapMessage? message, out consumed, out CoapFormatError error);
                    if (status == OperationStatus.Done)
                    {
                        examined = consumed;
                        return message;
                    }

                    if (status == OperationStatus.InvalidData)
                    {
                        ThrowFormat(error);
                    }

                    if (result.IsCompleted)
                    {
                        ThrowFormat(new CoapFormatError(CoapFormatErrorReason.UnexpectedEndOfStream, buffer.Length));
                    }
                }
            }
            finally
            {
                reader.AdvanceTo(consumed, examined);
            }
        }
    }

    /// <summary>Writes one message to <paramref name="writer"/> and flushes it.</summary>
    /// <param name="message">The message.</param>
    /// <param name="writer">The pipe writer.</param>
    /// <param name="cancellationToken">Cancels the flush.</param>
    /// <returns>A task that completes when the message is flushed.</returns>
    /// <exception cref="ArgumentNullException">An argument is null.</exception>
    /// <exception cref="ArgumentException">The message cannot be serialized (see <see cref="Serialize(CoapMessage)"/>).</exception>
    /// <exception cref="OperationCanceledException">The token was canceled.</exception>
    /// <remarks>
    /// A payload over 16 KiB is written and flushed in 64 KiB pieces, so the reader's back-pressure applies while
    /// it is written. A cancellation between two pieces leaves a partial frame in the pipe: the connection cannot
    /// carry another message after it (RFC 8323 section 3.3 has no way to skip one) and should be aborted.
    /// </remarks>
    public async ValueTask SerializeAsync(CoapMessage message, PipeWriter writer, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(writer);
        cancellationToken.ThrowIfCancellationRequested();
        Layout layout = Measure(message);
        WriteHead(message, WireHeader.Of(message), layout, writer.GetSpan(layout.Head));
        writer.Advance(layout.Head);
        if (message.Payload.Length <= InlinePayloadLimit)
        {
            writer.Write(message.Payload.Span);
            await writer.FlushAsync(cancellationToken).ConfigureAwait(false);
        }
        else
        {
            // A large payload (so at least one piece, and a flush) goes in pieces of PipePayloadChunk, each copied
            // into one buffer of that size (a Pipe rents it whole rather than filling its 4 KiB segments one by
            // one) and flushed, so the reader's back-pressure bounds the memory it takes to about one piece beyond
            // the pipe's threshold.
            ReadOnlyMemory<byte> remaining = message.Payload;
            while (!remaining.IsEmpty)
            {
                int length = Math.Min(remaining.Length, PipePayloadChunk);
                remaining.Span[..length].CopyTo(writer.GetSpan(length));
                writer.Advance(length);
                remaining = remaining[length..];
                FlushResult result = await writer.FlushAsync(cancellationToken).ConfigureAwait(false);
                if (result.IsCompleted)
                {
                    // The reader is gone: writing on would only buffer bytes nobody reads.
                    return;
                }
            }
        }
    }

    /// <summary>The piece a large payload is written to a pipe in: big enough that the copy dominates, small enough to stay off the Large Object Heap.</summary>
    private const int PipePayloadChunk = 64 * 1024;
}
