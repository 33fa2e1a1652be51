using System.Collections.Concurrent;
using System.Net;
using CoapNet.Channels;
using CoapNet.Diagnostics;
using CoapNet.Dtls.Records;
using CoapNet.Messaging;
using CoapNet.Transports;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Org.BouncyCastle.Security;
using Org.BouncyCastle.Tls.Crypto;
using Org.BouncyCastle.Tls.Crypto.Impl.BC;
using BcDtlsTransport = Org.BouncyCastle.Tls.DtlsTransport;

namespace CoapNet.Dtls.Sessions;

/// <summary>
/// What the server and the client transports share: the UDP transport underneath, the sessions by address and by
/// context, the demultiplexing of received datagrams, the bounds and the ageing.
/// </summary>
/// <remarks>
/// Every received datagram arrives on the UDP transport's receive thread. A datagram from an address with an
/// established session is decrypted there and its plaintext handed up with the session's context, on that thread, so
/// the server may answer it there too (<see cref="IDatagramReceiver.SupportsInlineWork"/>: a request then costs no hand-off to
/// another thread, as over plain UDP); one from an address
/// whose handshake runs is queued for its handshake thread; anything else goes to <see cref="OnUnknownDatagram"/>
/// (the server verifies ClientHello cookies there). Sessions are kept in two concurrent maps: by address for
/// receiving, by <see cref="CoapSecurityContext"/> (compared by reference) for sending, so a message goes out in the
/// session it names or not at all (RFC 7252 section 9.1.1).
/// </remarks>
internal abstract partial class DtlsEngine : IDatagramReceiver, IDisposable
{
    private const int PlaintextSize = 16_384;

    /// <summary>RFC 6347 section 4.2.4: a peer may retransmit its last flight for up to 2 MSL (BouncyCastle's 240 s).</summary>
    private static readonly TimeSpan LastFlightLifetime = TimeSpan.FromSeconds(240);

    /// <summary>
    /// How long a session must have received nothing for a sweep to drop its expanded ciphers: past a request, its
    /// retransmissions and its answer (a few seconds), well short of a fleet's report period (a minute). Making them again
    /// costs two AES key expansions, once per wake-up.
    /// </summary>
    private static readonly TimeSpan RestAfter = TimeSpan.FromSeconds(10);

    private readonly ConcurrentDictionary<IPEndPoint, DtlsSession> _byAddress = new();
    private readonly ConcurrentDictionary<CoapSecurityContext, DtlsSession> _byContext = new(ReferenceEqualityComparer.Instance);
    private readonly ConcurrentDictionary<ulong, DtlsSession> _byConnectionId = new();
    // The receiving thread's copy of a datagram and room for its plaintext, one pair per thread: a call that runs the
    // server's work inline may outlast the UDP transport's stall check, and the thread that takes the socket over then
    // decrypts while the first still reads its datagram's further records.
    [ThreadStatic]
    private static byte[]? t_received;

    [ThreadStatic]
    private static byte[]? t_plaintext;

    private readonly ITimer _sweep;
    private readonly int _maxDatagramSize;
    private readonly PlaintextReceived _deliver;
    private readonly Action<DtlsSession> _onClosed;
    private readonly Action<DtlsSession, IPEndPoint> _onMoved;
    private IDatagramReceiver? _upper;
    private readonly LogRateLimiter _handshakeLog;
    private int _sessions;
    private int _handshakes;
    private int _receiving;
    private int _disposed;
    private int _sweeping;
    private long _sweepRequests;
    private BcTlsCrypto? _crypto;

    protected DtlsEngine(IDatagramTransport network, DtlsOptions options)
    {
        Network = network;
        Options = options;
        Time = options.TimeProvider;
        Logger = (options.LoggerFactory ?? NullLoggerFactory.Instance).CreateLogger("CoapNet.Dtls");
        _maxDatagramSize = options.MaxDatagramSize;
        _deliver = Deliver;
        _onClosed = Forget;
        _onMoved = Move;
        _handshakeLog = new LogRateLimiter(Time, HandshakeLogLinesPerSecond);
        TimeSpan period = TimeSpan.FromTicks(Math.Clamp(options.SessionIdleTimeout.Ticks / 4, TimeSpan.TicksPerSecond, TimeSpan.TicksPerMinute));
        _sweep = Time.CreateTimer(static state => ((DtlsEngine)state!).Sweep(), this, period, period);
    }

