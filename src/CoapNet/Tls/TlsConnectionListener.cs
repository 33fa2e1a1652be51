using System.Net;
using System.Net.Security;
using System.Threading.Channels;
using CoapNet.Channels;
using CoapNet.Diagnostics;
using CoapNet.Messaging;
using CoapNet.Transports;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace CoapNet.Tls;

/// <summary>
/// Serves CoAP over TLS (scheme "coaps+tcp", RFC 8323 section 9.1): accepts connections from the listener below (TCP),
/// runs each one's TLS handshake (ALPN "coap", the server's certificate, the client's when asked for) and hands up
/// only connections whose handshake completed, each a <see cref="TransportConnection"/> carrying its session as
/// <see cref="TransportConnection.SecurityContext"/>. Knows nothing of CoAP.
/// </summary>
/// <remarks>
/// Handshakes run concurrently, each bounded by <see cref="TlsOptions.HandshakeTimeout"/> from the accept, and never hold
/// up the accepting of other connections. A connection waits apart until its peer speaks (a TLS client speaks first), so
/// connections held open and silent never take a handshake place from one that speaks; then at most
/// <see cref="TlsServerOptions.MaxPendingHandshakes"/> are in progress or waiting to be taken, at most
/// <see cref="TlsServerOptions.MaxPendingHandshakesPerAddress"/> of one address, given in the order their peers spoke, a
/// stalled one (silent for a second) giving its place up (<see cref="HandshakeAdmission"/>). A failed handshake (a plain
/// CoAP client, a malformed record, an untrusted certificate, silence) closes only its connection, with the reason in
/// the log (rate-limited) and the <c>coap.tls.connections.refused</c> metric; nothing is ever sent to such a peer but
/// TLS's own alerts. TLS with a pre-shared key is not available: .NET's TLS has no PSK.
/// </remarks>
public sealed class TlsConnectionListener : IConnectionListener
{
    private readonly IConnectionListener _inner;
    private readonly TcpTransportOptions _buffering;
    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private readonly LogRateLimiter _failureLog;
    private readonly SslServerAuthenticationOptions _authentication;
    private readonly TimeSpan _handshakeTimeout;
    private readonly HandshakeAdmission _admission;
    private readonly Channel<(TlsConnection Connection, PendingHandshake Place)> _ready;
    private readonly CancellationTokenSource _stopping = new();
    private readonly TaskCompletionSource _drained = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly object _gate = new();
    private Task? _acceptLoop;

    // The accept loop's reference and one per handshake in progress: at zero nothing more can come, and AcceptAsync returns null.
    private int _references = 1;
    private int _disposed;

    /// <summary>Serves TLS over the connections <paramref name="inner"/> accepts.</summary>
    /// <param name="inner">The listener below, such as a <see cref="TcpConnectionListener"/>; this listener owns it from now on.</param>
    /// <param name="options">The certificate, client authentication, handshake bounds; the listener keeps what it needs at construction.</param>
    /// <param name="buffering">The buffering bounds and close timeout of each TLS connection (those of the TCP connections below are the inner listener's); null for the defaults.</param>
    /// <param name="loggerFactory">Where failed handshakes are logged; null for nowhere.</param>
    /// <param name="timeProvider">The clock of the handshake timeouts; null for the system's.</param>
    /// <exception cref="ArgumentException">The options have no certificate or one without its private key, or a setting is out of range; the message names it.</exception>
    public TlsConnectionListener(IConnectionListener inner, TlsServerOptions options, TcpTransportOptions? buffering = null, ILoggerFactory? loggerFactory = null, TimeProvider? timeProvider = null)
    {
        ArgumentNullException.ThrowIfNull(inner);
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        _buffering = buffering ?? new TcpTransportOptions();
        _buffering.Validate();
        _inner = inner;
        _time = timeProvider ?? TimeProvider.System;
        _logger = (loggerFactory ?? NullLoggerFactory.Instance).CreateLogger("CoapNet.Tls.TlsConnectionListener");
        _failureLog = new LogRateLimiter(_time, 10);
        _handshakeTimeout = options.HandshakeTimeout;
        _admission = new HandshakeAdmission(options, _time, (evicted, newcomer) =>
        {
            CoapInstrumentation.RecordTlsRefused("evicted");
            LogFailure(evicted.Remote, $"its handshake was ended for {newcomer}: every place was taken, and its peer had been silent for a second");
        });
        _ready = Channel.CreateBounded<(TlsConnection, PendingHandshake)>(new BoundedChannelOptions(options.MaxPendingHandshakes) { SingleReader = false, SingleWriter = false });

        bool asked = options.ClientCertificateMode != TlsClientCertificateMode.None;
        _authentication = new SslServerAuthenticationOptions
        {
            // Made once: building the chain and loading the key per handshake would cost every connection.
            ServerCertificateContext = SslStreamCertificateContext.Create(options.Certificate!, options.CertificateChain, offline: true),
            ApplicationProtocols = TlsCertificates.AlpnList(),
            ClientCertificateRequired = asked,
            EnabledSslProtocols = options.EnabledProtocols,
            CertificateRevocationCheckMode = TlsCertificates.RevocationMode(options),
            CertificateChainPolicy = TlsCertificates.ChainPolicy(options, peerIsServer: false),
            RemoteCertificateValidationCallback = asked
                ? TlsCertificates.Decide(options.CertificateValidator, optional: options.ClientCertificateMode == TlsClientCertificateMode.Allowed)
                : null,
        };
    }

