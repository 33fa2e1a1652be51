using System.Net;
using CoapNet.Channels;
using CoapNet.Dtls.Records;
using CoapNet.Transports;
using Org.BouncyCastle.Tls;
using BcDtlsTransport = Org.BouncyCastle.Tls.DtlsTransport;

namespace CoapNet.Dtls.Sessions;

/// <summary>
/// One DTLS association with one peer, from its first verified ClientHello (or our first ClientHello) to its close:
/// it is the datagram transport BouncyCastle's record layer reads and writes through.
/// </summary>
/// <remarks>
/// <para>
/// While the handshake runs (on a handshake thread, which BouncyCastle's blocking protocol needs) received datagrams
/// are queued, a bounded few, and the handshake thread waits for them. Once established, no thread waits: the
/// transport's receive thread hands each datagram to <c>Receive</c>,
/// which decrypts it at once, with our own record protection (<see cref="RecordProtection"/>, the AEAD suites), to which
/// the session moves when its handshake completes. A suite ours does not cover stays on BouncyCastle's record layer,
/// whose receive loop asks this transport for its receive limit before each datagram it reads; after the one datagram
/// given it, the limit is refused with <see cref="TlsTimeoutException"/>, which its transport rethrows without failing
/// the session, so the loop ends without waiting.
/// </para>
/// <para>
/// Locks: <see cref="_queueGate"/> guards the handshake queue and the state change to established;
/// <see cref="ReceiveGate"/> orders decryption (the receive thread, and the handshake thread replaying what arrived
/// while it finished). Sending needs neither: our protection and BouncyCastle's record layer each serialize their writes.
/// </para>
/// </remarks>
internal sealed class DtlsSession : DatagramTransport
{
    private const int MaxQueuedHandshakeDatagrams = 32;
    private const int HandshakeDatagramLimit = 16_384 + 256;
    private const int Handshaking = 0;
    private const int Established = 1;
    private const int Closed = 2;

    private readonly IDatagramTransport _network;
    private readonly int _datagramLimit;
    private readonly Action<DtlsSession> _onClosed;
    private readonly Action<DtlsSession, IPEndPoint>? _onMoved;
    private readonly string _peerName;
    private DtlsRecordCallback? _onRecord;
    private readonly object _queueGate = new();
    private Queue<(byte[] Datagram, bool FromPeer)>? _handshakeQueue = new();
    // The handshake thread's wake-ups (one per datagram queued, and one at the close), dropped at Establish. Not
    // Monitor.Wait on _queueGate: waiting gives the object a sync block for as long as it lives, and _queueGate lives with
    // the session (141,000 sync blocks in a fleet of 100,000, each looked at by every garbage collection; issue 41).
    private SemaphoreSlim? _arrivals = new(0);
    private IPEndPoint _remote;
    private volatile int _state;
    private BcDtlsTransport? _dtls;
    private byte[]? _pending;
    private int _pendingLength;
    private long _lastReceived;
    private IPEndPoint? _receivingFrom;
    private RecordProtection? _protection;
    private long _written = -1;
    private long _writtenInTheClear = -1;
    // Our Finished, as a handshake message, while the peer may still ask for our last flight again (RFC 6347 section
    // 4.2.4): the server's flight is ChangeCipherSpec and Finished, and these 24 bytes are all of it that is not made
    // afresh. What BouncyCastle kept for it (its transport, handshake and cipher objects, several kilobytes) is dropped
    // when the handshake completes.
    private byte[]? _lastFinished;
    private string? _closeReason;
    private string? _endedAs;
    private byte[]? _cookie;
    private long _lastProgress;
    private long _highestAuthenticated = -1;
    private bool _readingFromPeer;
    private bool _finishedFailed;
    private volatile bool _finishedAuthenticated;

    /// <param name="network">The datagram transport underneath.</param>
    /// <param name="remote">The peer's address.</param>
    /// <param name="datagramLimit">The largest datagram of an established session.</param>
    /// <param name="now">The time, for ageing.</param>
    /// <param name="onClosed">Called once the session closed.</param>
    /// <param name="onMoved">Called when a record carrying our Connection ID authenticated, is the newest yet, and came from another address (RFC 9146 section 6).</param>
    /// <param name="peerName">"the server" or "the client", for the reason it closed.</param>
    public DtlsSession(IDatagramTransport network, IPEndPoint remote, int datagramLimit, long now, Action<DtlsSession> onClosed, Action<DtlsSession, IPEndPoint>? onMoved, string peerName)
    {
        _peerName = peerName;
        _network = network;
        _remote = remote;
        _datagramLimit = datagramLimit;
        _onClosed = onClosed;
        _onMoved = onMoved;
        _lastReceived = now;
        _lastProgress = now;
    }

