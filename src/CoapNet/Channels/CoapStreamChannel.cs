using System.Buffers;
using System.IO.Pipelines;
using CoapNet.Messages;
using CoapNet.Serialization;
using CoapNet.Transports;

namespace CoapNet.Channels;

/// <summary>
/// The conversation with one peer over one <see cref="TransportConnection"/>: RFC 8323 frames in and
/// out through the serializer's pipe entry points. Reads are bounded by our Max-Message-Size before
/// any allocation; a write that waits longer than the send timeout for a peer that stopped reading
/// aborts the connection.
/// </summary>
/// <remarks>
/// Not safe for concurrent writes, and needs no lock for them: its one writer at a time is whoever drains the
/// connection's <see cref="Messaging.Connections.ConnectionWriter"/> (its write loop, or the read loop after a read),
/// which writes a batch of frames and awaits their one flush before the next (RFC 8323 frames must not interleave on
/// the stream).
/// </remarks>
internal sealed class CoapStreamChannel : IDisposable
{
    // Frames we write are bounded by the peer's Max-Message-Size, checked by the caller; the serializer only needs not to refuse them.
    private static readonly CoapMessageSerializer Writer = new(CoapFraming.Stream, new CoapSerializerOptions { MaxMessageSize = int.MaxValue });

    private readonly TransportConnection _connection;
    private readonly CoapMessageSerializer _reader;
    private readonly ITimer _sendWatchdog;
    private readonly TimeSpan _sendTimeout;
    private readonly BatchWriter _output;

    /// <summary>Creates the channel.</summary>
    /// <param name="connection">The connection; the channel does not own it.</param>
    /// <param name="reader">The stream serializer whose MaxMessageSize is ours (RFC 8323 section 5.3.1).</param>
    /// <param name="time">The clock of the send timeout.</param>
    /// <param name="sendTimeout">How long a flush may wait for the peer.</param>
    public CoapStreamChannel(TransportConnection connection, CoapMessageSerializer reader, TimeProvider time, TimeSpan sendTimeout)
    {
        _connection = connection;
        _reader = reader;
        _sendTimeout = sendTimeout;
        _output = new BatchWriter(connection.Transport.Output);

        // One timer per connection, armed only while a flush waits: the common, immediate flush costs nothing.
        _sendWatchdog = time.CreateTimer(
            static state =>
            {
                CoapStreamChannel channel = (CoapStreamChannel)state!;
                channel._connection.Abort(new TimeoutException($"The peer stopped reading: it took nothing we sent for {channel._sendTimeout.TotalSeconds:0.###} s."));
            },
            this,
            Timeout.InfiniteTimeSpan,
            Timeout.InfiniteTimeSpan);
    }

    /// <summary>The size of <paramref name="message"/> as a frame, to check it against the peer's Max-Message-Size before it is queued.</summary>
    /// <exception cref="ArgumentException">The message cannot be serialized.</exception>
    public static int MeasureForSend(CoapMessage message) => Writer.GetSerializedLength(message);

    /// <summary>The frame length of <paramref name="message"/> sent with a token of <paramref name="tokenLength"/> bytes in place of its own.</summary>
    public static int MeasureForSend(CoapMessage message, int tokenLength) => Writer.GetSerializedLength(message, tokenLength);

