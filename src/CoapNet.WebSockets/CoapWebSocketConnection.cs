using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Net.WebSockets;
using CoapNet.Channels;
using CoapNet.Messaging;
using CoapNet.Serialization;
using CoapNet.Transports;

namespace CoapNet.WebSockets;

/// <summary>
/// One WebSocket that carries CoAP (RFC 8323 section 4) as a <see cref="TransportConnection"/>, so that RFC 8323's
/// connection layer runs over it exactly as over TCP: CSM first, Ping/Pong, Release, Abort, BERT where both CSMs offer
/// it, and the limits of <see cref="CoapConnectionOptions"/>. The server side (NetCoap.AspNetCore) makes one for each
/// WebSocket ASP.NET Core accepts; <see cref="CoapWebSocketTransportFactory"/> makes one for each a client opens.
/// </summary>
/// <remarks>
/// <para>
/// Each CoAP message is one binary WebSocket message in RFC 8323's reliable framing with the Len nibble set to 0 and no
/// extended length, the WebSocket message's own length standing in for it (section 4.2). The connection layer reads and
/// writes stream frames (section 3.2) in <see cref="Transport"/>: the receive pump turns each WebSocket message into one
/// such frame, and the send pump each frame into one WebSocket message; the codec itself is the TCP one.
/// </para>
/// <para>
/// A text message, a Len other than 0, a message too short for its token, or a message longer than the maximum message
/// size reaches the connection layer as a <see cref="CoapFormatException"/>, on which it aborts this connection alone
/// with 7.05 and a diagnostic (section 5.6). Both directions are bounded as a TCP connection's are
/// (<see cref="TcpTransportOptions"/>): when the connection layer stops reading, nothing more is received, and when the
/// peer stops reading, the layer's flushes wait.
/// </para>
/// </remarks>
public sealed class CoapWebSocketConnection : TransportConnection, IDuplexPipe
{
    /// <summary>The WebSocket subprotocol of CoAP, "coap" (RFC 8323 section 4.1): both sides must name it in the handshake.</summary>
    public const string SubProtocol = "coap";

    /// <summary>The path of the WebSocket endpoint on a server's authority, "/.well-known/coap" (RFC 8323 section 4.1).</summary>
    public const string Path = "/.well-known/coap";

    // The receive buffer a connection holds between messages; a longer message grows it, up to the maximum message size.
    private const int InitialReceiveBuffer = 2048;

    // A frame header (Len/TKL and up to 4 extended length bytes) is at most this long (RFC 8323 section 3.2).
    private const int MaxFrameHeader = 5;

    private readonly WebSocket _socket;
    private readonly Pipe _input;
    private readonly Pipe _output;
    private readonly int _maxMessageSize;
    private readonly TimeSpan _closeTimeout;
    private readonly CancellationTokenSource _closed = new();
    private readonly IDisposable? _owned;
    private readonly Task _receiving;
    private readonly Task _sending;
    private Exception? _abortReason;
    private int _aborted;
    private int _disposed;

    /// <summary>Starts carrying CoAP over <paramref name="webSocket"/>, an open WebSocket that negotiated <see cref="SubProtocol"/>.</summary>
    /// <param name="webSocket">The WebSocket; the connection owns it from now on.</param>
    /// <param name="remoteEndPoint">The peer's endpoint.</param>
    /// <param name="localEndPoint">This side's endpoint.</param>
    /// <param name="securityContext">
    /// The session and the identity the WebSocket's HTTP request authenticated (a TLS client certificate, an HTTP user),
    /// which becomes part of the connection's <see cref="CoapPeer"/>; null for none.
    /// </param>
    /// <param name="connections">The limits of the connection layer; its <see cref="CoapConnectionOptions.MaxMessageSize"/> bounds what is received. Null for the defaults.</param>
    /// <param name="buffering">How much each direction buffers, and how long a close waits; null for the defaults.</param>
    /// <exception cref="ArgumentException">The WebSocket is not open.</exception>
    public CoapWebSocketConnection(
        WebSocket webSocket,
        IPEndPoint remoteEndPoint,
        IPEndPoint localEndPoint,
        CoapSecurityContext? securityContext = null,
        CoapConnectionOptions? connections = null,
        TcpTransportOptions? buffering = null)
        : this(webSocket, remoteEndPoint, localEndPoint, securityContext, connections, buffering, null)
    {
    }