    /// <summary>The Connection ID this session was issued (RFC 9146), as the engine's key for it, or null for none.</summary>
    public ulong? ConnectionId { get; set; }

    /// <summary>
    /// Held while a datagram is decrypted and its plaintext delivered, so records are processed one at a time and in order:
    /// the session itself, which nothing else locks (an object of its own would cost every idle session 24 bytes).
    /// </summary>
    public object ReceiveGate => this;

    /// <summary>Where the peer is now; a record authenticated with the Connection ID may move it (RFC 9146 section 6).</summary>
    public IPEndPoint Remote => Volatile.Read(ref _remote);

    /// <summary>The session's context, once established.</summary>
    public CoapSecurityContext? Context { get; private set; }

    /// <summary>True once the handshake completed and until the session closes.</summary>
    public bool IsEstablished => _state == Established;

    /// <summary>True once closed, failed or forgotten.</summary>
    public bool IsClosed => _state == Closed;

    /// <summary>When the last authenticated record arrived (a <see cref="TimeProvider"/> timestamp).</summary>
    public long LastReceived => Volatile.Read(ref _lastReceived);

    /// <summary>
    /// While the handshake runs: when the peer last moved it forward (a <see cref="TimeProvider"/> timestamp), by a
    /// datagram carrying more than a repeated ClientHello; at first, when the handshake began. What a stalled
    /// handshake is told by (RFC 6347 section 4.2.4: a live peer answers each flight, or retransmits its own).
    /// </summary>
    public long LastProgress => Volatile.Read(ref _lastProgress);

    /// <summary>True while the handshake runs.</summary>
    public bool IsHandshaking => _state == Handshaking;

    /// <summary>When the handshake completed (a <see cref="TimeProvider"/> timestamp).</summary>
    public long EstablishedAt { get; private set; }

    /// <summary>Why the session closed, once it has: the first reason given (an alert by name, ageing, our own close), or null when none was.</summary>
    public string? CloseReason => Volatile.Read(ref _closeReason);

    /// <summary>The class of <see cref="CloseReason"/> (<see cref="SessionEnd"/>), for the metric; the first one given.</summary>
    public string ClosedAs => Volatile.Read(ref _endedAs) ?? SessionEnd.Failed;

    /// <summary>
    /// How the engine ended the handshake itself, when it did (<see cref="HandshakeOutcome.Stalled"/>,
    /// <see cref="HandshakeOutcome.Evicted"/>; <see cref="TryEndHandshake"/>); null otherwise.
    /// </summary>
    public string? EndedAs { get; private set; }

    /// <summary>Why the handshake failed, once it has (for a waiter that comes after the failure).</summary>
    public Exception? Failure { get; set; }

    /// <summary>
    /// For a client's handshake, set on its thread before it starts: a HelloVerifyRequest whose cookie differs from the
    /// one the server gave first fails the handshake with <see cref="CookieRefusedException"/>, so the client can start
    /// over at once instead of retransmitting a cookie the server no longer accepts until the handshake times out.
    /// </summary>
    public bool WatchesCookies { get; set; }

    /// <summary>For a client's handshake: how many handshakes before this one started over for a refused cookie.</summary>
    public int CookieRestarts { get; set; }

    /// <summary>For the client: the handshake's outcome, shared by every request that waits for it.</summary>
    public Task<CoapSecurityContext>? Connected { get; set; }

    /// <summary>
    /// Queues a datagram for the handshake thread. False when the session is no longer handshaking (it has just
    /// become established: decrypt it instead) or is closed; a datagram past the bound is dropped (the peer
    /// retransmits its flight, RFC 6347 section 4.2.4).
    /// </summary>
    /// <param name="datagram">The datagram.</param>
    /// <param name="source">Where it came from: only a record from the peer's own address may fail the handshake (a Connection ID record may come from anywhere).</param>
    /// <param name="now">The time: a datagram that is not a repeated ClientHello is the peer's progress.</param>
    /// <param name="established">True when it was not queued because the session has just become established.</param>
    public bool TryQueueHandshakeDatagram(ReadOnlySpan<byte> datagram, IPEndPoint source, long now, out bool established)
    {
        lock (_queueGate)
        {
            established = _state == Established;
            if (_state != Handshaking)
            {
                return false;
            }

            if (_handshakeQueue!.Count < MaxQueuedHandshakeDatagrams)
            {
                _handshakeQueue.Enqueue((datagram.ToArray(), source.Equals(Remote)));
                if (!DtlsRecords.IsClientHello(datagram))
                {
                    Volatile.Write(ref _lastProgress, now);
                }

                _arrivals?.Release();
            }

            return true;
        }
    }