    public IDatagramTransport Network { get; }

    public DtlsOptions Options { get; }

    public TimeProvider Time { get; }

    public ILogger Logger { get; }

    /// <summary>
    /// BouncyCastle's crypto, made on first use: making it loads and seeds BouncyCastle, about 9 MB of resident memory
    /// that a server with coaps configured but never used should not pay (the sample server's idle figure).
    /// </summary>
    public TlsCrypto Crypto => LazyInitializer.EnsureInitialized(ref _crypto, static () => new BcTlsCrypto(new SecureRandom()));

    /// <summary>The crypto of one handshake: <see cref="Crypto"/>'s, with the session told what its first epoch's records authenticate (<see cref="WatchedCipher"/>).</summary>
    protected HandshakeCrypto CryptoFor(DtlsSession session)
    {
        _ = Crypto;
        return new HandshakeCrypto(_crypto!.SecureRandom, session);
    }

    /// <summary>Established sessions now.</summary>
    public int SessionCount => Volatile.Read(ref _sessions);

    public bool IsDisposed => Volatile.Read(ref _disposed) != 0;

    /// <summary>
    /// As the receiver above says: its work may run on the UDP receive thread when it allows that, since this engine
    /// hands each plaintext up on the thread that received it and may itself be called concurrently (its buffers are
    /// per thread, each session's records ordered under that session's lock). Read by the transport below once the
    /// receiver above is set (<see cref="Start"/>).
    /// </summary>
    public bool SupportsInlineWork => Volatile.Read(ref _upper)?.SupportsInlineWork ?? false;

    public void Start(IDatagramReceiver upper)
    {
        ArgumentNullException.ThrowIfNull(upper);
        ObjectDisposedException.ThrowIf(IsDisposed, this);
        if (Interlocked.CompareExchange(ref _upper, upper, null) is not null)
        {
            throw new InvalidOperationException("The transport is already started.");
        }

        StartReceiving();
    }

    /// <summary>
    /// Starts the datagram transport underneath, once: at <see cref="Start"/>, or earlier for a client that handshakes
    /// before the layer above starts it (what arrives in an established session before then has nobody to go to).
    /// </summary>
    protected void StartReceiving()
    {
        if (Interlocked.Exchange(ref _receiving, 1) == 0)
        {
            Network.Start(this);
        }
    }

    /// <summary>Sends <paramref name="plaintext"/> in the session <paramref name="context"/>; dropped when that session is gone (never sent in another, never in the clear).</summary>
    public void Send(ReadOnlySpan<byte> plaintext, CoapSecurityContext? context)
    {
        ObjectDisposedException.ThrowIf(IsDisposed, this);
        if (context is not null && _byContext.TryGetValue(context, out DtlsSession? session))
        {
            if (!session.Send(plaintext))
            {
                Log.NotSent(Logger, plaintext.Length, context);
            }
        }
        else
        {
            Log.NoSession(Logger, plaintext.Length, context?.ToString() ?? "no session");
        }
    }

    /// <summary>The session at <paramref name="remote"/>, established or handshaking.</summary>
    protected bool TryGetSession(IPEndPoint remote, out DtlsSession? session) => _byAddress.TryGetValue(remote, out session);