    /// <summary>As the public constructor, owning <paramref name="owned"/> (a client's HTTP handler) too.</summary>
    internal CoapWebSocketConnection(
        WebSocket webSocket,
        IPEndPoint remoteEndPoint,
        IPEndPoint localEndPoint,
        CoapSecurityContext? securityContext,
        CoapConnectionOptions? connections,
        TcpTransportOptions? buffering,
        IDisposable? owned)
    {
        ArgumentNullException.ThrowIfNull(webSocket);
        ArgumentNullException.ThrowIfNull(remoteEndPoint);
        ArgumentNullException.ThrowIfNull(localEndPoint);
        if (webSocket.State != WebSocketState.Open)
        {
            throw new ArgumentException($"The WebSocket is {webSocket.State}, not open.", nameof(webSocket));
        }

        _socket = webSocket;
        RemoteEndPoint = remoteEndPoint;
        LocalEndPoint = localEndPoint;
        SecurityContext = securityContext;
        _owned = owned;
        _maxMessageSize = (connections ?? new CoapConnectionOptions()).MaxMessageSize;
        buffering ??= new TcpTransportOptions();
        _closeTimeout = buffering.CloseTimeout;

        // Pause at the bound and resume at half of it, as a TCP connection's pipes do.
        long input = buffering.MaxInputBufferSize;
        long output = buffering.MaxOutputBufferSize;
        _input = new Pipe(new PipeOptions(pauseWriterThreshold: input, resumeWriterThreshold: input / 2, useSynchronizationContext: false));
        _output = new Pipe(new PipeOptions(pauseWriterThreshold: output, resumeWriterThreshold: output / 2, useSynchronizationContext: false));
        _receiving = Task.Run(ReceiveLoopAsync);
        _sending = Task.Run(SendLoopAsync);
    }

    /// <inheritdoc/>
    public override IDuplexPipe Transport => this;

    PipeReader IDuplexPipe.Input => _input.Reader;

    PipeWriter IDuplexPipe.Output => _output.Writer;

    /// <inheritdoc/>
    public override IPEndPoint RemoteEndPoint { get; }

    /// <inheritdoc/>
    public override IPEndPoint LocalEndPoint { get; }

    /// <inheritdoc/>
    public override CoapSecurityContext? SecurityContext { get; }

    /// <summary>Canceled once the connection is over: closed and disposed, or aborted.</summary>
    public override CancellationToken ConnectionClosed => _closed.Token;

    /// <inheritdoc/>
    public override void Abort(Exception? reason = null)
    {
        Interlocked.CompareExchange(ref _abortReason, reason ?? new IOException("The connection was aborted."), null);
        if (Interlocked.Exchange(ref _aborted, 1) != 0)
        {
            return;
        }

        // The WebSocket goes at once, which fails the pumps' pending receive and send; a pump waiting on a paused flush
        // or on the output is released too.
        _socket.Abort();
        _input.Writer.CancelPendingFlush();
        _output.Reader.CancelPendingRead();
        SignalClosed();
    }

    /// <inheritdoc/>
    /// <remarks>
    /// What the connection layer wrote (a last Release or Abort) goes out first, then the WebSocket closing handshake
    /// (RFC 6455 section 7); a peer that takes nothing, or does not answer the close, within the close timeout is cut off.
    /// </remarks>
    public override async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        _output.Writer.Complete();
        try
        {
            await Task.WhenAll(_sending, _receiving).WaitAsync(_closeTimeout).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            Abort(new IOException($"The peer did not complete the WebSocket close within {_closeTimeout.TotalSeconds:0.###} s."));
            await Task.WhenAll(_sending, _receiving).ConfigureAwait(false);
        }