    /// <summary>
    /// Called by the cipher of the session's first epoch (<see cref="WatchedCipher"/>) for each record it
    /// authenticated: the highest epoch 1 sequence number BouncyCastle has read, where our replay window starts.
    /// </summary>
    /// <param name="macSequenceNumber">The epoch in the top 16 bits, the sequence number in the low 48 (RFC 6347 section 4.1).</param>
    public void NoteAuthenticated(long macSequenceNumber)
    {
        if ((macSequenceNumber >>> 48) != 1)
        {
            return;
        }

        if (_state == Handshaking)
        {
            _finishedAuthenticated = true;
        }

        // BouncyCastle authenticates on the handshake thread, then on the receive thread.
        RaiseTo(ref _highestAuthenticated, macSequenceNumber & ((1L << 48) - 1));
    }

    /// <summary>An atomic maximum: raises <paramref name="field"/> to <paramref name="value"/> unless it is higher already.</summary>
    private static void RaiseTo(ref long field, long value)
    {
        long seen = Volatile.Read(ref field);
        while (value > seen)
        {
            long found = Interlocked.CompareExchange(ref field, value, seen);
            if (found == seen)
            {
                return;
            }

            seen = found;
        }
    }

    /// <summary>
    /// The alert to send (and report) for <paramref name="alert"/>, which BouncyCastle raised: RFC 5246 section 7.2.2
    /// answers a Finished that fails to verify with decrypt_error, where BouncyCastle 2.7 raises handshake_failure. Once a
    /// record of the peer's epoch 1 authenticated within the handshake (its Finished: the record is sound), checking the
    /// Finished's verify_data is the only step left that raises handshake_failure, so that one is the Finished's.
    /// </summary>
    public short CorrectAlert(short alert)
        => alert == AlertDescription.handshake_failure && _finishedAuthenticated ? AlertDescription.decrypt_error : alert;

    /// <summary>
    /// Called by the cipher of the first epoch when a record fails authentication. While the handshake runs, such a
    /// record from the peer's address can only be its Finished under keys that differ from ours (a wrong pre-shared
    /// key): the handshake thread ends the handshake with a fatal bad_record_mac alert at its next read (RFC 6347
    /// section 4.1.2.7 allows it within a handshake). Once established, records that do not authenticate are dropped
    /// and nothing else (section 4.1.2.7), so no one can end a session by sending garbage; this does nothing then.
    /// </summary>
    public void NoteUnauthenticated()
    {
        if (_state == Handshaking && _readingFromPeer)
        {
            _finishedFailed = true;
        }
    }

    /// <summary>
    /// Makes the session established with <paramref name="context"/> and returns what was queued and not read by the
    /// handshake (records that came right after the peer's Finished), to be decrypted now. Call holding
    /// <see cref="ReceiveGate"/>.
    /// </summary>
    /// <remarks>
    /// With <paramref name="protection"/>, the session moves to it at once: writing goes on after the last sequence
    /// number BouncyCastle wrote, every record BouncyCastle authenticated (the peer's Finished) counts as read, and
    /// BouncyCastle's transport, handshake state and ciphers are let go. When we sent the handshake's last flight, our
    /// Finished is kept to answer the peer's retransmitted flight with ours (RFC 6347 section 4.2.4), which BouncyCastle
    /// would otherwise have done, holding all of its state until the peer's first record: for up to a report period in a
    /// fleet, several hundred megabytes when every device handshakes at once (issue 41).
    /// </remarks>
    /// <param name="dtls">BouncyCastle's transport: the session's record layer when <paramref name="protection"/> is null.</param>
    /// <param name="context">The session's context.</param>
    /// <param name="now">The time, for ageing.</param>
    /// <param name="protection">Our own record protection for the session's suite, or null to stay on BouncyCastle's.</param>
    /// <param name="sentLastFlight">True when we sent the handshake's last flight (the server, in a full handshake): the peer may ask for it again.</param>
    public byte[][] Establish(BcDtlsTransport dtls, CoapSecurityContext context, long now, RecordProtection? protection, bool sentLastFlight)
    {
        lock (_queueGate)
        {
            if (protection is null)
            {
                _dtls = dtls;
            }
            else
            {
                protection.Activate(Volatile.Read(ref _written) + 1, Volatile.Read(ref _highestAuthenticated));
                _protection = protection;
            }

            // Only our own protection can send our Finished again; BouncyCastle's layer answers for itself.
            if (protection is null || !sentLastFlight)
            {
                _lastFinished = null;
            }

            Context = context;
            _lastReceived = now;
            byte[][] early = [];
            if (_handshakeQueue is { Count: > 0 } queued)
            {
                early = new byte[queued.Count][];
                int i = 0;
                foreach ((byte[] datagram, _) in queued)
                {
                    early[i++] = datagram;
                }
            }

            // Only a handshake queues and waits; an established session keeps no queue.
            _handshakeQueue = null;
            _arrivals = null;
            EstablishedAt = now;
            if (_state == Handshaking)
            {
                _state = Established;
            }

            return early;
        }
    }

