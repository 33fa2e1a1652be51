using System.Diagnostics.Metrics;
using System.Net;

namespace CoapNet.Diagnostics;

// What the secure transports report: handshakes by outcome, connections refused before CoAP, and what was evicted to
// make room. Counted per handshake or connection, never per message.
public static partial class CoapInstrumentation
{
    /// <summary>
    /// Counter: DTLS handshakes a server (or client) ended, tagged <c>coap.handshake.outcome</c> (<c>established</c>,
    /// <c>failed</c>, <c>timed_out</c>, <c>stalled</c>, <c>evicted</c>, <c>refused</c>) and, unless established, <c>error.type</c>:
    /// the TLS alert sent or received (<c>bad_record_mac</c>, <c>unknown_psk_identity</c>, ...), <c>cookie</c> for a ClientHello whose HelloVerifyRequest cookie failed (RFC 6347 section 4.2.1), or the bound that
    /// refused (<c>session_bound</c>, <c>handshake_bound</c>, <c>address_bound</c>).
    /// </summary>
    public const string DtlsHandshakes = "coap.dtls.handshakes";

    /// <summary>
    /// Counter: connections a coaps+tcp listener closed before handing them up, tagged <c>error.type</c>:
    /// <c>handshake_bound</c> or <c>address_bound</c> (refused at a bound), <c>evicted</c> (a stalled handshake closed
    /// for a newcomer), <c>handshake_timeout</c>, <c>handshake_failed</c>.
    /// </summary>
    public const string TlsConnectionsRefused = "coap.tls.connections.refused";

    /// <summary>
    /// Counter: sessions and connections closed to admit a new peer at a bound, tagged <c>url.scheme</c>: DTLS sessions
    /// idle past their threshold at MaxSessions (<c>coaps</c>), the idlest TCP and TLS connections at MaxConnections or
    /// the per-address bound (<c>coap+tcp</c>, <c>coaps+tcp</c>).
    /// </summary>
    public const string SessionsEvicted = "coap.sessions.evicted";

    /// <summary>
    /// Observable gauge: the sessions a secure transport holds now, one measurement per transport tagged <c>url.scheme</c>
    /// (<c>coaps</c>: established DTLS sessions) and <c>server.port</c> (its local port, which tells a server's endpoints
    /// apart). Read only when a listener collects.
    /// </summary>
    public const string Sessions = "coap.sessions";

    /// <summary>
    /// Counter: established sessions a server's secure transport held that ended, tagged <c>url.scheme</c> and
    /// <c>coap.session.close_reason</c>: <c>idle_timeout</c> (nothing heard for the idle timeout), <c>evicted</c> (idle,
    /// closed for a newcomer at the bound), <c>replaced</c> (the peer started a new handshake from the same address),
    /// <c>peer_closed</c> (its close_notify), <c>peer_alert</c> (its fatal alert), <c>failed</c> (a record or a send
    /// failed), <c>shutdown</c> (the transport was disposed).
    /// </summary>
    public const string SessionsClosed = "coap.sessions.closed";

    /// <summary>The <c>coap.handshake.outcome</c> tag's name.</summary>
    internal const string OutcomeTag = "coap.handshake.outcome";

    internal static readonly Counter<long> DtlsHandshakeCounter = Meter.CreateCounter<long>(DtlsHandshakes, "{handshake}", "DTLS handshakes ended, by outcome");
    internal static readonly Counter<long> TlsRefusedCounter = Meter.CreateCounter<long>(TlsConnectionsRefused, "{connection}", "coaps+tcp connections closed before their TLS handshake completed");
    internal static readonly Counter<long> EvictedCounter = Meter.CreateCounter<long>(SessionsEvicted, "{session}", "Sessions and connections closed to admit a new peer");
    internal static readonly Counter<long> SessionsClosedCounter = Meter.CreateCounter<long>(SessionsClosed, "{session}", "Established sessions that ended, by reason");
    internal static readonly ObservableGauge<int> SessionGauge = Meter.CreateObservableGauge(Sessions, ObserveSessions, "{session}", "Sessions a secure transport holds");

    private static readonly List<SessionSource> SessionSources = [];

