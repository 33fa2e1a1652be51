using System.Net;
using CoapNet.Channels;
using CoapNet.Diagnostics;
using CoapNet.Messages;
using CoapNet.Serialization;
using CoapNet.Transports;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace CoapNet.Messaging.Connections;

/// <summary>
/// The layer under the exchange layer for connection transports (RFC 8323): the connections of one
/// endpoint and their signaling (CSM, Ping/Pong, Release, Abort, section 5). There are no Message IDs,
/// ACKs or retransmissions; the stream is reliable and ordered, and responses are matched by token above.
/// </summary>
/// <remarks>
/// A server is fed by a listener's accept loop; a client opens one connection per peer on demand,
/// reuses it, and opens a new one after it closed. Every limit is per connection or per endpoint, and
/// every failure ends only the connection it happened on.
/// </remarks>
internal sealed partial class StreamConnectionLayer : IMessageLayer
{
    private readonly IConnectionListener? _listener;
    private readonly IConnectionFactory? _factory;
    private readonly object _gate = new();
    private readonly Dictionary<CoapPeer, StreamConnection> _byPeer = [];
    private readonly HashSet<StreamConnection> _all = [];

    // A server's accepted connections, within MaxConnections and MaxConnectionsPerAddress (a client's are bounded by _all).
    private readonly AdmissionTable<StreamConnection>? _admitted;
    private readonly CancellationTokenSource _stopping = new();
    private readonly LogRateLimiter _abortLog;
    private IExchangeLayer? _upper;

    // The read loops' watchdog (StreamConnection.CheckStall): made on the first frame, ticking only while frames are handled.
    private ITimer? _watchdog;
    private int _watching;
    private Task _acceptLoop = Task.CompletedTask;
    private int _disposed;

    /// <summary>A server-side layer: connections come from <paramref name="listener"/>, which the layer owns.</summary>
    public StreamConnectionLayer(IConnectionListener listener, CoapConnectionOptions? options, CoapEndpointOptions? endpoint)
        : this(options, endpoint)
    {
        ArgumentNullException.ThrowIfNull(listener);
        _listener = listener;
        Scheme = listener.Scheme;
        _admitted = new AdmissionTable<StreamConnection>(Options.MaxConnections, Options.MaxConnectionsPerAddress);
    }

    /// <summary>A client-side layer: connections are opened through <paramref name="factory"/> when a request needs one.</summary>
    public StreamConnectionLayer(IConnectionFactory factory, CoapConnectionOptions? options, CoapEndpointOptions? endpoint)
        : this(options, endpoint)
    {
        ArgumentNullException.ThrowIfNull(factory);
        _factory = factory;
        Scheme = factory.Scheme;
    }

    // From the endpoint's options: clock, logging, the option count limit and the rate of abort warnings.
    private StreamConnectionLayer(CoapConnectionOptions? options, CoapEndpointOptions? endpoint)
    {
        endpoint ??= new CoapEndpointOptions();
        Options = options ?? new CoapConnectionOptions();
        Options.Validate();
        Time = endpoint.TimeProvider ?? TimeProvider.System;
        Logger = (endpoint.LoggerFactory ?? NullLoggerFactory.Instance).CreateLogger("CoapNet.Messaging.StreamConnectionLayer");
        _abortLog = new LogRateLimiter(Time, Math.Max(1, endpoint.MalformedLogLinesPerSecond));
        ReadSerializer = new CoapMessageSerializer(
            CoapFraming.Stream,
            new CoapSerializerOptions { MaxMessageSize = Options.MaxMessageSize, MaxOptionCount = endpoint.MaxOptionCount });
        Scheme = CoapPeer.TcpScheme;
    }

    /// <inheritdoc/>
    public string Scheme { get; }

    /// <summary>The listener's endpoint on a server; [::]:0 on a client, whose connections each have their own.</summary>
    public IPEndPoint LocalEndPoint => _listener?.LocalEndPoint ?? new IPEndPoint(IPAddress.IPv6Any, 0);

    /// <summary>The limits.</summary>
    internal CoapConnectionOptions Options { get; }