    /// <summary>
    /// Decrypts one datagram of an established session and hands each application record's plaintext to
    /// <paramref name="deliver"/>. Call holding <see cref="ReceiveGate"/>. A datagram that is not a valid record of
    /// this session (forged, replayed, from an old epoch) is dropped; a fatal alert or close_notify from the peer
    /// closes the session.
    /// </summary>
    /// <param name="datagram">The datagram, in an array this call may read until it returns.</param>
    /// <param name="length">Its length.</param>
    /// <param name="plaintext">Room for one record's plaintext (16,384 bytes).</param>
    /// <param name="deliver">Gets each plaintext, valid during the call.</param>
    /// <param name="source">The datagram's source address.</param>
    /// <param name="now">The time, for ageing.</param>
    public void Receive(byte[] datagram, int length, Span<byte> plaintext, PlaintextReceived deliver, IPEndPoint source, long now)
    {
        if (_state != Established || length > _datagramLimit)
        {
            return;
        }

        if (_protection is { } protection)
        {
            ReceiveProtected(protection, datagram.AsSpan(0, length), plaintext, deliver, source, now);
            return;
        }

        BcDtlsTransport? dtls = _dtls;
        if (dtls is null)
        {
            return;
        }

        _pending = datagram;
        _pendingLength = length;
        _receivingFrom = source;
        DtlsRecordCallback? callback = ConnectionId is null ? null : _onRecord ??= OnRecord;
        try
        {
            int received;
            try
            {
                received = dtls.Receive(plaintext, 1000, callback);
            }
            catch (TlsTimeoutException)
            {
                // Our receive limit, refused once the datagram was read: it held no application data.
                received = -1;
            }

            if (received >= 0)
            {
                Volatile.Write(ref _lastReceived, now);
                deliver(this, plaintext[..received]);
            }

            // Further records of the same datagram (RFC 6347 section 4.1.1 lets several share one).
            while ((received = dtls.ReceivePending(plaintext, callback)) >= 0)
            {
                Volatile.Write(ref _lastReceived, now);
                deliver(this, plaintext[..received]);
            }
        }
        catch (IOException e)
        {
            // A fatal alert received or raised: the association is over (RFC 5246 section 7.2.2).
            MarkClosed(
                e switch
                {
                    TlsFatalAlertReceived received => $"{_peerName} sent a fatal alert, {AlertDescription.GetText(received.AlertDescription)}",
                    TlsFatalAlert raised => $"a record from {_peerName} raised a fatal alert, {AlertDescription.GetText(raised.AlertDescription)}",
                    _ => $"reading a record from {_peerName} failed: {e.Message}",
                },
                e is TlsFatalAlertReceived ? SessionEnd.PeerAlert : SessionEnd.Failed);
        }
        finally
        {
            _pending = null;
            _receivingFrom = null;
        }

        if (_state == Closed)
        {
            // Closed without an exception: BouncyCastle read the peer's close_notify and closed (RFC 5246 section 7.2.1).
            MarkClosed(ClosedByPeer, SessionEnd.PeerClosed);
            _onClosed(this);
        }
    }

    /// <summary>Encrypts and sends one datagram's plaintext in this session; false when it cannot (closed, too large).</summary>
    public bool Send(ReadOnlySpan<byte> plaintext)
    {
        if (_state != Established)
        {
            return false;
        }

        bool sent = _protection is { } protection
            ? SendProtected(protection, RecordProtection.ApplicationData, plaintext)
            : SendThroughBouncyCastle(plaintext);

        // A send that closed the session reports it here, outside the session's locks.
        if (!sent && _state == Closed)
        {
            _onClosed(this);
        }

        return sent;
    }