    /// <inheritdoc/>
    public string Scheme => CoapPeer.TlsScheme;

    /// <inheritdoc/>
    public IPEndPoint LocalEndPoint => _inner.LocalEndPoint;

    /// <inheritdoc/>
    /// <remarks>The first call starts accepting from the listener below; the connections it returns have completed their handshake.</remarks>
    public async ValueTask<TransportConnection?> AcceptAsync(CancellationToken cancellationToken = default)
    {
        lock (_gate)
        {
            if (_acceptLoop is null && Volatile.Read(ref _disposed) == 0)
            {
                _acceptLoop = Task.Run(AcceptLoopAsync);
            }
        }

        TlsConnection connection;
        PendingHandshake place;
        try
        {
            (connection, place) = await _ready.Reader.ReadAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (ChannelClosedException)
        {
            return null;
        }

        // Taken up: its place among the pending handshakes is free for the next connection.
        Free(place);
        return connection;
    }

    /// <summary>
    /// Stops listening (a pending <see cref="AcceptAsync"/> returns null), ends the handshakes in progress and closes
    /// connections handshaken and not yet taken. Connections already returned stay open.
    /// </summary>
    /// <returns>A task that completes when the listener below is closed and no handshake is left.</returns>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        await _stopping.CancelAsync().ConfigureAwait(false);
        await _inner.DisposeAsync().ConfigureAwait(false);
        Task? loop;
        lock (_gate)
        {
            loop = _acceptLoop;
            if (loop is null)
            {
                // Never started: no loop will hold, or give up, its reference.
                _acceptLoop = Task.CompletedTask;
                Release();
            }
        }

        if (loop is not null)
        {
            await loop.ConfigureAwait(false);
        }

        // The handshakes in progress end at the cancellation; what completed and was not taken is closed.
        await _drained.Task.ConfigureAwait(false);
        while (_ready.Reader.TryRead(out (TlsConnection Connection, PendingHandshake Place) unclaimed))
        {
            Free(unclaimed.Place);
            await unclaimed.Connection.DisposeAsync().ConfigureAwait(false);
        }

        // Last: freeing a place above may still arm its timer.
        _admission.Dispose();
    }