    /// <summary>The clock of every timer.</summary>
    internal TimeProvider Time { get; }

    /// <summary>Where log lines go.</summary>
    internal ILogger Logger { get; }

    /// <summary>The serializer that reads frames, bounded by our Max-Message-Size.</summary>
    internal CoapMessageSerializer ReadSerializer { get; }

    /// <summary>
    /// Logs a connection refused past MaxConnections, within the same budget as aborts: a flood of
    /// connection attempts costs a bounded number of lines.
    /// </summary>
    private void LogRefused(CoapPeer peer, AdmissionRefusal refusal)
    {
        if (!MayWarn())
        {
            return;
        }

        if (refusal == AdmissionRefusal.SourceBound)
        {
            Log.RefusedForAddress(Logger, peer, AddressGroup.Of(peer.EndPoint.Address).ToString(), Options.MaxConnectionsPerAddress);
        }
        else
        {
            Log.Refused(Logger, peer, Options.MaxConnections);
        }
    }

    /// <summary>True when a connection warning may be written now; first writes how many were left out since the last one.</summary>
    private bool MayWarn()
    {
        if (!Logger.IsEnabled(LogLevel.Warning) || !_abortLog.TryAcquire(out long suppressed))
        {
            return false;
        }

        if (suppressed > 0)
        {
            Log.AbortsSuppressed(Logger, suppressed);
        }

        return true;
    }

    /// <summary>
    /// Logs that a connection was aborted, by us or by the peer, at most <see cref="CoapEndpointOptions.MalformedLogLinesPerSecond"/>
    /// lines a second for the endpoint: a flood of connections that each send one bad frame costs a bounded number
    /// of lines, and the next line written says how many were left out.
    /// </summary>
    internal void LogAborted(CoapPeer peer, string reason, bool byPeer)
    {
        if (!MayWarn())
        {
            return;
        }

        if (byPeer)
        {
            Log.PeerAborted(Logger, peer, reason);
        }
        else
        {
            Log.Aborted(Logger, peer, reason);
        }
    }

    /// <summary>The exchange layer above; set by <see cref="Start"/>.</summary>
    /// <exception cref="InvalidOperationException">The layer is not started.</exception>
    public IExchangeLayer Upper => _upper ?? throw new InvalidOperationException("The layer is not started.");

    /// <summary>The number of connections open or being opened, for tests and diagnostics.</summary>
    internal int ConnectionCount
    {
        get
        {
            lock (_gate)
            {
                return _all.Count;
            }
        }
    }

    /// <inheritdoc/>
    public void Start(IExchangeLayer upper)
    {
        ArgumentNullException.ThrowIfNull(upper);
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        if (Interlocked.CompareExchange(ref _upper, upper, null) is not null)
        {
            throw new InvalidOperationException("The layer is already started.");
        }

        if (_listener is not null)
        {
            _acceptLoop = Task.Run(AcceptLoopAsync);
        }
    }

    /// <inheritdoc/>
    public void CheckSendable(CoapPeer peer, CoapMessage message, int tokenLength)
    {
        ArgumentNullException.ThrowIfNull(peer);
        int size = CoapStreamChannel.MeasureForSend(message, tokenLength);

        // Before the peer's CSM its limit is not known yet; the request is held and checked when it arrives.
        StreamConnection? connection;
        lock (_gate)
        {
            _byPeer.TryGetValue(peer, out connection);
        }

        connection?.CheckSize(size, message);
    }

    /// <inheritdoc/>
    public bool IsReliable => true;

    /// <inheritdoc/>
    public int BertBlockSize(CoapPeer peer)
    {
        ArgumentNullException.ThrowIfNull(peer);
        StreamConnection? connection;
        lock (_gate)
        {
            _byPeer.TryGetValue(peer, out connection);
        }

        return connection?.BertBlockSize ?? 0;
    }

    /// <inheritdoc/>
    public bool LimitsKnown(CoapPeer peer, Action<Exception?> known)
    {
        ArgumentNullException.ThrowIfNull(peer);
        ArgumentNullException.ThrowIfNull(known);

        // Without a connection to wait on (the endpoint is disposed or full, the scheme is wrong), the request goes on
        // and sending it reports why.
        StreamConnection? connection = GetOrOpen(peer, out _);
        return connection is null || connection.LimitsKnown(known);
    }