    /// <summary>Sends through BouncyCastle's record layer (a suite without our protection); false when it cannot.</summary>
    private bool SendThroughBouncyCastle(ReadOnlySpan<byte> plaintext)
    {
        try
        {
            // BouncyCastle's record layer serializes its writes itself.
            BcDtlsTransport? dtls = _dtls;
            if (dtls is null || plaintext.Length > dtls.GetSendLimit())
            {
                return false;
            }

            dtls.Send(plaintext);
            return true;
        }
        catch (IOException e)
        {
            MarkClosed($"sending in it failed: {e.Message}", SessionEnd.Failed);
            return false;
        }
    }

    // RFC 9146 section 6: only a record that authenticated with the Connection ID and is newer than every record
    // before it moves the peer, so a replayed or delayed datagram from an old address cannot take the session back.
    private void OnRecord(DtlsRecordFlags flags)
    {
        const DtlsRecordFlags NewestWithConnectionId = DtlsRecordFlags.IsNewest | DtlsRecordFlags.UsesConnectionID;
        if ((flags & NewestWithConnectionId) == NewestWithConnectionId && _receivingFrom is { } source && !source.Equals(Remote))
        {
            _onMoved?.Invoke(this, source);
        }
    }

    /// <summary>The reason of a close_notify from the peer.</summary>
    private string ClosedByPeer => $"{_peerName} sent close_notify";

    /// <summary>Moves the session to <paramref name="remote"/> (RFC 9146).</summary>
    public void MoveTo(IPEndPoint remote) => Volatile.Write(ref _remote, remote);

    /// <summary>Sends close_notify when established (RFC 5246 section 7.2.1) and forgets the session; a handshake under way is failed.</summary>
    /// <param name="reason">Why this side closes it, for the exchanges that fail with it.</param>
    /// <param name="endedAs">Its class (<see cref="SessionEnd"/>), for the metric.</param>
    public void Close(string reason, string endedAs)
    {
        // Recorded first: sending close_notify may itself fail and close the session, and this is the reason.
        Interlocked.CompareExchange(ref _closeReason, reason, null);
        Interlocked.CompareExchange(ref _endedAs, endedAs, null);
        BcDtlsTransport? dtls = _dtls;
        if (_protection is { } protection && _state == Established)
        {
            // RFC 5246 section 7.2.1: close_notify, a warning-level alert, in the session's own protection.
            _ = SendProtected(protection, RecordProtection.Alert, [1, 0]);
        }
        else if (dtls is not null && _state == Established)
        {
            try
            {
                dtls.Close();
            }
            catch (IOException)
            {
            }
        }

        MarkClosed(reason, endedAs);
        _onClosed(this);
    }

    /// <summary>
    /// Ends the handshake, if it is still under way, as <paramref name="outcome"/> (stalled, evicted) for
    /// <paramref name="reason"/>: its thread wakes and fails. False when it has just completed (or closed), which then stands.
    /// </summary>
    public bool TryEndHandshake(string outcome, string reason)
    {
        lock (_queueGate)
        {
            if (_state != Handshaking)
            {
                return false;
            }

            EndedAs = outcome;
        }

        MarkClosed(reason, null);
        return true;
    }

    /// <summary>Marks the session closed and wakes a handshake thread waiting for a datagram.</summary>
    /// <param name="reason">Why, when this is the first reason given; null to leave it to the caller that knows.</param>
    /// <param name="endedAs">Its class (<see cref="SessionEnd"/>) for an established session, when this is the first given; null for a handshake, or to leave it to the caller.</param>
    public void MarkClosed(string? reason, string? endedAs)
    {
        if (reason is not null)
        {
            Interlocked.CompareExchange(ref _closeReason, reason, null);
        }

        if (endedAs is not null)
        {
            Interlocked.CompareExchange(ref _endedAs, endedAs, null);
        }

        lock (_queueGate)
        {
            _state = Closed;
            Interlocked.Exchange(ref _protection, null)?.Dispose();
            _lastFinished = null;
            _handshakeQueue?.Clear();
            _arrivals?.Release();
        }
    }

