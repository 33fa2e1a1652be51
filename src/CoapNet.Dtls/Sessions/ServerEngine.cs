using System.Collections.Concurrent;
using System.Net;
using CoapNet.Channels;
using CoapNet.Diagnostics;
using CoapNet.Dtls.Credentials;
using CoapNet.Dtls.Records;
using CoapNet.Transports;
using Microsoft.Extensions.Logging;
using Org.BouncyCastle.Tls;

namespace CoapNet.Dtls.Sessions;

/// <summary>
/// The server's engine: a verified ClientHello from an address starts a handshake; nothing else does. It keeps its
/// handshakes within their bounds (all of them, and per source), ends those that stall, gives a stalled one's place to
/// a newcomer, and at <see cref="DtlsOptions.MaxSessions"/> evicts an idle session or refuses with an alert.
/// </summary>
internal sealed partial class ServerEngine : DtlsEngine
{
    /// <summary>How many of the least recently active sessions one scan keeps as eviction candidates.</summary>
    private const int EvictionBatch = 64;

    /// <summary>The error.type of a ClientHello refused for its cookie.</summary>
    private const string CookieRefused = "cookie";

    private readonly DtlsServerOptions _options;
    private readonly DtlsCredentials _credentials;
    private readonly Func<DtlsSession, byte[]> _issueConnectionId;
    private readonly AdmissionTable<HandshakeSlot> _slots;
    private readonly ConcurrentDictionary<DtlsSession, HandshakeSlot> _slotOf = new(ReferenceEqualityComparer.Instance);
    private readonly Action<HandshakeSlot> _onStalled;
    private readonly object _evictionGate = new();
    private readonly Queue<DtlsSession> _evictionCandidates = new();
    private long _noCandidateUntil;
    private readonly IDisposable _sessionGauge;

    // With OneSessionPerIdentity, each identity's newest session; null without.
    private readonly ConcurrentDictionary<CoapPeerIdentity, DtlsSession>? _byIdentity;
    private CookieVerifier? _cookies;

    public ServerEngine(IDatagramTransport network, DtlsServerOptions options, DtlsCredentials credentials)
        : base(network, options)
    {
        _options = options;
        _credentials = credentials;
        _slots = new AdmissionTable<HandshakeSlot>(options.MaxConcurrentHandshakes, options.MaxConcurrentHandshakesPerAddress);
        _onStalled = Stalled;

        // One delegate for every session: a lambda per handshake would keep that handshake's ClientHello alive as
        // long as BouncyCastle keeps the server object.
        _issueConnectionId = IssueConnectionId;
        _sessionGauge = CoapInstrumentation.AddSessionSource(Channels.CoapPeer.DtlsScheme, () => SessionCount, () => Network.LocalEndPoint);
        _byIdentity = options.OneSessionPerIdentity ? new ConcurrentDictionary<CoapPeerIdentity, DtlsSession>() : null;
    }

    /// <summary>With <see cref="DtlsServerOptions.OneSessionPerIdentity"/>: the identity's older session, if any, is closed.</summary>
    protected override void OnEstablished(DtlsSession session)
    {
        if (_byIdentity is null || session.Context?.Identity is not { } identity)
        {
            return;
        }

        while (true)
        {
            if (!_byIdentity.TryGetValue(identity, out DtlsSession? older))
            {
                if (_byIdentity.TryAdd(identity, session))
                {
                    return;
                }
            }
            else if (_byIdentity.TryUpdate(identity, session, older))
            {
                // The device came back, from session.Remote; the session it left behind is of no use to anyone now.
                older.Close($"its identity made a new session from {session.Remote} (OneSessionPerIdentity)", SessionEnd.Replaced);
                return;
            }
        }
    }

    protected override void OnForgotten(DtlsSession session)
    {
        if (_byIdentity is not null && session.Context?.Identity is { } identity)
        {
            // Only while it is the identity's newest: a replaced session must not take its successor out of the map.
            _byIdentity.TryRemove(new KeyValuePair<CoapPeerIdentity, DtlsSession>(identity, session));
        }
    }

    protected override bool RestartsOnClientHello => true;

    // The server offers no session resumption, so every handshake is a full one and ours is its last flight.
    protected override bool SendsLastFlight => true;

    protected override bool ReportsSessions => true;

    protected override string PeerName => "the client";

    // OnUnacknowledged keeps the session: a client that lost it comes back with a ClientHello from the same address,
    // which replaces it (RFC 6347 section 4.2.8), and one that went away ages out, so an unacknowledged notification
    // alone does not end it.

