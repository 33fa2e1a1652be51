using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using CoapNet.Channels;
using CoapNet.Transports;

namespace CoapNet.Tls;

/// <summary>
/// One TLS session over a connection of the transport below (TCP): the protocol layers read and write plaintext in
/// this connection's pipes, and two pumps move it through an <see cref="SslStream"/> that reads and writes TLS records
/// in the connection below. Both pipes pause their writer at the transport's bounds, as the TCP connection's do.
/// </summary>
/// <remarks>
/// It exists only after a completed handshake, so nothing a peer sends before it reaches CoAP, and nothing CoAP
/// writes leaves unencrypted. The session is its <see cref="SecurityContext"/>, with the peer's certificate as the
/// identity when the peer presented one.
/// </remarks>
internal sealed class TlsConnection : TransportConnection, IDuplexPipe
{
    // The largest plaintext of one TLS record (RFC 8446 section 5.1): what the send pump hands SslStream at most at once.
    private const int MaxRecordPlaintext = 16 * 1024;

    // As the TCP connection's receive: enough for a typical CoAP message, filled further before a new segment is taken.
    private const int MinReceiveBuffer = 2048;

    private readonly TransportConnection _inner;
    private readonly SslStream _ssl;
    private readonly Pipe _input;
    private readonly Pipe _output;
    private readonly TimeSpan _closeTimeout;
    private readonly Task _receiving;
    private readonly Task _sending;
    private Exception? _abortReason;
    private int _aborted;
    private int _disposed;

    private TlsConnection(TransportConnection inner, SslStream ssl, TcpTransportOptions buffering)
    {
        _inner = inner;
        _ssl = ssl;
        _closeTimeout = buffering.CloseTimeout;
        long input = buffering.MaxInputBufferSize;
        long output = buffering.MaxOutputBufferSize;
        _input = new Pipe(new PipeOptions(pauseWriterThreshold: input, resumeWriterThreshold: input / 2, useSynchronizationContext: false));
        _output = new Pipe(new PipeOptions(pauseWriterThreshold: output, resumeWriterThreshold: output / 2, useSynchronizationContext: false));
        SecurityContext = CreateContext(ssl);
        _receiving = Task.Run(ReceiveLoopAsync);
        _sending = Task.Run(SendLoopAsync);
    }

    /// <inheritdoc/>
    public override IDuplexPipe Transport => this;

    /// <inheritdoc/>
    public override IPEndPoint RemoteEndPoint => _inner.RemoteEndPoint;

    /// <inheritdoc/>
    public override IPEndPoint LocalEndPoint => _inner.LocalEndPoint;

    /// <inheritdoc/>
    public override CancellationToken ConnectionClosed => _inner.ConnectionClosed;

    /// <summary>The TLS session, with the peer's certificate as its identity; null when the peer presented none (a client the server did not ask).</summary>
    public override CoapSecurityContext? SecurityContext { get; }

    /// <summary>The application protocol the handshake agreed on (ALPN), empty when the peer offered none.</summary>
    public SslApplicationProtocol ApplicationProtocol => _ssl.NegotiatedApplicationProtocol;

    PipeReader IDuplexPipe.Input => _input.Reader;

    PipeWriter IDuplexPipe.Output => _output.Writer;