    /// <inheritdoc/>
    int DatagramReceiver.GetReceiveLimit()
    {
        if (_state == Handshaking)
        {
            return HandshakeDatagramLimit;
        }

        // Established: one datagram per receive call; asking again means it has been read and held no application
        // data. TlsTimeoutException ends BouncyCastle's receive loop without failing the association.
        return _pending is not null ? _datagramLimit : throw new TlsTimeoutException("No datagram waiting.");
    }

    /// <inheritdoc/>
    int DatagramSender.GetSendLimit() => _state == Handshaking ? Math.Min(_datagramLimit, 1400) : _datagramLimit;

    /// <inheritdoc/>
    int DatagramReceiver.Receive(byte[] buf, int off, int len, int waitMillis) => Receive(buf.AsSpan(off, len), waitMillis);

    /// <inheritdoc/>
    int DatagramReceiver.Receive(Span<byte> buffer, int waitMillis) => Receive(buffer, waitMillis);

    /// <inheritdoc/>
    void DatagramSender.Send(byte[] buf, int off, int len) => SendFromBouncyCastle(buf.AsSpan(off, len));

    /// <inheritdoc/>
    void DatagramSender.Send(ReadOnlySpan<byte> buffer) => SendFromBouncyCastle(buffer);

    /// <inheritdoc/>
    void TlsCloseable.Close()
    {
        // BouncyCastle closes its transport after close_notify or a fatal alert, either way: the association is over. Its
        // caller (our receive or send) names which, after this returns.
        MarkClosed(null, null);
    }

    private int Receive(Span<byte> buffer, int waitMillis)
    {
        if (_pending is { } pending)
        {
            // Established: the one datagram of this call. Longer than the buffer: BouncyCastle drops it.
            _pending = null;
            int length = _pendingLength;
            pending.AsSpan(0, Math.Min(length, buffer.Length)).CopyTo(buffer);
            return length;
        }

        if (_state == Established)
        {
            throw new TlsTimeoutException("No datagram waiting.");
        }

        // RFC 6347 section 4.1.2.7: an implementation that answers a record failing authentication sends a fatal
        // bad_record_mac. Within the handshake the peer then learns at once that its key is wrong, instead of
        // retransmitting a Finished we will never accept until the handshake times out.
        if (_finishedFailed)
        {
            throw new TlsFatalAlert(AlertDescription.bad_record_mac, $"{_peerName}'s Finished did not authenticate: its key differs from ours (a wrong pre-shared key?)");
        }

        // BouncyCastle's zero is "forever"; its handshake always gives a finite wait (its retransmission timer).
        int wait = waitMillis == 0 ? Timeout.Infinite : waitMillis;
        while (true)
        {
            SemaphoreSlim? arrivals;
            lock (_queueGate)
            {
                if (_handshakeQueue is { Count: > 0 } queue)
                {
                    (byte[] datagram, _readingFromPeer) = queue.Dequeue();
                    if (WatchesCookies)
                    {
                        CheckCookie(datagram);
                    }

                    datagram.AsSpan(0, Math.Min(datagram.Length, buffer.Length)).CopyTo(buffer);
                    return datagram.Length;
                }

                if (_state == Closed)
                {
                    throw new IOException(_closeReason is { } reason ? $"The handshake was ended: {reason}." : "The DTLS transport closed during the handshake.");
                }

                arrivals = _arrivals;
            }

            // A wake-up left from a datagram already taken only sends the loop round once more.
            if (arrivals is null || !arrivals.Wait(wait))
            {
                return -1;
            }
        }
    }

    /// <summary>
    /// A client's check of each HelloVerifyRequest. The server answers a ClientHello whose cookie it cannot verify with
    /// a new HelloVerifyRequest (RFC 6347 section 4.2.1), as one that restarted does when its first incarnation gave the
    /// cookie. BouncyCastle takes that second HelloVerifyRequest for a retransmission of the first (its message_seq is
    /// the same, 0) and goes on sending the refused cookie until the handshake times out; a second HelloVerifyRequest
    /// with another cookie ends this handshake instead, and the engine starts a new one. One with the same cookie is a
    /// duplicate (the server answered a retransmitted ClientHello) and passes.
    /// </summary>
    private void CheckCookie(byte[] datagram)
    {
        if (!DtlsRecords.TryReadHelloVerifyCookie(datagram, out ReadOnlySpan<byte> cookie))
        {
            return;
        }

        if (_cookie is null)
        {
            _cookie = cookie.ToArray();
        }
        else if (!cookie.SequenceEqual(_cookie))
        {
            throw new CookieRefusedException($"{_peerName} at {Remote} answered the ClientHello with its cookie by a HelloVerifyRequest for another cookie: it no longer accepts the first (it restarted, or its cookie secret changed twice).");
        }
    }

