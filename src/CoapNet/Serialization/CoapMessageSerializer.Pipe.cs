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
        List<CoapMessage> one = new(1);
        return await ReadAsync(reader, one, 1, cancellationToken).ConfigureAwait(false) ? one[0] : null;
    }

    /// <summary>
    /// Reads the messages that are whole in what has arrived: waits for at least one, takes at most <paramref name="max"/>
    /// (a datagram is one, once the writer completes), and leaves the rest buffered for the next call. A bad frame after
    /// good ones is reported by the next call, so the good ones are handled first. The one pipe read loop behind
    /// <see cref="DeserializeAsync(PipeReader, CancellationToken)"/> and a connection's reads (<c>CoapStreamChannel</c>).
    /// </summary>
    /// <returns>True with at least one message; false when the pipe completed cleanly before the first byte of a message.</returns>
    internal async ValueTask<bool> ReadAsync(PipeReader reader, List<CoapMessage> into, int max, CancellationToken cancellationToken)
    {
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
                    return false;
                }

                // A datagram ends when the writer completes; past MaxMessageSize it is rejected without waiting for that,
                // so a peer that never completes cannot grow the buffer without bound (as ReadDatagram does for streams).
                // Stream frames: all that one read made whole, parsed before any is handled, so the pipe is released at
                // once and the answers to them can leave together.
                bool lookAgain = false;
                while (into.Count < max && (Framing == CoapFraming.Stream || result.IsCompleted || buffer.Length > _maxMessageSize))
                {
                    OperationStatus status = ReadFrame(buffer.Slice(consumed), out CoapMessage? message, out SequencePosition end, out CoapFormatError error);
                    if (status == OperationStatus.Done)
                    {
                        into.Add(message!);
                        consumed = end;
                        if (Framing == CoapFraming.Datagram)
                        {
                            break;
                        }

                        continue;
                    }

                    if (status == OperationStatus.InvalidData)
                    {
                        if (into.Count == 0)
                        {
                            ThrowFormat(error);
                        }

                        lookAgain = true;
                    }

                    break;
                }

                if (into.Count > 0)
                {
                    // What is left may hold a whole frame (past max) or a bad one to report next: the next read must look
                    // at it again rather than wait for more bytes. Part of a frame waits for more.
                    if (lookAgain || into.Count == max)
                    {
                        examined = consumed;
                    }

                    return true;
                }

                if (result.IsCompleted)
                {
                    ThrowFormat(new CoapFormatError(CoapFormatErrorReason.UnexpectedEndOfStream, buffer.Length));
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