    private async Task AcceptLoopAsync()
    {
        while (true)
        {
            TransportConnection? accepted;
            try
            {
                accepted = await _inner.AcceptAsync(_stopping.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                break;
            }
            catch (Exception exception) when (exception is not OutOfMemoryException)
            {
                // The listener below failed, not one connection: nothing more will come.
                Messaging.Connections.Log.AcceptFailed(_logger, exception);
                break;
            }

            if (accepted is null)
            {
                break;
            }

            PendingHandshake place = new(accepted.RemoteEndPoint, _time);
            AdmissionRefusal refusal = _admission.TryAdmit(place, out PendingHandshake? evicted);
            if (refusal != AdmissionRefusal.None)
            {
                // Every place to wait is held by a connection that spoke and waits for a handshake: refused before any
                // TLS is spoken, so a flood of connections costs the others nothing.
                place.Dispose();
                bool perAddress = refusal == AdmissionRefusal.SourceBound;
                (int capacity, int perSource) = _admission.WaitingBounds;
                CoapInstrumentation.RecordTlsRefused(perAddress ? "address_bound" : "handshake_bound");
                LogFailure(accepted.RemoteEndPoint, perAddress
                    ? $"its address ({place.Group}) has {perSource} connections waiting for a TLS handshake (8 x TlsServerOptions.MaxPendingHandshakesPerAddress)"
                    : $"{capacity} connections wait for a TLS handshake (8 x TlsServerOptions.MaxPendingHandshakes)");
                accepted.Abort(new IOException("Too many connections waiting for a TLS handshake."));
                await accepted.DisposeAsync().ConfigureAwait(false);
                continue;
            }

            if (evicted is not null)
            {
                // Its wait ends at once (it is told nothing); the newcomer has its place.
                CoapInstrumentation.RecordTlsRefused("evicted");
                LogFailure(evicted.Remote, $"it was closed for a new connection from {accepted.RemoteEndPoint} while every place to wait was taken, having waited longest (without speaking, or for a handshake place)");
            }

            Interlocked.Increment(ref _references);
            // On the pool from its first instruction: whatever SslStream does before its first read is not the accept loop's.
            _ = Task.Run(() => HandshakeAsync(accepted, place));
        }

        // No more connections: the consumer's AcceptAsync returns null once the handshakes in progress have ended.
        Release();
    }

    private async Task HandshakeAsync(TransportConnection accepted, PendingHandshake place)
    {
        TlsConnection? connection = null;
        bool queued = false;
        try
        {
            using CancellationTokenSource timeout = new(_handshakeTimeout, _time);
            using CancellationTokenSource linked = CancellationTokenSource.CreateLinkedTokenSource(timeout.Token, _stopping.Token, place.Evicted);
            try
            {
                // A TLS client speaks first (its ClientHello): until it has, it waits apart, and takes no handshake place.
                if (!await PeerSpokeAsync(accepted, linked.Token).ConfigureAwait(false))
                {
                    throw new IOException("the peer closed the connection without a word");
                }

                place.MarkSpoke();
                await _admission.EnterHandshakeAsync(place, linked.Token).ConfigureAwait(false);
                connection = await TlsConnection.AcceptAsync(accepted, _authentication, _buffering, place.OnReceived, linked.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (timeout.IsCancellationRequested)
            {
                throw new TimeoutException($"no TLS handshake within {_handshakeTimeout.TotalSeconds:0.###} s");
            }

            place.Complete();
            Log.Handshaken(_logger, accepted.RemoteEndPoint, connection.SecurityContext?.ToString() ?? "TLS, no client certificate", connection.ApplicationProtocol.ToString());
            // The channel holds as many as there are places, so only a completed one (disposed meanwhile) refuses it.
            queued = _ready.Writer.TryWrite((connection, place));
            if (!queued)
            {
                await connection.DisposeAsync().ConfigureAwait(false);
            }
        }
        catch (Exception exception) when (exception is not OutOfMemoryException)
        {
            // An evicted handshake was counted and logged when its place was taken.
            if (Volatile.Read(ref _disposed) == 0 && !place.IsEvicted)
            {
                CoapInstrumentation.RecordTlsRefused(exception is TimeoutException ? "handshake_timeout" : "handshake_failed");
                LogFailure(accepted.RemoteEndPoint, Reason(exception));
            }

            // Only this connection ends; TLS has sent its alert, if any, and no CoAP was spoken on it.
            accepted.Abort(new IOException("The TLS handshake failed.", exception));
            await accepted.DisposeAsync().ConfigureAwait(false);
        }
        finally
        {
            // A queued connection keeps its place until AcceptAsync takes it.
            if (!queued)
            {
                Free(place);
            }

            Release();
        }
    }

    /// <summary>Gives up a connection's place, waiting or in a handshake (a no-op when it was evicted).</summary>
    private void Free(PendingHandshake place)
    {
        _admission.Leave(place);
        place.Dispose();
    }

    /// <summary>True once the peer's first bytes are there (left in the pipe for TLS to read); false when it closed first.</summary>
    private static async Task<bool> PeerSpokeAsync(TransportConnection connection, CancellationToken cancellationToken)
    {
        System.IO.Pipelines.PipeReader input = connection.Transport.Input;
        System.IO.Pipelines.ReadResult result = await input.ReadAsync(cancellationToken).ConfigureAwait(false);

        // Consumed and examined nothing: SslStream's first read returns these bytes at once.
        input.AdvanceTo(result.Buffer.Start);
        return !result.Buffer.IsEmpty;
    }

    private void Release()
    {
        if (Interlocked.Decrement(ref _references) == 0)
        {
            _ready.Writer.TryComplete();
            _drained.TrySetResult();
        }
    }

    private static string Reason(Exception exception)
    {
        // The innermost message names the cause (an untrusted certificate, a record that is not TLS, an EOF).
        string reason = exception.Message;
        for (Exception? inner = exception.InnerException; inner is not null; inner = inner.InnerException)
        {
            reason += ": " + inner.Message;
        }

        return reason;
    }

    private void LogFailure(IPEndPoint remote, string reason)
    {
        if (!_logger.IsEnabled(LogLevel.Warning) || !_failureLog.TryAcquire(out long suppressed))
        {
            return;
        }

        if (suppressed > 0)
        {
            Messaging.Connections.Log.AbortsSuppressed(_logger, suppressed);
        }

        Log.HandshakeFailed(_logger, remote, reason);
    }
}