    /// <inheritdoc/>
    public bool Fits(CoapPeer peer, CoapMessage message, int tokenLength)
    {
        ArgumentNullException.ThrowIfNull(peer);
        StreamConnection? connection;
        lock (_gate)
        {
            _byPeer.TryGetValue(peer, out connection);
        }

        // Before the peer's CSM (or any connection) its limit is the base value (RFC 8323 section 5.3.1).
        return CoapStreamChannel.MeasureForSend(message, tokenLength) <= (connection?.PeerMaxMessageSize ?? CoapConnectionOptions.BaseMaxMessageSize);
    }

    /// <inheritdoc/>
    public void SendRequest(OutgoingRequest request)
    {
        ArgumentNullException.ThrowIfNull(request);
        int size;
        try
        {
            size = CoapStreamChannel.MeasureForSend(request.Request);
        }
        catch (ArgumentException exception)
        {
            request.OnFailed(exception);
            return;
        }

        // A connection that is releasing or closing refuses; it has left the table by then, so the second try gets a new one.
        for (int attempt = 0; attempt < 2; attempt++)
        {
            StreamConnection? connection = GetOrOpen(request.Peer, out Exception? failure);
            if (connection is null)
            {
                request.OnFailed(failure!);
                return;
            }

            if (connection.TrySend(request, size))
            {
                return;
            }
        }

        request.OnFailed(new CoapConnectionException($"The connection to {request.Peer} is closing.", request.Peer.EndPoint));
    }

    /// <inheritdoc/>
    public void EndRequest(OutgoingRequest request)
    {
        ArgumentNullException.ThrowIfNull(request);
        (request.LowerState as StreamConnection)?.EndRequest(request);
    }

    /// <inheritdoc/>
    public void Acknowledge(CoapExchange exchange)
    {
        // RFC 8323 section 3.2: a reliable transport has no ACKs; the response simply comes when ready.
    }

    /// <inheritdoc/>
    public void EndWithoutResponse(CoapExchange exchange)
    {
        ArgumentNullException.ThrowIfNull(exchange);
        ((StreamConnection)exchange.LowerState).EndWithoutResponse();
    }

    /// <inheritdoc/>
    public void Reject(CoapExchange exchange)
    {
        ArgumentNullException.ThrowIfNull(exchange);

        // A stream has no RST (RFC 8323 section 3.3): nothing here can process the request, so 5.01 says so.
        SendResponse(exchange, new CoapMessage { Code = CoapCode.NotImplemented, Token = exchange.Request.Token });
    }

    /// <inheritdoc/>
    public void SendResponse(CoapExchange exchange, CoapMessage response)
    {
        ArgumentNullException.ThrowIfNull(exchange);
        ArgumentNullException.ThrowIfNull(response);
        StreamConnection connection = (StreamConnection)exchange.LowerState;
        // A handler's message, perhaps shared: it goes out with its request's token, written into the frame, not set on it.
        ReadOnlyMemory<byte> token = exchange.Request.Token;
        connection.SendResponse(response, token, CoapStreamChannel.MeasureForSend(response, token.Length));
    }

    /// <inheritdoc/>
    public void SendNotification(CoapExchange registration, CoapMessage notification, ICoapDeliveryListener owner)
    {
        ArgumentNullException.ThrowIfNull(registration);
        ArgumentNullException.ThrowIfNull(owner);
        StreamConnection connection = (StreamConnection)registration.LowerState;

        // RFC 8323 section 7.1: no CON/NON on a stream; the connection itself tells whether the observer is there.
        ReadOnlyMemory<byte> token = registration.Request.Token;
        if (connection.TrySendNotification(notification, token, CoapStreamChannel.MeasureForSend(notification, token.Length)))
        {
            owner.OnDelivered();
        }
        else
        {
            owner.OnFailed(new CoapConnectionException($"The connection to {connection.Peer} is closed.", connection.Peer.EndPoint));
        }
    }