    /// <summary>
    /// Lets go of our Finished once the peer can no longer be retransmitting its last flight (RFC 6347 section 4.2.4:
    /// 2 MSL, 240 s, the time BouncyCastle would keep our last flight for), when no application record came to prove
    /// it had ours. Call holding <see cref="ReceiveGate"/>.
    /// </summary>
    public void ForgetLastFlight() => _lastFinished = null;

    /// <summary>
    /// True when a sweep has work in this session: <see cref="ForgetLastFlight"/> (it keeps our Finished) or
    /// <see cref="Rest"/> (it holds or used a cipher since its last rest). Read without the session's locks, so a sweep
    /// of a fleet takes none for the sessions asleep since the last one.
    /// </summary>
    public bool MaySweep => _lastFinished is not null || (_protection is { } protection && protection.IsAwake);

    /// <summary>
    /// Lets a quiet session hold no expanded ciphers until its next record (<see cref="RecordProtection.Rest"/>). Call
    /// holding <see cref="ReceiveGate"/>.
    /// </summary>
    public void Rest()
    {
        if (_state == Established && _protection is { } protection)
        {
            protection.Rest();
        }
    }

    /// <summary>
    /// Called by the cipher of the session's first epoch (<see cref="WatchedCipher"/>) for each record it encrypts. While
    /// the handshake runs that is our Finished, the one handshake message under the new keys (RFC 5246 section 7.4.9):
    /// it is kept to answer the peer's retransmitted last flight after the hand-over.
    /// </summary>
    /// <param name="contentType">The record's content type.</param>
    /// <param name="plaintext">The record's plaintext.</param>
    public void NoteEncrypted(short contentType, ReadOnlySpan<byte> plaintext)
    {
        if (contentType == RecordProtection.Handshake && _state == Handshaking)
        {
            _lastFinished = plaintext.ToArray();
        }
    }

    /// <summary>Keeps the highest sequence number BouncyCastle has written in each epoch, where our own records go on from.</summary>
    private void NoteWritten(ReadOnlySpan<byte> datagram)
    {
        // BouncyCastle writes one record per datagram; the walk covers several all the same. A record with a Connection
        // ID has a header whose length this does not know, so the walk stops after reading its sequence number.
        for (ReadOnlySpan<byte> rest = datagram; rest.Length >= 13;)
        {
            // BouncyCastle writes from the handshake thread, then from senders when the session stays on its layer.
            int epoch = RecordProtection.ReadEpoch(rest);
            if (epoch == 1)
            {
                RaiseTo(ref _written, RecordProtection.ReadSequence(rest));
            }
            else if (epoch == 0)
            {
                RaiseTo(ref _writtenInTheClear, RecordProtection.ReadSequence(rest));
            }

            if (rest[0] == 25)
            {
                break;
            }

            rest = rest[Math.Min(rest.Length, 13 + System.Buffers.Binary.BinaryPrimitives.ReadUInt16BigEndian(rest[11..]))..];
        }
    }

    /// <summary>
    /// Answers the peer's retransmitted last flight, which tells that our ChangeCipherSpec and Finished were lost, with
    /// both again (RFC 6347 section 4.2.4), under new record sequence numbers, as every retransmitted record has. Each
    /// goes in a datagram of its own, as BouncyCastle sends them: its record layer drops the rest of a datagram whose
    /// first record is of an epoch it has left, so a client that has our ChangeCipherSpec would never read a Finished
    /// after a second one. Only a record that authenticated under the session's keys asks for this, so no one else can
    /// make the server send.
    /// </summary>
    private void ResendLastFlight(RecordProtection protection, byte[] finished)
    {
        // ChangeCipherSpec (RFC 5246 section 7.1) in epoch 0, in the clear.
        Span<byte> changeCipherSpec = stackalloc byte[14];
        DtlsRecords.WriteClearHeader(changeCipherSpec, RecordProtection.ChangeCipherSpec, Interlocked.Increment(ref _writtenInTheClear), 1);
        changeCipherSpec[13] = 1;
        SendToNetwork(changeCipherSpec);

        Span<byte> record = stackalloc byte[256];
        int length = protection.Protect(RecordProtection.Handshake, finished, record);
        if (length > 0)
        {
            SendToNetwork(record[..length]);
        }
    }