    /// <summary>
    /// Starts a handshake with <paramref name="remote"/> on a thread of its own when <see cref="TryAdmit"/> lets it,
    /// replacing whatever session the address had (RFC 6347 section 4.2.8: a client that proved its address with a
    /// cookie may start over). False when it is refused.
    /// </summary>
    /// <remarks>
    /// A thread per handshake, because BouncyCastle's DTLS handshake is one blocking call (DtlsServerProtocol.Accept,
    /// DtlsClientProtocol.Connect) that keeps the handshake's state on that thread's stack between flights and waits for
    /// the peer inside its transport's DatagramReceiver.Receive; it has no
    /// non-blocking mode for DTLS (its TLS protocol's OfferInput does not apply), and its reliable-handshake and record
    /// layers are internal, so no thread could be given back without writing the DTLS handshake anew. The wait is made
    /// cheap and bounded instead: the thread sleeps on a monitor (no CPU), at most
    /// <see cref="DtlsOptions.MaxConcurrentHandshakes"/> exist, and a server ends a stalled one early
    /// (<see cref="DtlsServerOptions.HandshakeStallTimeout"/>) or gives its place to a newcomer.
    /// </remarks>
    protected bool TryStartHandshake(IPEndPoint remote, Func<DtlsSession, (BcDtlsTransport Transport, CoapPeerIdentity Identity, RecordProtection? Protection)> handshake, out DtlsSession? session)
    {
        session = null;
        if (IsDisposed)
        {
            return false;
        }

        DtlsSession created = new(Network, remote, Options.MaxDatagramSize, Time.GetTimestamp(), _onClosed, _onMoved, PeerName);
        if (!TryAdmit(created))
        {
            return false;
        }

        if (_byAddress.TryGetValue(remote, out DtlsSession? old))
        {
            old.MarkClosed($"{PeerName} started a new handshake from the same address (RFC 6347 section 4.2.8)", SessionEnd.Replaced);
            Forget(old);
        }

        _byAddress[remote] = created;
        session = created;
        Thread thread = new(() => RunHandshake(created, handshake))
        {
            IsBackground = true,
            Name = "CoapNet DTLS handshake",
        };
        thread.Start();
        return true;
    }

    /// <summary>
    /// Whether a handshake with <paramref name="session"/> may start: by default within <see cref="DtlsOptions.MaxSessions"/>
    /// and <see cref="DtlsOptions.MaxConcurrentHandshakes"/>; <see cref="OnHandshakeEnded"/> gives its place back.
    /// </summary>
    protected virtual bool TryAdmit(DtlsSession session)
    {
        if (Volatile.Read(ref _sessions) >= Options.MaxSessions)
        {
            LogRefused(session.Remote, "the session bound (MaxSessions) is reached");
            return false;
        }

        if (Interlocked.Increment(ref _handshakes) > Options.MaxConcurrentHandshakes)
        {
            Interlocked.Decrement(ref _handshakes);
            LogRefused(session.Remote, "the handshake bound (MaxConcurrentHandshakes) is reached");
            return false;
        }

        return true;
    }

    /// <summary>The handshake of <paramref name="session"/> ended, either way: its place is free.</summary>
    protected virtual void OnHandshakeEnded(DtlsSession session) => Interlocked.Decrement(ref _handshakes);

    /// <summary>The established sessions, for a server that evicts the idlest at <see cref="DtlsOptions.MaxSessions"/>.</summary>
    protected ICollection<DtlsSession> Sessions => _byContext.Values;

    /// <summary>Logs a refused handshake at Warning, within the budget of handshake lines.</summary>
    protected void LogRefused(IPEndPoint remote, string reason)
    {
        if (MayLog(LogLevel.Warning))
        {
            Log.Refused(Logger, remote, reason);
        }
    }

    /// <summary>
    /// True when a handshake line at <paramref name="level"/> may be written now, at most
    /// <see cref="HandshakeLogLinesPerSecond"/> a second (a flood of failing or refused handshakes costs a bounded number
    /// of lines, as the TLS listener's do); first writes how many were left out since the last one.
    /// </summary>
    protected bool MayLog(LogLevel level)
    {
        if (!Logger.IsEnabled(level) || !_handshakeLog.TryAcquire(out long suppressed))
        {
            return false;
        }

        if (suppressed > 0)
        {
            Log.Suppressed(Logger, suppressed);
        }

        return true;
    }

    /// <summary>
    /// Issues <paramref name="session"/> a Connection ID no other session holds (RFC 9146 section 3), random so that
    /// it tells an observer nothing, and finds the session by it from now on.
    /// </summary>
    protected byte[] IssueConnectionId(DtlsSession session)
    {
        byte[] id = new byte[DtlsRecords.ConnectionIdLength];
        while (true)
        {
            System.Security.Cryptography.RandomNumberGenerator.Fill(id);
            ulong key = DtlsRecords.ToKey(id);
            if (_byConnectionId.TryAdd(key, session))
            {
                session.ConnectionId = key;
                return id;
            }
        }
    }

