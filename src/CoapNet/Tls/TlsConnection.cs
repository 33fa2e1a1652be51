using System.Buffers;
using System.Net;
using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using CoapNet.Channels;
using CoapNet.Transports;

namespace CoapNet.Tls;

/// <summary>
/// One TLS session over a connection of the transport below (TCP): the protocol layers read and write plaintext in this
/// connection's bounded pipes, and the pumps (<see cref="PumpedConnection"/>) move it through an <see cref="SslStream"/>
/// that reads and writes TLS records in the connection below.
/// </summary>
/// <remarks>
/// It exists only after a completed handshake, so nothing a peer sends before it reaches CoAP, and nothing CoAP writes
/// leaves unencrypted. The session is its <see cref="SecurityContext"/>, with the peer's certificate as the identity when
/// the peer presented one.
/// </remarks>
internal sealed class TlsConnection : PumpedConnection
{
    // The largest plaintext of one TLS record (RFC 8446 section 5.1): what the send pump hands SslStream at most at once.
    private const int MaxRecordPlaintext = 16 * 1024;

    private readonly TransportConnection _inner;
    private readonly SslStream _ssl;

    private TlsConnection(TransportConnection inner, SslStream ssl, TcpTransportOptions buffering)
        : base(buffering)
    {
        _inner = inner;
        _ssl = ssl;
        SecurityContext = CreateContext(ssl);
        StartPumps();
    }

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

    /// <summary>Runs the server side of the handshake over <paramref name="inner"/>; on failure the caller still owns <paramref name="inner"/>.</summary>
    /// <param name="inner">The connection below.</param>
    /// <param name="authentication">The server's side of TLS.</param>
    /// <param name="buffering">The bounds of the connection's pipes.</param>
    /// <param name="onReceived">Called each time the peer's bytes arrive during the handshake (not after), or null.</param>
    /// <param name="cancellationToken">Ends the handshake.</param>
    public static Task<TlsConnection> AcceptAsync(TransportConnection inner, SslServerAuthenticationOptions authentication, TcpTransportOptions buffering, Action? onReceived, CancellationToken cancellationToken)
        => HandshakeAsync(inner, buffering, onReceived, (ssl, token) => ssl.AuthenticateAsServerAsync(authentication, token), cancellationToken);

    /// <summary>Runs the client side of the handshake over <paramref name="inner"/>; on failure the caller still owns <paramref name="inner"/>.</summary>
    public static Task<TlsConnection> ConnectAsync(TransportConnection inner, SslClientAuthenticationOptions authentication, TcpTransportOptions buffering, CancellationToken cancellationToken)
        => HandshakeAsync(inner, buffering, null, (ssl, token) => ssl.AuthenticateAsClientAsync(authentication, token), cancellationToken);

    /// <inheritdoc/>
    // A zero-byte read first waits for a record without holding a buffer, in SslStream as here (as Kestrel's TLS does).
    protected override ValueTask<int> ReadBelowAsync(Memory<byte> buffer) => _ssl.ReadAsync(buffer);

    /// <inheritdoc/>
    protected override async ValueTask WriteBelowAsync(ReadOnlySequence<byte> buffer)
    {
        if (buffer.IsSingleSegment)
        {
            await _ssl.WriteAsync(buffer.First).ConfigureAwait(false);
            return;
        }

        // Frames written one after the other sit in several pipe segments: gathered into records of up to 16 KiB, they
        // go out as few records and writes below instead of one per segment. The buffer is the pool's only meanwhile,
        // so an idle connection holds none.
        byte[] gather = ArrayPool<byte>.Shared.Rent(MaxRecordPlaintext);
        try
        {
            while (!buffer.IsEmpty)
            {
                int count = (int)Math.Min(buffer.Length, MaxRecordPlaintext);
                buffer.Slice(0, count).CopyTo(gather);
                await _ssl.WriteAsync(gather.AsMemory(0, count)).ConfigureAwait(false);
                buffer = buffer.Slice(count);
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(gather);
        }
    }

    /// <inheritdoc/>
    // RFC 8446 section 6.1: close_notify before the end of the stream, so the peer can tell a clean close from a
    // truncation; CloseAsync then has the connection below flush it and end its side.
    protected override ValueTask FinishSendingAsync() => new(_ssl.ShutdownAsync());

    /// <inheritdoc/>
    protected override void CloseBelow(Exception reason) => _inner.Abort(reason);

    /// <inheritdoc/>
    protected override async Task CloseAsync(Task receiving, Task sending)
    {
        // The send pump has ended (at once after an abort). The receive pump stops reading the connection below before
        // that is closed (the peer's own close is not waited for, and a pipe's reader is not completed under a pending
        // read); then closing it flushes the last records and ends the stream.
        await sending.ConfigureAwait(false);
        _inner.Transport.Input.CancelPendingRead();
        await receiving.ConfigureAwait(false);
        await _inner.DisposeAsync().ConfigureAwait(false);
        await _ssl.DisposeAsync().ConfigureAwait(false);
    }

    /// <inheritdoc/>
    protected override IOException Describe(Exception exception) => new($"TLS: {exception.Message}", exception);

    /// <inheritdoc/>
    // A forged or damaged record fails its authentication and ends this session only (RFC 8446 section 5.2), and with it
    // the connection below. While closing, the read was canceled on purpose and that connection still has our last
    // records to flush.
    protected override void OnPumpFailed(Exception error)
    {
        if (!IsDisposing)
        {
            _inner.Abort(error);
        }
    }

    private static async Task<TlsConnection> HandshakeAsync(TransportConnection inner, TcpTransportOptions buffering, Action? onReceived, Func<SslStream, CancellationToken, Task> authenticate, CancellationToken cancellationToken)
    {
        DuplexPipeStream stream = new(inner.Transport) { OnReceived = onReceived };
        SslStream ssl = new(stream, leaveInnerStreamOpen: true);
        try
        {
            await authenticate(ssl, cancellationToken).ConfigureAwait(false);

            // Only the handshake is watched: established records cost nothing extra.
            stream.OnReceived = null;
            return new TlsConnection(inner, ssl, buffering);
        }
        catch
        {
            await ssl.DisposeAsync().ConfigureAwait(false);
            throw;
        }
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
}