        _input.Reader.Complete();
        _socket.Dispose();
        _owned?.Dispose();
        SignalClosed();
    }

    private void SignalClosed()
    {
        try
        {
            _closed.Cancel();
        }
        catch (AggregateException)
        {
            // A callback registered on ConnectionClosed failed; the connection is closed all the same.
        }
    }

    /// <summary>Receives WebSocket messages and writes each into the input pipe as a stream frame.</summary>
    private async Task ReceiveLoopAsync()
    {
        PipeWriter writer = _input.Writer;
        Exception? error = null;
        byte[] buffer = ArrayPool<byte>.Shared.Rent(InitialReceiveBuffer);
        try
        {
            while (true)
            {
                int filled = 0;
                ValueWebSocketReceiveResult received;
                do
                {
                    if (filled == buffer.Length)
                    {
                        buffer = Grow(buffer, Math.Min((long)buffer.Length * 2, _maxMessageSize + 1L));
                    }

                    received = await _socket.ReceiveAsync(buffer.AsMemory(filled), CancellationToken.None).ConfigureAwait(false);
                    if (received.MessageType == WebSocketMessageType.Close)
                    {
                        return; // The peer closed: the connection layer reads the end of the stream.
                    }

                    if (received.MessageType != WebSocketMessageType.Binary)
                    {
                        throw new CoapFormatException(new CoapFormatError(CoapFormatErrorReason.InvalidFraming, filled));
                    }

                    filled += received.Count;
                    if (filled > _maxMessageSize)
                    {
                        // RFC 8323 section 5.3.1: larger than the Max-Message-Size our CSM announced; refused before more is buffered.
                        throw new CoapFormatException(new CoapFormatError(CoapFormatErrorReason.MessageTooLarge, _maxMessageSize));
                    }
                }
                while (!received.EndOfMessage);

                WriteFrame(writer, buffer.AsSpan(0, filled));

                // Waits while the connection layer holds MaxInputBufferSize unread bytes: nothing more is received, and
                // the peer's sends wait on TCP's flow control.
                FlushResult flushed = await writer.FlushAsync().ConfigureAwait(false);
                if (flushed.IsCompleted || flushed.IsCanceled)
                {
                    return;
                }

                if (buffer.Length > InitialReceiveBuffer * 8)
                {
                    // A large message is over: an idle connection does not keep its buffer.
                    ArrayPool<byte>.Shared.Return(buffer);
                    buffer = ArrayPool<byte>.Shared.Rent(InitialReceiveBuffer);
                }
            }
        }
        catch (CoapFormatException exception)
        {
            // The connection layer reads it as the next frame's format error and aborts with 7.05 and its diagnostic.
            error = exception;
        }
        catch (Exception exception) when (exception is not OutOfMemoryException)
        {
            error = Volatile.Read(ref _aborted) != 0 ? _abortReason : new IOException($"The WebSocket failed: {exception.Message}", exception);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
            await writer.CompleteAsync(error).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Writes one WebSocket message (Len 0, RFC 8323 section 4.2) as the stream frame the connection layer reads
    /// (section 3.2): the Len/TKL byte and extended length for its real length, then the code, token, options and payload.
    /// </summary>
    /// <exception cref="CoapFormatException">The message is not in the WebSocket framing.</exception>
    private static void WriteFrame(PipeWriter writer, ReadOnlySpan<byte> message)
    {
        if (message.IsEmpty)
        {
            throw new CoapFormatException(new CoapFormatError(CoapFormatErrorReason.MessageTooShort, 0));
        }

        if (message[0] >> 4 != 0)
        {
            throw new CoapFormatException(new CoapFormatError(CoapFormatErrorReason.InvalidFraming, 0));
        }

        int tokenLength = message[0] & 0x0F;
        if (tokenLength > Messages.CoapMessage.MaxTokenLength)
        {
            throw new CoapFormatException(new CoapFormatError(CoapFormatErrorReason.InvalidTokenLength, 0));
        }

        // Len/TKL, code, token: what precedes the options.
        long bodyLength = message.Length - 2L - tokenLength;
        if (bodyLength < 0)
        {
            throw new CoapFormatException(new CoapFormatError(message.Length < 2 ? CoapFormatErrorReason.MessageTooShort : CoapFormatErrorReason.TruncatedToken, message.Length));
        }

        Span<byte> frame = writer.GetSpan(MaxFrameHeader + message.Length - 1);
        int header = CoapMessageSerializer.WriteStreamFrameHeader(frame, tokenLength, bodyLength);
        message[1..].CopyTo(frame[header..]);
        writer.Advance(header + message.Length - 1);
    }

    /// <summary>Takes the stream frames the connection layer writes and sends each as one WebSocket message.</summary>
    private async Task SendLoopAsync()
    {
        PipeReader reader = _output.Reader;
        Exception? error = null;
        try
        {
            while (true)
            {
                ReadResult result = await reader.ReadAsync().ConfigureAwait(false);
                if (result.IsCanceled)
                {
                    return;
                }

                ReadOnlySequence<byte> buffer = result.Buffer;
                try
                {
                    while (TakeFrame(ref buffer, out byte[]? message, out int length))
                    {
                        try
                        {
                            // Completes when the WebSocket took it; when the peer stops reading this pump stops reading the
                            // pipe, and the connection layer's flushes wait in turn.
                            await _socket.SendAsync(message.AsMemory(0, length), WebSocketMessageType.Binary, endOfMessage: true, CancellationToken.None).ConfigureAwait(false);
                        }
                        finally
                        {
                            ArrayPool<byte>.Shared.Return(message);
                        }
                    }
                }
                finally
                {
                    reader.AdvanceTo(buffer.Start, buffer.End);
                }

                if (result.IsCompleted)
                {
                    // The connection layer is done: the closing handshake (RFC 6455 section 7); the receive pump sees the
                    // peer's answer and ends.
                    if (_socket.State is WebSocketState.Open or WebSocketState.CloseReceived)
                    {
                        await _socket.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, null, CancellationToken.None).ConfigureAwait(false);
                    }

                    return;
                }
            }
        }
        catch (Exception exception) when (exception is not OutOfMemoryException)
        {
            error = Volatile.Read(ref _aborted) != 0 ? _abortReason : new IOException($"The WebSocket failed: {exception.Message}", exception);
        }
        finally
        {
            // The connection layer's next flush reports the connection as gone.
            await reader.CompleteAsync(error).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Takes the first whole stream frame off <paramref name="buffer"/> as a WebSocket message (Len 0, no extended length,
    /// RFC 8323 section 4.2) in a pooled array the caller returns.
    /// </summary>
    /// <returns>False when <paramref name="buffer"/> holds no whole frame.</returns>
    private static bool TakeFrame(ref ReadOnlySequence<byte> buffer, [System.Diagnostics.CodeAnalysis.NotNullWhen(true)] out byte[]? message, out int length)
    {
        message = null;
        length = 0;
        Span<byte> head = stackalloc byte[MaxFrameHeader];
        ReadOnlySequence<byte> headBytes = buffer.Length > head.Length ? buffer.Slice(0, head.Length) : buffer;
        headBytes.CopyTo(head);
        OperationStatus status = CoapMessageSerializer.ReadStreamFrameHeader(head[..(int)headBytes.Length], out int headerLength, out long frameLength);
        if (status == OperationStatus.InvalidData)
        {
            // The connection layer writes frames with the TCP codec, which never makes this.
            throw new InvalidOperationException("The connection layer wrote a frame with a reserved token length.");
        }

        if (status != OperationStatus.Done || buffer.Length < frameLength)
        {
            return false;
        }

        length = (int)(frameLength - headerLength + 1);
        message = ArrayPool<byte>.Shared.Rent(length);
        message[0] = (byte)(head[0] & 0x0F);
        buffer.Slice(headerLength, frameLength - headerLength).CopyTo(message.AsSpan(1));
        buffer = buffer.Slice(frameLength);
        return true;
    }

    private static byte[] Grow(byte[] buffer, long size)
    {
        byte[] grown = ArrayPool<byte>.Shared.Rent((int)size);
        buffer.AsSpan().CopyTo(grown);
        ArrayPool<byte>.Shared.Return(buffer);
        return grown;
    }
}