    /// <summary>
    /// Reads the messages whose frames are whole in what has arrived: waits for at least one, takes at most
    /// <paramref name="max"/>, and leaves the rest buffered for the next call. A frame header announcing more than our
    /// Max-Message-Size is rejected from its first bytes (<see cref="CoapFormatErrorReason.MessageTooLarge"/>), before the
    /// frame is buffered or allocated; a bad frame after good ones is reported by the next call, so the good ones are
    /// handled first, as they would have been one read at a time.
    /// </summary>
    /// <param name="into">Where the messages go, in order.</param>
    /// <param name="max">The most messages to take.</param>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <returns>True with at least one message; false when the peer closed the connection between messages.</returns>
    /// <exception cref="CoapFormatException">The frame is malformed or too large, or the connection ended inside one.</exception>
    /// <exception cref="OperationCanceledException">The token was canceled.</exception>
    /// <exception cref="IOException">The transport failed.</exception>
    public async ValueTask<bool> ReadAsync(List<CoapMessage> into, int max, CancellationToken cancellationToken)
    {
        PipeReader input = _connection.Transport.Input;
        while (true)
        {
            ReadResult result = await input.ReadAsync(cancellationToken).ConfigureAwait(false);
            ReadOnlySequence<byte> buffer = result.Buffer;
            SequencePosition consumed = buffer.Start;
            SequencePosition examined = buffer.End;
            try
            {
                if (result.IsCanceled)
                {
                    throw new OperationCanceledException("The pending read was canceled.");
                }

                // All the frames one read brought, parsed before any is handled: the pipe is released at once, and the
                // responses to them can leave together (ConnectionWriter).
                bool lookAgain = false;
                while (into.Count < max)
                {
                    OperationStatus status = _reader.ReadFrame(buffer.Slice(consumed), out CoapMessage? message, out SequencePosition end, out CoapFormatError error);
                    if (status == OperationStatus.Done)
                    {
                        into.Add(message!);
                        consumed = end;
                        continue;
                    }

                    if (status == OperationStatus.InvalidData)
                    {
                        if (into.Count == 0)
                        {
                            throw new CoapFormatException(error);
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
                    if (buffer.IsEmpty)
                    {
                        return false;
                    }

                    throw new CoapFormatException(new CoapFormatError(CoapFormatErrorReason.UnexpectedEndOfStream, buffer.Length));
                }
            }
            finally
            {
                input.AdvanceTo(consumed, examined);
            }
        }
    }

    /// <summary>
    /// Writes one message without flushing it; the caller is the one writer and flushes after a batch
    /// (<see cref="FlushAsync"/>), so frames ready together leave in one send.
    /// </summary>
    /// <returns>True when written; false when the connection is gone (its output completed).</returns>
    /// <exception cref="ArgumentException">The message cannot be serialized; nothing was written.</exception>
    /// <param name="message">The message.</param>
    /// <param name="token">The token to write in place of the message's own (a response: its request's), or null for the message's.</param>
    public bool Write(CoapMessage message, ReadOnlyMemory<byte>? token)
    {
        try
        {
            // Measures first and throws before writing anything, so a refused message never leaves half a frame behind.
            Writer.Serialize(message, token is { } own ? new CoapMessageSerializer.WireHeader(message.Type, message.MessageId, own) : CoapMessageSerializer.WireHeader.Of(message), _output);
            return true;
        }
        catch (Exception exception) when (exception is IOException or InvalidOperationException or ObjectDisposedException)
        {
            // The pipe was already completed: the connection is gone.
            return false;
        }
    }

    /// <summary>The bytes written and not yet flushed: this batch's, and what the transport's output still holds when it can tell.</summary>
    public long Unflushed => _output.Pending + (_connection.Transport.Output is { CanGetUnflushedBytes: true } output ? output.UnflushedBytes : 0);

    /// <summary>Flushes what <see cref="Write"/> wrote. The caller is the one writer: it awaits this before writing again.</summary>
    /// <returns>True when flushed; false when the connection is gone (closed, aborted, or timed out by the send timeout).</returns>
    public async ValueTask<bool> FlushAsync()
    {
        try
        {
            _output.Commit();
            ValueTask<FlushResult> flushing = _connection.Transport.Output.FlushAsync();
            FlushResult flushed;
            if (flushing.IsCompleted)
            {
                flushed = flushing.Result;
            }
            else
            {
                // The transport's output is full: the peer is not reading. Wait, but not longer than the send timeout.
                _sendWatchdog.Change(_sendTimeout, Timeout.InfiniteTimeSpan);
                try
                {
                    flushed = await flushing.ConfigureAwait(false);
                }
                finally
                {
                    _sendWatchdog.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
                }
            }

            return !flushed.IsCompleted && !flushed.IsCanceled;
        }
        catch (Exception exception) when (exception is IOException or InvalidOperationException or ObjectDisposedException)
        {
            // The transport completed the pipe with its error, or the pipe was already completed: the connection is gone.
            return false;
        }
    }

    /// <inheritdoc/>
    public void Dispose() => _sendWatchdog.Dispose();

    /// <summary>
    /// The frames of one batch, written into the transport's output and handed to it with one <see cref="PipeWriter.Advance"/>
    /// at the flush. A pipe takes its lock on each Advance, and the serializer advances twice a frame (head, then payload):
    /// two locks a response under pipelined load, where a batch holds many (issue 39).
    /// </summary>
    /// <remarks>Its one user at a time is the channel's one writer, so it needs no lock either.</remarks>
    private sealed class BatchWriter(PipeWriter output) : IBufferWriter<byte>
    {
        // What the output lent with GetMemory and this batch has not handed back yet, and how much of it is written.
        private Memory<byte> _memory;
        private int _written;

        /// <summary>The bytes written since the last <see cref="Commit"/>.</summary>
        public int Pending => _written;

        /// <inheritdoc/>
        public void Advance(int count)
        {
            if ((uint)count > (uint)(_memory.Length - _written))
            {
                throw new ArgumentOutOfRangeException(nameof(count), count, $"Advanced past the {_memory.Length - _written} bytes GetMemory gave.");
            }

            _written += count;
        }

        /// <inheritdoc/>
        public Memory<byte> GetMemory(int sizeHint = 0)
        {
            if (_memory.Length - _written < Math.Max(sizeHint, 1))
            {
                // Full: what is written goes to the output, which lends a new block (at least sizeHint bytes).
                Commit();
                _memory = output.GetMemory(sizeHint);
            }

            return _memory[_written..];
        }

        /// <inheritdoc/>
        public Span<byte> GetSpan(int sizeHint = 0) => GetMemory(sizeHint).Span;

        /// <summary>Hands what is written to the output; the memory it lent is not used again.</summary>
        public void Commit()
        {
            if (_written > 0)
            {
                output.Advance(_written);
            }

            _memory = default;
            _written = 0;
        }
    }
}