    protected override void OnUnknownDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote)
    {
        // Only a ClientHello may begin an association; any other record from an unknown address is dropped unanswered.
        if (!DtlsRecords.IsClientHello(datagram))
        {
            return;
        }

        // RFC 6347 section 4.2.1: without a cookie proving the source, the answer is a HelloVerifyRequest and no state.
        // Made on the first ClientHello, with the crypto (once, whichever receive thread gets there first).
        CookieVerifier cookies = LazyInitializer.EnsureInitialized(ref _cookies, () => new CookieVerifier(Crypto, _options.TimeProvider, _options.CookieSecretLifetime, Network));
        DtlsRequest? request = cookies.Verify(datagram, remote);
        if (request is null)
        {
            // A first ClientHello, without a cookie, is how every handshake begins; one whose cookie failed is counted
            // (a forged source, a replay, a cookie older than two secrets).
            if (DtlsRecords.HasCookie(datagram))
            {
                CoapInstrumentation.RecordDtlsHandshake(HandshakeOutcome.Refused, CookieRefused);
            }

            return;
        }

        // A client that restarts from the address of its own session replaces it and needs no new place.
        bool replaces = TryGetSession(remote, out DtlsSession? existing) && existing!.IsEstablished;
        if (!replaces && SessionCount >= _options.MaxSessions && !TryEvictIdleSession())
        {
            RefuseFull(datagram, remote);
            return;
        }

        TryStartHandshake(remote, session =>
        {
            CoapDtlsServer server = new(CryptoFor(session), _options, _credentials, _options.UseConnectionId ? _issueConnectionId : null, session);
            DtlsServerProtocol protocol = new();
            Org.BouncyCastle.Tls.DtlsTransport transport = protocol.Accept(server, session, request);
            return (transport, server.PeerIdentity, server.Protection);
        }, out _);
    }

    /// <summary>
    /// A place among the handshakes, within <see cref="DtlsOptions.MaxConcurrentHandshakes"/> and, for the client's
    /// source, <see cref="DtlsServerOptions.MaxConcurrentHandshakesPerAddress"/>; at a bound the handshake of that
    /// scope stalled longest gives its place up. Refused (dropped unanswered: the client's retransmission of its
    /// ClientHello tries again, RFC 6347 section 4.2.4) when none has stalled.
    /// </summary>
    protected override bool TryAdmit(DtlsSession session)
    {
        HandshakeSlot slot = new(session, Time, _options.HandshakeStallTimeout, _onStalled);
        switch (_slots.TryAdmit(slot, Time.GetTimestamp(), out HandshakeSlot? evicted))
        {
            case AdmissionRefusal.SourceBound:
                Refuse(session.Remote, "address_bound", $"its address ({slot.Group}) has {_options.MaxConcurrentHandshakesPerAddress} handshakes under way and none has stalled (MaxConcurrentHandshakesPerAddress)");
                return false;
            case AdmissionRefusal.Full:
                Refuse(session.Remote, "handshake_bound", $"{_options.MaxConcurrentHandshakes} handshakes are under way and none has stalled (MaxConcurrentHandshakes)");
                return false;
        }

        _slotOf[session] = slot;
        slot.Watch();
        if (evicted is not null)
        {
            End(evicted, HandshakeOutcome.Evicted, $"evicted for a new client from {session.Remote}: it made no progress for {Time.GetElapsedTime(evicted.Session.LastProgress).TotalSeconds:0.#} s while every place was taken");
        }

        return true;
    }

    protected override void OnDisposing() => _sessionGauge.Dispose();

    protected override void OnHandshakeEnded(DtlsSession session)
    {
        if (_slotOf.TryRemove(session, out HandshakeSlot? slot))
        {
            slot.Dispose();
            _slots.Remove(slot);
        }
    }

    /// <summary>The stall timer of <paramref name="slot"/> found its peer silent for <see cref="DtlsServerOptions.HandshakeStallTimeout"/>.</summary>
    private void Stalled(HandshakeSlot slot)
        => End(slot, HandshakeOutcome.Stalled, $"stalled: {PeerName} answered none of our flights for {_options.HandshakeStallTimeout.TotalSeconds:0.#} s after the cookie exchange (HandshakeStallTimeout)");

    /// <summary>
    /// Ends a handshake under way: its thread wakes and fails, logs and counts it with <paramref name="outcome"/>; its
    /// place is free now. One that completed meanwhile is left alone (Establish and this take the same lock).
    /// </summary>
    private void End(HandshakeSlot slot, string outcome, string reason)
    {
        slot.Session.TryEndHandshake(outcome, reason);
        _slots.Remove(slot);
    }

    private void Refuse(IPEndPoint remote, string bound, string reason)
    {
        CoapInstrumentation.RecordDtlsHandshake(HandshakeOutcome.Refused, bound);
        LogRefused(remote, reason);
    }

    /// <summary>
    /// Refuses a verified ClientHello at <see cref="DtlsOptions.MaxSessions"/> with a fatal internal_error alert, so the
    /// client learns at once instead of retransmitting until its handshake times out.
    /// </summary>
    /// <remarks>
    /// RFC 5246 section 7.2.2 (DTLS 1.2 uses its alerts, RFC 6347 section 4.1): internal_error is "an internal error
    /// unrelated to the peer or the correctness of the protocol (such as a memory allocation failure)", which a server
    /// out of room for sessions is; no alert means "busy", and access_denied or handshake_failure would blame the
    /// client's credentials or parameters. It goes in the clear in epoch 0 with the ClientHello's record sequence number
    /// (as the server's answer to a ClientHello does, RFC 6347 section 4.2.1), to a source its cookie proved: one
    /// 15-byte datagram per verified ClientHello, smaller than what it answers.
    /// </remarks>
    private void RefuseFull(ReadOnlySpan<byte> clientHello, IPEndPoint remote)
    {
        Span<byte> alert = stackalloc byte[15];
        DtlsRecords.WriteClearHeader(alert, RecordProtection.Alert, RecordProtection.ReadSequence(clientHello), 2);
        alert[13] = 2;
        alert[14] = (byte)AlertDescription.internal_error;
        try
        {
            Network.Send(alert, remote);
        }
        catch (System.Net.Sockets.SocketException)
        {
            // As for any datagram: lost, and the client's handshake times out instead.
        }

        Refuse(remote, "session_bound", $"{_options.MaxSessions} sessions exist and none has been idle for {_options.SessionEvictionThreshold} (MaxSessions, SessionEvictionThreshold); alert {AlertDescription.GetText(AlertDescription.internal_error)} sent");
    }

    /// <summary>
    /// At <see cref="DtlsOptions.MaxSessions"/>: closes the least recently active session idle past
    /// <see cref="DtlsServerOptions.SessionEvictionThreshold"/>, with close_notify, as Scandium evicts a stale
    /// connection; false when none has been idle that long.
    /// </summary>
    /// <remarks>
    /// A scan of every session keeps the <see cref="EvictionBatch"/> least recently active as candidates, each checked
    /// again when its turn comes (it may have spoken since); a scan that finds none is not repeated for a second, so a
    /// flood of ClientHellos at the bound costs one scan a second, not one each.
    /// </remarks>
    private bool TryEvictIdleSession()
    {
        TimeSpan threshold = _options.SessionEvictionThreshold;
        if (threshold == Timeout.InfiniteTimeSpan)
        {
            return false;
        }

        DtlsSession? evicted = null;
        TimeSpan idle = TimeSpan.Zero;
        lock (_evictionGate)
        {
            long now = Time.GetTimestamp();
            if (_evictionCandidates.Count == 0)
            {
                if (now < _noCandidateUntil)
                {
                    return false;
                }

                FindCandidates(now, threshold);
            }

            while (_evictionCandidates.TryDequeue(out DtlsSession? candidate))
            {
                idle = Time.GetElapsedTime(candidate.LastReceived, now);
                if (candidate.IsEstablished && idle >= threshold)
                {
                    evicted = candidate;
                    break;
                }
            }

            if (evicted is null)
            {
                _noCandidateUntil = now + Time.TimestampFrequency;
                return false;
            }
        }

        // Closed outside the lock: closing tells the layer above the session is lost.
        evicted.Close($"it was evicted: idle for {idle.TotalSeconds:0} s (past SessionEvictionThreshold) when {_options.MaxSessions} sessions existed and a new client came (MaxSessions)", SessionEnd.Evicted);
        CoapInstrumentation.RecordEvicted(Channels.CoapPeer.DtlsScheme);
        if (MayLog(LogLevel.Information))
        {
            Log.Evicted(Logger, evicted.Remote, idle.TotalSeconds);
        }

        return true;
    }

    private void FindCandidates(long now, TimeSpan threshold)
    {
        // The batch's most recently active on top, so it is the one pushed out when an older one is found.
        PriorityQueue<DtlsSession, long> oldest = new(EvictionBatch + 1);
        foreach (DtlsSession session in Sessions)
        {
            long received = session.LastReceived;
            if (Time.GetElapsedTime(received, now) >= threshold)
            {
                oldest.Enqueue(session, -received);
                if (oldest.Count > EvictionBatch)
                {
                    oldest.Dequeue();
                }
            }
        }

        DtlsSession[] batch = new DtlsSession[oldest.Count];
        for (int i = batch.Length - 1; i >= 0; i--)
        {
            batch[i] = oldest.Dequeue();
        }

        foreach (DtlsSession session in batch)
        {
            _evictionCandidates.Enqueue(session);
        }
    }

    private static partial class Log
    {
        [LoggerMessage(20, LogLevel.Information, "Evicted the DTLS session with {Remote}, idle for {Idle:0} s, to admit a new client at MaxSessions")]
        public static partial void Evicted(ILogger logger, IPEndPoint remote, double idle);
    }
}