    private void ReceiveProtected(RecordProtection protection, ReadOnlySpan<byte> datagram, Span<byte> plaintext, PlaintextReceived deliver, IPEndPoint source, long now)
    {
        // RFC 6347 section 4.1.1: several records may share a datagram; one that does not authenticate is dropped alone.
        for (ReadOnlySpan<byte> rest = datagram; rest.Length > 0 && _state == Established;)
        {
            int length = protection.RecordLength(rest);
            if (length < 0)
            {
                break;
            }

            ReadOnlySpan<byte> record = rest[..length];
            rest = rest[length..];
            bool authentic;
            int received;
            byte type;
            bool newest;
            try
            {
                authentic = protection.TryUnprotect(record, plaintext, out received, out type, out newest);
            }
            catch (ObjectDisposedException)
            {
                // Closed by another thread meanwhile.
                break;
            }

            if (!authentic)
            {
                continue;
            }

            Volatile.Write(ref _lastReceived, now);
            if (newest && !source.Equals(Remote))
            {
                // RFC 9146 section 6: a newer record with our Connection ID from elsewhere moves the peer.
                _onMoved?.Invoke(this, source);
            }

            if (type == RecordProtection.ApplicationData)
            {
                // The peer's first application record proves it has our Finished (RFC 6347 section 4.2.4).
                if (_lastFinished is not null)
                {
                    _lastFinished = null;
                }

                deliver(this, plaintext[..received]);
            }
            else if (type == RecordProtection.Handshake && _lastFinished is { } finished)
            {
                // Its Finished again, under a new sequence number: the peer retransmits its last flight, ours was lost.
                ResendLastFlight(protection, finished);
            }
            else if (type == RecordProtection.Alert && received == 2 && (plaintext[0] == 2 || plaintext[1] == 0))
            {
                // RFC 5246 section 7.2: a fatal alert or close_notify ends the association.
                MarkClosed(plaintext[1] == 0 ? ClosedByPeer : $"{_peerName} sent a fatal alert, {AlertDescription.GetText(plaintext[1])}", plaintext[1] == 0 ? SessionEnd.PeerClosed : SessionEnd.PeerAlert);
            }
        }

        if (_state == Closed)
        {
            _onClosed(this);
        }
    }

    private bool SendProtected(RecordProtection protection, byte contentType, ReadOnlySpan<byte> plaintext)
    {
        if (plaintext.Length + protection.WriteOverhead > _datagramLimit)
        {
            return false;
        }

        byte[]? rented = null;
        Span<byte> record = _datagramLimit <= 2048 ? stackalloc byte[2048] : (rented = System.Buffers.ArrayPool<byte>.Shared.Rent(_datagramLimit));
        try
        {
            int length = protection.Protect(contentType, plaintext, record);
            if (length < 0)
            {
                return false;
            }

            SendToNetwork(record[..length]);
            return true;
        }
        catch (Exception e) when (e is IOException or ObjectDisposedException)
        {
            // The socket closed, or the session did while this was written; the caller reports it, outside its locks.
            MarkClosed("the socket closed", SessionEnd.Failed);
            return false;
        }
        finally
        {
            if (rented is not null)
            {
                System.Buffers.ArrayPool<byte>.Shared.Return(rented);
            }
        }
    }

    private void SendFromBouncyCastle(ReadOnlySpan<byte> datagram)
    {
        NoteWritten(datagram);

        // A fatal alert in the clear, ending the handshake: BouncyCastle's choice corrected (CorrectAlert).
        if (_finishedAuthenticated && datagram.Length == 15 && datagram[0] == RecordProtection.Alert && datagram[13] == 2 && CorrectAlert(datagram[14]) is var corrected && corrected != datagram[14])
        {
            Span<byte> alert = stackalloc byte[15];
            datagram.CopyTo(alert);
            alert[14] = (byte)corrected;
            SendToNetwork(alert);
            return;
        }

        SendToNetwork(datagram);
    }

    private void SendToNetwork(ReadOnlySpan<byte> datagram)
    {
        try
        {
            _network.Send(datagram, Remote);
        }
        catch (System.Net.Sockets.SocketException)
        {
            // As for plain UDP: a datagram the network refused is lost, and DTLS or CoAP retransmits.
        }
        catch (ObjectDisposedException)
        {
            throw new IOException("The DTLS transport is closed.");
        }
    }
}

/// <summary>Gets one record's plaintext from <paramref name="session"/>, valid only during the call.</summary>
internal delegate void PlaintextReceived(DtlsSession session, ReadOnlySpan<byte> plaintext);