    /// <summary>Runs the server side of the handshake over <paramref name="inner"/>; on failure the caller still owns <paramref name="inner"/>.</summary>
    public static async Task<TlsConnection> AcceptAsync(TransportConnection inner, SslServerAuthenticationOptions authentication, TcpTransportOptions buffering, CancellationToken cancellationToken)
    {
        SslStream ssl = new(new DuplexPipeStream(inner.Transport), leaveInnerStreamOpen: true);
        try
        {
            await ssl.AuthenticateAsServerAsync(authentication, cancellationToken).ConfigureAwait(false);
            return new TlsConnection(inner, ssl, buffering);
        }
        catch
        {
            await ssl.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    /// <summary>Runs the client side of the handshake over <paramref name="inner"/>; on failure the caller still owns <paramref name="inner"/>.</summary>
    public static async Task<TlsConnection> ConnectAsync(TransportConnection inner, SslClientAuthenticationOptions authentication, TcpTransportOptions buffering, CancellationToken cancellationToken)
    {
        SslStream ssl = new(new DuplexPipeStream(inner.Transport), leaveInnerStreamOpen: true);
        try
        {
            await ssl.AuthenticateAsClientAsync(authentication, cancellationToken).ConfigureAwait(false);
            return new TlsConnection(inner, ssl, buffering);
        }
        catch
        {
            await ssl.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    /// <inheritdoc/>
    public override void Abort(Exception? reason = null)
    {
        Interlocked.CompareExchange(ref _abortReason, reason ?? new IOException("The connection was aborted."), null);
        if (Interlocked.Exchange(ref _aborted, 1) != 0)
        {
            return;
        }

        // The connection below goes at once, which fails the pumps' pending reads and writes of records.
        _inner.Abort(_abortReason);
        _input.Writer.CancelPendingFlush();
        _output.Reader.CancelPendingRead();
    }

    /// <inheritdoc/>
    public override async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        // What the protocol layer wrote goes out first, then close_notify (RFC 8446 section 6.1), within the transport's
        // close timeout; a peer that takes nothing for that long is cut off.
        _output.Writer.Complete();
        try
        {
            await _sending.WaitAsync(_closeTimeout).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            Abort(new IOException($"The peer did not take the last {_closeTimeout.TotalSeconds:0.###} s of output."));
        }

        // The send pump has ended (at once after an abort). The receive pump stops reading the connection below before
        // that is closed (the peer's own close is not waited for, and a pipe's reader is not completed under a pending
        // read); then closing it flushes the last records and ends the stream.
        await _sending.ConfigureAwait(false);
        Interlocked.CompareExchange(ref _abortReason, new IOException("The connection was closed."), null);
        _inner.Transport.Input.CancelPendingRead();
        await _receiving.ConfigureAwait(false);
        await _inner.DisposeAsync().ConfigureAwait(false);
        _input.Reader.Complete();
        await _ssl.DisposeAsync().ConfigureAwait(false);
    }

    private static CoapSecurityContext? CreateContext(SslStream ssl)
    {
        if (ssl.RemoteCertificate is not X509Certificate certificate)
        {
            return null;
        }

        // A copy of its own: the identity outlives the session, which disposes the certificate it holds.
        return new CoapSecurityContext(ProtocolName(ssl.SslProtocol), CoapPeerIdentity.FromCertificate(TlsCertificates.Copy(certificate)));
    }

    private static string ProtocolName(SslProtocols protocol) => protocol switch
    {
        SslProtocols.Tls13 => "TLS 1.3",
        SslProtocols.Tls12 => "TLS 1.2",
        _ => "TLS",
    };

    private async Task ReceiveLoopAsync()
    {
        PipeWriter writer = _input.Writer;
        Exception? error = null;
        try
        {
            while (true)
            {
                // A zero-byte read first: an idle session holds no buffer, here or in SslStream (as Kestrel's TLS does).
                await _ssl.ReadAsync(Memory<byte>.Empty).ConfigureAwait(false);
                Memory<byte> memory = writer.GetMemory(MinReceiveBuffer);
                int received = await _ssl.ReadAsync(memory).ConfigureAwait(false);
                if (received == 0)
                {
                    break; // close_notify, or the end of the stream below.
                }

                writer.Advance(received);

                // Waits while the protocol layer holds MaxInputBufferSize unconsumed bytes: no more records are
                // decrypted, the pipe below fills, the socket is not read, and TCP flow control slows the peer.
                FlushResult flushed = await writer.FlushAsync().ConfigureAwait(false);
                if (flushed.IsCompleted || flushed.IsCanceled)
                {
                    break;
                }
            }
        }
        catch (Exception exception) when (exception is not OutOfMemoryException)
        {
            // A forged or damaged record fails its authentication and ends this session only (RFC 8446 section 5.2). While
            // closing, the read was canceled on purpose and the connection below still has our last records to flush.
            error = Volatile.Read(ref _abortReason) ?? new IOException($"TLS: {exception.Message}", exception);
            if (Volatile.Read(ref _disposed) == 0)
            {
                _inner.Abort(error);
            }
        }
        finally
        {
            if (error is null && Volatile.Read(ref _aborted) != 0)
            {
                error = _abortReason;
            }

            await writer.CompleteAsync(error).ConfigureAwait(false);
        }
    }

    private async Task SendLoopAsync()
    {
        PipeReader reader = _output.Reader;
        Exception? error = null;
        byte[]? gather = null;
        try
        {
            while (true)
            {
                ReadResult result = await reader.ReadAsync().ConfigureAwait(false);
                if (result.IsCanceled)
                {
                    break;
                }

                ReadOnlySequence<byte> buffer = result.Buffer;
                try
                {
                    if (buffer.IsSingleSegment)
                    {
                        await _ssl.WriteAsync(buffer.First).ConfigureAwait(false);
                    }
                    else
                    {
                        // Frames written one after the other sit in several pipe segments: gathered into records of up
                        // to 16 KiB, they go out as few records and socket writes instead of one per segment.
                        gather ??= ArrayPool<byte>.Shared.Rent(MaxRecordPlaintext);
                        while (!buffer.IsEmpty)
                        {
                            int count = (int)Math.Min(buffer.Length, MaxRecordPlaintext);
                            buffer.Slice(0, count).CopyTo(gather);
                            await _ssl.WriteAsync(gather.AsMemory(0, count)).ConfigureAwait(false);
                            buffer = buffer.Slice(count);
                        }
                    }
                }
                finally
                {
                    reader.AdvanceTo(result.Buffer.End);
                }

                if (result.IsCompleted)
                {
                    // RFC 8446 section 6.1: close_notify before the end of the stream, so the peer can tell a clean
                    // close from a truncation; DisposeAsync then has the transport below flush it and end its side.
                    await _ssl.ShutdownAsync().ConfigureAwait(false);
                    break;
                }
            }
        }
        catch (Exception exception) when (exception is not OutOfMemoryException)
        {
            error = Volatile.Read(ref _abortReason) ?? new IOException($"TLS: {exception.Message}", exception);
            _inner.Abort(error);
        }
        finally
        {
            if (gather is not null)
            {
                ArrayPool<byte>.Shared.Return(gather);
            }

            // Completing the reader with the error makes the protocol layer's next flush report the connection as gone.
            await reader.CompleteAsync(error).ConfigureAwait(false);
        }
    }
}