    /// <summary>
    /// Counts a DTLS handshake that ended with <paramref name="outcome"/>, and the alert or bound when there is one, on
    /// <see cref="DtlsHandshakes"/>. Public for the DTLS transport, which is a package of its own.
    /// </summary>
    /// <param name="outcome">The outcome tag's value (<c>established</c>, <c>failed</c>, ...).</param>
    /// <param name="errorType">The alert or bound, or null.</param>
    public static void RecordDtlsHandshake(string outcome, string? errorType)
    {
        if (!DtlsHandshakeCounter.Enabled)
        {
            return;
        }

        if (errorType is null)
        {
            DtlsHandshakeCounter.Add(1, new KeyValuePair<string, object?>(OutcomeTag, outcome));
        }
        else
        {
            DtlsHandshakeCounter.Add(1, new KeyValuePair<string, object?>(OutcomeTag, outcome), new KeyValuePair<string, object?>("error.type", errorType));
        }
    }

    /// <summary>Counts a coaps+tcp connection closed before its handshake completed, for <paramref name="errorType"/>.</summary>
    internal static void RecordTlsRefused(string errorType)
    {
        if (TlsRefusedCounter.Enabled)
        {
            TlsRefusedCounter.Add(1, new KeyValuePair<string, object?>("error.type", errorType));
        }
    }

    /// <summary>
    /// Counts a session or connection of <paramref name="scheme"/> evicted for a newcomer, on <see cref="SessionsEvicted"/>.
    /// Public so that a transport in a package of its own reports its evictions on the same counter.
    /// </summary>
    /// <param name="scheme">The endpoint's URI scheme ("coaps", ...).</param>
    public static void RecordEvicted(string scheme)
    {
        if (EvictedCounter.Enabled)
        {
            EvictedCounter.Add(1, new KeyValuePair<string, object?>("url.scheme", scheme));
        }
    }

    /// <summary>
    /// Reports <paramref name="sessions"/> on <see cref="Sessions"/>, tagged with <paramref name="scheme"/>, until the
    /// returned object is disposed. Public so that a transport in a package of its own reports its sessions on the same
    /// gauge; <paramref name="sessions"/> is called only when a listener collects, on the listener's thread.
    /// </summary>
    /// <param name="scheme">The transport's URI scheme ("coaps", ...).</param>
    /// <param name="sessions">Reads how many sessions the transport holds now.</param>
    /// <param name="localEndPoint">Reads where the transport listens (its port is the <c>server.port</c> tag).</param>
    /// <returns>Dispose it when the transport is disposed.</returns>
    public static IDisposable AddSessionSource(string scheme, Func<int> sessions, Func<IPEndPoint> localEndPoint)
    {
        ArgumentException.ThrowIfNullOrEmpty(scheme);
        ArgumentNullException.ThrowIfNull(sessions);
        ArgumentNullException.ThrowIfNull(localEndPoint);
        SessionSource source = new(scheme, sessions, localEndPoint);
        lock (SessionSources)
        {
            SessionSources.Add(source);
        }

        return source;
    }

    /// <summary>
    /// Counts an established session of <paramref name="scheme"/> that ended for <paramref name="reason"/> on
    /// <see cref="SessionsClosed"/>. Public so that a transport in a package of its own reports on the same counter.
    /// </summary>
    /// <param name="scheme">The transport's URI scheme ("coaps", ...).</param>
    /// <param name="reason">One of the reasons <see cref="SessionsClosed"/> lists.</param>
    public static void RecordSessionClosed(string scheme, string reason)
    {
        if (SessionsClosedCounter.Enabled)
        {
            SessionsClosedCounter.Add(1, new KeyValuePair<string, object?>("url.scheme", scheme), new KeyValuePair<string, object?>("coap.session.close_reason", reason));
        }
    }

    private static List<Measurement<int>> ObserveSessions()
    {
        SessionSource[] sources;
        lock (SessionSources)
        {
            sources = [.. SessionSources];
        }

        List<Measurement<int>> measurements = new(sources.Length);
        foreach (SessionSource source in sources)
        {
            measurements.Add(new Measurement<int>(source.Count(), new KeyValuePair<string, object?>("url.scheme", source.Scheme), new KeyValuePair<string, object?>("server.port", source.LocalEndPoint().Port)));
        }

        return measurements;
    }

    private sealed class SessionSource(string scheme, Func<int> count, Func<IPEndPoint> localEndPoint) : IDisposable
    {
        public string Scheme => scheme;

        public Func<int> Count => count;

        public Func<IPEndPoint> LocalEndPoint => localEndPoint;

        public void Dispose()
        {
            lock (SessionSources)
            {
                SessionSources.Remove(this);
            }
        }
    }
}