    /// <summary>
    /// True on a server: a plaintext ClientHello from the address of an established session goes to
    /// <see cref="OnUnknownDatagram"/>, as a client that lost its session (a reboot) starts over from the same address.
    /// </summary>
    protected virtual bool RestartsOnClientHello => false;

    /// <summary>
    /// True when this side sends a full handshake's last flight (the server's ChangeCipherSpec and Finished), which the
    /// peer may ask for again by retransmitting its own (RFC 6347 section 4.2.4); a client's last flight is answered.
    /// </summary>
    protected virtual bool SendsLastFlight => false;

    /// <summary>A datagram from an address with no session, or a ClientHello from one with an established session.</summary>
    protected abstract void OnUnknownDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote);

    /// <summary>Who is at the other end of this engine's sessions, as the reasons they close name it ("the server").</summary>
    protected abstract string PeerName { get; }

    /// <summary>
    /// The layer above gave up on a confirmable message sent in <paramref name="context"/> (RFC 7252 section 4.2): the
    /// session's own engine decides whether that ends it (<see cref="OnUnacknowledged(DtlsSession)"/>).
    /// </summary>
    public void OnUnacknowledged(CoapSecurityContext? context)
    {
        if (context is not null && _byContext.TryGetValue(context, out DtlsSession? session))
        {
            OnUnacknowledged(session);
        }
    }

    /// <summary>A confirmable message in <paramref name="session"/> went unacknowledged; by default the session goes on.</summary>
    protected virtual void OnUnacknowledged(DtlsSession session)
    {
    }

    /// <summary>True on a server: its sessions are counted when they end (<c>coap.sessions.closed</c>), as its gauge reports them.</summary>
    protected virtual bool ReportsSessions => false;

    /// <summary>Called once when the engine is disposed, before its sessions are closed.</summary>
    protected virtual void OnDisposing()
    {
    }

    /// <summary>Called on the handshake thread once a session is established (the client completes its waiters).</summary>
    protected virtual void OnEstablished(DtlsSession session)
    {
    }

    /// <summary>Called once when an established session has been removed from the maps (closed, for whatever reason).</summary>
    protected virtual void OnForgotten(DtlsSession session)
    {
    }

    /// <summary>Called on the handshake thread when a handshake fails.</summary>
    protected virtual void OnHandshakeFailed(DtlsSession session, Exception error)
    {
    }

    void IDatagramReceiver.OnDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote)
    {
        // RFC 9146 section 6: a record with a Connection ID belongs to the session that issued it, wherever it comes from.
        // The client's Finished is the first such record, while its handshake still runs.
        if (!_byConnectionId.IsEmpty && DtlsRecords.TryReadConnectionId(datagram, out ulong connectionId))
        {
            if (_byConnectionId.TryGetValue(connectionId, out DtlsSession? owner))
            {
                _ = Dispatch(owner, datagram, remote);
            }

            return;
        }

        if (_byAddress.TryGetValue(remote, out DtlsSession? session))
        {
            if (session.IsEstablished && RestartsOnClientHello && DtlsRecords.IsClientHello(datagram))
            {
                OnUnknownDatagram(datagram, remote);
                return;
            }

            if (Dispatch(session, datagram, remote))
            {
                return;
            }
        }

        OnUnknownDatagram(datagram, remote);
    }

    /// <summary>Decrypts a datagram of an established session, or queues it for the session's handshake; false when the session is closed.</summary>
    private bool Dispatch(DtlsSession session, ReadOnlySpan<byte> datagram, IPEndPoint remote)
    {
        if (session.IsEstablished)
        {
            ReceiveEstablished(session, datagram, remote);
            return true;
        }

        if (session.TryQueueHandshakeDatagram(datagram, remote, Time.GetTimestamp(), out bool established))
        {
            return true;
        }

        if (established)
        {
            // It has just become established: what it queued is being replayed, and this comes after.
            ReceiveEstablished(session, datagram, remote);
            return true;
        }

        return false;
    }

    void IDatagramReceiver.OnDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote, CoapSecurityContext? securityContext)
        => ((IDatagramReceiver)this).OnDatagram(datagram, remote);

    /// <summary>Closes every session with close_notify, stops the ageing and closes the UDP transport.</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        OnDisposing();
        _sweep.Dispose();
        foreach (KeyValuePair<IPEndPoint, DtlsSession> pair in _byAddress)
        {
            pair.Value.Close(DisposedReason, SessionEnd.Shutdown);
        }

        Network.Dispose();
    }

    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        OnDisposing();
        await _sweep.DisposeAsync().ConfigureAwait(false);
        foreach (KeyValuePair<IPEndPoint, DtlsSession> pair in _byAddress)
        {
            pair.Value.Close(DisposedReason, SessionEnd.Shutdown);
        }

        await Network.DisposeAsync().ConfigureAwait(false);
    }

    private void ReceiveEstablished(DtlsSession session, ReadOnlySpan<byte> datagram, IPEndPoint remote)
    {
        if (datagram.Length > _maxDatagramSize)
        {
            return;
        }

        // The receive thread's own copy: BouncyCastle reads records from arrays.
        byte[] received = t_received is { } buffer && buffer.Length >= _maxDatagramSize ? buffer : (t_received = new byte[_maxDatagramSize]);
        byte[] plaintext = t_plaintext ??= new byte[PlaintextSize];
        datagram.CopyTo(received);
        lock (session.ReceiveGate)
        {
            session.Receive(received, datagram.Length, plaintext, _deliver, remote, Time.GetTimestamp());
        }
    }

    private void Deliver(DtlsSession session, ReadOnlySpan<byte> plaintext)
    {
        try
        {
            _upper?.OnDatagram(plaintext, session.Remote, session.Context);
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            // The layer above must not throw; if it does, that message is lost and the session goes on.
            Log.ReceiverFailed(Logger, e);
        }
    }

    private void RunHandshake(DtlsSession session, Func<DtlsSession, (BcDtlsTransport Transport, CoapPeerIdentity Identity, RecordProtection? Protection)> handshake)
    {
        Exception? failure = null;
        try
        {
            (BcDtlsTransport transport, CoapPeerIdentity identity, RecordProtection? protection) = handshake(session);
            CoapSecurityContext context = new("DTLS 1.2", identity);
            lock (session.ReceiveGate)
            {
                byte[][] early = session.Establish(transport, context, Time.GetTimestamp(), protection, SendsLastFlight);
                if (session.IsEstablished && !IsDisposed)
                {
                    _byContext[context] = session;
                    Interlocked.Increment(ref _sessions);
                    Log.Established(Logger, session.Remote, context);
                    CoapInstrumentation.RecordDtlsHandshake(HandshakeOutcome.Established, null);
                    OnEstablished(session);
                    if (early.Length > 0)
                    {
                        byte[] plaintext = new byte[PlaintextSize];
                        foreach (byte[] datagram in early)
                        {
                            session.Receive(datagram, datagram.Length, plaintext, _deliver, session.Remote, Time.GetTimestamp());
                        }
                    }
                }
                else
                {
                    // Closed or replaced while it finished: the new association is dropped at once (and was never reported up).
                    // Failure is set before the session reads as closed, as on every failed path: a waiter recorded late
                    // completes from it (ClientEngine.TryHandshake).
                    ObjectDisposedException replaced = new(nameof(DtlsEngine));
                    session.Failure = replaced;
                    session.Close("it was closed or replaced while its handshake finished", SessionEnd.Shutdown);
                    OnHandshakeFailed(session, replaced);
                }
            }
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            // A failed handshake answers nothing in plain CoAP and leaves nothing behind (RFC 7252 section 9.1); what
            // TLS had to say, it said with its alert.
            (string outcome, string? alert, string reason) = HandshakeOutcome.Of(e, session, PeerName);
            CoapInstrumentation.RecordDtlsHandshake(outcome, alert);
            if (MayLog(LogLevel.Information))
            {
                Log.HandshakeFailed(Logger, session.Remote, reason, HandshakeOutcome.DescribeAlert(e, session));
            }

            session.Failure = e;
            session.MarkClosed(e.Message, null);
            Forget(session);
            failure = e;
        }
        finally
        {
            OnHandshakeEnded(session);
        }

        // Told after this handshake no longer counts against the bound, so the engine may start another in its place.
        if (failure is not null)
        {
            OnHandshakeFailed(session, failure);
        }
    }

    /// <summary>
    /// Removes a closed session from the maps, once, and tells the layer above that an established one is lost, with
    /// why: what waits for an answer in it, and an observation registered in it, can never hear from it again (RFC 7252
    /// section 9.1.1). Removed first, so a client that reacts by asking for a session gets a new one.
    /// </summary>
    private void Forget(DtlsSession session)
    {
        _byAddress.TryRemove(new KeyValuePair<IPEndPoint, DtlsSession>(session.Remote, session));
        if (session.ConnectionId is { } connectionId)
        {
            _byConnectionId.TryRemove(new KeyValuePair<ulong, DtlsSession>(connectionId, session));
        }

        if (session.Context is not { } context || !_byContext.TryRemove(new KeyValuePair<CoapSecurityContext, DtlsSession>(context, session)))
        {
            return;
        }

        Interlocked.Decrement(ref _sessions);
        OnForgotten(session);
        if (ReportsSessions)
        {
            CoapInstrumentation.RecordSessionClosed(CoapPeer.DtlsScheme, session.ClosedAs);
        }

        string reason = session.CloseReason ?? "it closed";
        Log.Closed(Logger, session.Remote, context, reason);
        try
        {
            _upper?.OnSessionLost(session.Remote, context, new CoapConnectionException($"The DTLS session with {session.Remote} was lost: {reason}.", session.Remote));
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            // As for a received message: the layer above must not throw, and the engine goes on if it does.
            Log.ReceiverFailed(Logger, e);
        }
    }

    /// <summary>The peer of <paramref name="session"/> now sends from <paramref name="remote"/>: answers go there, and its datagrams are found by it.</summary>
    private void Move(DtlsSession session, IPEndPoint remote)
    {
        IPEndPoint old = session.Remote;
        session.MoveTo(remote);
        _byAddress.TryRemove(new KeyValuePair<IPEndPoint, DtlsSession>(old, session));
        _byAddress[remote] = session;
        Log.Moved(Logger, old, remote, session.Context!);
    }

    /// <summary>
    /// Closes the sessions idle past <see cref="DtlsOptions.SessionIdleTimeout"/> (the timer of <see cref="TimeProvider"/>),
    /// <see cref="DtlsOptions.SweepSlice"/> sessions at a time: a pass over a fleet of 100,000 took 300 ms of a thread-pool thread at
    /// once (issue 41), and the pool's other work (answers, notifications) waited behind it on a one-core server. A pass
    /// that has more goes on as a new work item at the back of the pool's queue; a tick during a pass has the pass start
    /// another when it ends.
    /// </summary>
    private void Sweep()
    {
        // A tick during a pass is not lost: the pass, when it ends, starts another with the clock as it is then.
        Interlocked.Increment(ref _sweepRequests);
        StartSweep();
    }

    private void StartSweep()
    {
        if (IsDisposed || Interlocked.CompareExchange(ref _sweeping, 1, 0) != 0)
        {
            return;
        }

        SweepFrom(new SweepPass(_byContext.GetEnumerator(), Time.GetTimestamp(), Volatile.Read(ref _sweepRequests)));
    }

    private void SweepFrom(SweepPass pass)
    {
        for (int i = 0; i < Options.SweepSlice; i++)
        {
            if (IsDisposed || !pass.Sessions.MoveNext())
            {
                pass.Sessions.Dispose();
                Volatile.Write(ref _sweeping, 0);
                if (Volatile.Read(ref _sweepRequests) != pass.Requests)
                {
                    StartSweep();
                }

                return;
            }

            SweepOne(pass.Sessions.Current.Key, pass.Sessions.Current.Value, pass.Now);
        }

        ThreadPool.UnsafeQueueUserWorkItem(static state => state.Engine.SweepFrom(state.Pass), (Engine: this, Pass: pass), preferLocal: false);
    }

    /// <summary>One sweep's place in the sessions, its clock reading, and the count of ticks it answers.</summary>
    private sealed record SweepPass(IEnumerator<KeyValuePair<CoapSecurityContext, DtlsSession>> Sessions, long Now, long Requests);

    private void SweepOne(CoapSecurityContext context, DtlsSession session, long now)
    {
        TimeSpan idle = Time.GetElapsedTime(session.LastReceived, now);
        if (idle >= Options.SessionIdleTimeout)
        {
            Log.Aged(Logger, session.Remote, context);
            session.Close($"it aged out: nothing was heard in it for {Options.SessionIdleTimeout} (SessionIdleTimeout)", SessionEnd.IdleTimeout);
            return;
        }

        if (!session.MaySweep)
        {
            return;
        }

        // A session that has said nothing since its handshake still keeps our Finished; past the time its last flight
        // may be asked for again, it lets go of it. One quiet for RestAfter lets go of its expanded ciphers until its
        // next record: a sleeping device costs its keys.
        bool unread = Time.GetElapsedTime(session.EstablishedAt, now) >= LastFlightLifetime;
        bool quiet = idle >= RestAfter;
        if (unread || quiet)
        {
            lock (session.ReceiveGate)
            {
                if (unread)
                {
                    session.ForgetLastFlight();
                }

                if (quiet)
                {
                    session.Rest();
                }
            }
        }
    }

    private const string DisposedReason = "the DTLS transport was disposed";

    /// <summary>Lines a second about failed, refused, stalled and evicted handshakes, at most (as the TLS listener's failures).</summary>
    private const int HandshakeLogLinesPerSecond = 10;

    private static partial class Log
    {
        [LoggerMessage(1, LogLevel.Debug, "DTLS session established with {Remote}: {Context}")]
        public static partial void Established(ILogger logger, IPEndPoint remote, CoapSecurityContext context);

        [LoggerMessage(2, LogLevel.Information, "DTLS handshake with {Remote} failed: {Reason} ({Alert})")]
        public static partial void HandshakeFailed(ILogger logger, IPEndPoint remote, string reason, string alert);

        [LoggerMessage(3, LogLevel.Debug, "DTLS session with {Remote} closed: {Context}: {Reason}")]
        public static partial void Closed(ILogger logger, IPEndPoint remote, CoapSecurityContext context, string reason);

        [LoggerMessage(4, LogLevel.Debug, "DTLS session with {Remote} aged out: {Context}")]
        public static partial void Aged(ILogger logger, IPEndPoint remote, CoapSecurityContext context);

        [LoggerMessage(5, LogLevel.Warning, "Refused a DTLS handshake from {Remote}: {Reason}")]
        public static partial void Refused(ILogger logger, IPEndPoint remote, string reason);

        [LoggerMessage(6, LogLevel.Debug, "Dropped {Length} bytes to send: session {Context} is gone")]
        public static partial void NoSession(ILogger logger, int length, string context);

        [LoggerMessage(7, LogLevel.Debug, "Dropped {Length} bytes to send in {Context}: closed, or larger than MaxDatagramSize allows")]
        public static partial void NotSent(ILogger logger, int length, CoapSecurityContext context);

        [LoggerMessage(9, LogLevel.Debug, "DTLS session moved from {Old} to {Remote} by its Connection ID: {Context}")]
        public static partial void Moved(ILogger logger, IPEndPoint old, IPEndPoint remote, CoapSecurityContext context);

        [LoggerMessage(10, LogLevel.Information, "{Count} lines about failed or refused DTLS handshakes were left out (at most {PerSecond} a second)")]
        private static partial void SuppressedLines(ILogger logger, long count, int perSecond);

        public static void Suppressed(ILogger logger, long count) => SuppressedLines(logger, count, HandshakeLogLinesPerSecond);

        [LoggerMessage(8, LogLevel.Error, "The layer above the DTLS transport threw on a received message or a lost session")]
        public static partial void ReceiverFailed(ILogger logger, Exception exception);
    }
}