    /// <inheritdoc/>
    public Task<TimeSpan> PingAsync(CoapPeer peer, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(peer);
        StreamConnection? connection = GetOrOpen(peer, out Exception? failure);
        return connection is null ? Task.FromException<TimeSpan>(failure!) : connection.PingAsync(cancellationToken);
    }

    /// <summary>
    /// Stops accepting and starts the Release of every connection (RFC 8323 section 5.5) without waiting
    /// for it: a synchronous caller is not blocked on peers; <see cref="DisposeAsync"/> waits for them.
    /// </summary>
    public void Dispose() => _ = BeginDispose();

    /// <summary>Stops accepting, sends Release on every connection (RFC 8323 section 5.5) and closes them.</summary>
    /// <returns>A task that completes when every connection is closed.</returns>
    public async ValueTask DisposeAsync() => await BeginDispose().ConfigureAwait(false);

    private Task BeginDispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return Task.CompletedTask;
        }

        _stopping.Cancel();
        ValueTask listenerClosed = _listener?.DisposeAsync() ?? ValueTask.CompletedTask;
        StreamConnection[] connections;
        lock (_gate)
        {
            connections = [.. _all];
            _watchdog?.Dispose();
        }

        Exception reason = new CoapConnectionException("The endpoint was disposed.");
        Task[] closing = new Task[connections.Length + 2];
        for (int i = 0; i < connections.Length; i++)
        {
            closing[i] = connections[i].ReleaseAsync(reason);
        }

        closing[^2] = listenerClosed.AsTask();
        closing[^1] = _acceptLoop;
        return Task.WhenAll(closing);
    }

    /// <summary>
    /// A read loop is about to handle a frame: starts the watchdog if it is not ticking. One read of a flag when it is,
    /// as it is while frames keep coming.
    /// </summary>
    internal void ArmWatchdog()
    {
        if (Volatile.Read(ref _watching) != 0 || Interlocked.CompareExchange(ref _watching, 1, 0) != 0)
        {
            return;
        }

        lock (_gate)
        {
            if (Volatile.Read(ref _disposed) != 0)
            {
                return;
            }

            _watchdog ??= Time.CreateTimer(static s => ((StreamConnectionLayer)s!).OnWatchdogTick(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
            _watchdog.Change(ReceiveContext.StallCheckInterval, ReceiveContext.StallCheckInterval);
        }
    }

    /// <summary>
    /// The watchdog's tick: each connection whose read loop has been inside the handling of one frame since the last
    /// tick gets a new read loop (RFC 8323 puts no order on the answers to pipelined requests, section 3.3, so the frames
    /// after it need not wait); when no frame is being handled anywhere the watchdog stops until the next one arms it.
    /// </summary>
    private void OnWatchdogTick()
    {
        bool busy = false;
        lock (_gate)
        {
            foreach (StreamConnection connection in _all)
            {
                busy |= connection.CheckStall();
            }

            if (busy || Volatile.Read(ref _disposed) != 0)
            {
                return;
            }

            // Stopped before the flag is cleared, and the flag cleared (a full fence) before the calls are looked at, as a
            // read loop marks its call before it reads the flag: a call that began meanwhile either armed again or is seen here.
            _watchdog!.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
            Interlocked.Exchange(ref _watching, 0);
            foreach (StreamConnection connection in _all)
            {
                busy |= connection.InCall;
            }
        }

        if (busy)
        {
            ArmWatchdog();
        }
    }

    /// <summary>Forgets a connection that is closing, and frees its place for new requests to its peer.</summary>
    internal void Remove(StreamConnection connection, bool keepCounted)
    {
        lock (_gate)
        {
            if (_byPeer.TryGetValue(connection.Peer, out StreamConnection? current) && current == connection)
            {
                _byPeer.Remove(connection.Peer);
            }

            if (!keepCounted)
            {
                _all.Remove(connection);
                _admitted?.Remove(connection);
            }
        }
    }

    private StreamConnection? GetOrOpen(CoapPeer peer, out Exception? failure)
    {
        failure = null;
        if (!string.Equals(peer.Scheme, Scheme, StringComparison.Ordinal))
        {
            failure = new ArgumentException($"This endpoint speaks {Scheme}, not {peer.Scheme}.", nameof(peer));
            return null;
        }

        StreamConnection? connection;
        lock (_gate)
        {
            if (Volatile.Read(ref _disposed) != 0)
            {
                failure = new ObjectDisposedException(nameof(CoapEndpoint));
                return null;
            }

            if (_byPeer.TryGetValue(peer, out connection))
            {
                return connection;
            }

            if (_factory is null)
            {
                // A server answers over the connections its clients opened; it does not dial out (RFC 8323 section 3.3).
                failure = new CoapConnectionException($"There is no connection from {peer}.", peer.EndPoint);
                return null;
            }

            if (_all.Count >= Options.MaxConnections)
            {
                failure = new CoapConnectionException($"The endpoint already holds {Options.MaxConnections} connections (CoapConnectionOptions.MaxConnections).", peer.EndPoint);
                return null;
            }

            connection = new StreamConnection(this, peer);
            _byPeer.Add(peer, connection);
            _all.Add(connection);
        }

        Log.Connecting(Logger, peer);
        _ = connection.ConnectAsync(_factory, _stopping.Token);
        return connection;
    }

    /// <summary>
    /// Releases the idlest connection (RFC 8323 section 5.5: Release, then close, where its CSM made it established) so
    /// that <paramref name="newcomer"/> is admitted: under pressure the connections that carry nothing go first, and a
    /// peer holding connections open and quiet cannot shut new ones out.
    /// </summary>
    private void Evict(StreamConnection idlest, CoapPeer newcomer)
    {
        TimeSpan idle = idlest.IdleFor;
        CoapInstrumentation.RecordEvicted(Scheme);
        bool sameAddress = AddressGroup.Of(idlest.Peer.EndPoint.Address) == AddressGroup.Of(newcomer.EndPoint.Address);
        if (MayWarn())
        {
            Log.Evicted(Logger, idlest.Peer, idle.TotalSeconds, newcomer, sameAddress ? "MaxConnectionsPerAddress or MaxConnections" : "MaxConnections");
        }

        idlest.Evict($"it was idle for {idle.TotalSeconds:0.#} s when the endpoint needed its place for a new connection (CoapConnectionOptions.MaxConnections, MaxConnectionsPerAddress)");
    }

    private async Task AcceptLoopAsync()
    {
        while (true)
        {
            TransportConnection? accepted;
            try
            {
                accepted = await _listener!.AcceptAsync(_stopping.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                return;
            }
            catch (Exception exception) when (exception is not OutOfMemoryException)
            {
                // The listener failed (not one connection): nothing more will come.
                Log.AcceptFailed(Logger, exception);
                return;
            }

            if (accepted is null)
            {
                return;
            }

            // The listener's scheme, not always "coap+tcp": a TLS listener's peers are "coaps+tcp" (RFC 8323 section 8.2),
            // each in the session its handshake established, which handlers read as Peer.Identity.
            CoapPeer peer = new(Scheme, accepted.RemoteEndPoint, accepted.SecurityContext);
            StreamConnection connection = new(this, peer);
            StreamConnection? evicted = null;
            AdmissionRefusal refusal = AdmissionRefusal.Full;
            lock (_gate)
            {
                if (Volatile.Read(ref _disposed) == 0)
                {
                    refusal = _admitted!.TryAdmit(connection, Time.GetTimestamp(), out evicted);
                    if (refusal == AdmissionRefusal.None)
                    {
                        _byPeer[peer] = connection;
                        _all.Add(connection);
                    }
                }
            }

            if (refusal != AdmissionRefusal.None)
            {
                // Past a bound with every connection busy: closed at once, before any CoAP is spoken, so it costs the
                // others nothing.
                LogRefused(peer, refusal);
                accepted.Abort(new CoapConnectionException("Too many connections.", peer.EndPoint));
                await accepted.DisposeAsync().ConfigureAwait(false);
                continue;
            }

            if (evicted is not null)
            {
                Evict(evicted, peer);
            }

            Log.Accepted(Logger, peer);
            connection.Run(accepted);
        }
    }
}
