using System.Diagnostics.Metrics;

namespace CoapNet.Diagnostics;

// What the secure transports report: handshakes by outcome, connections refused before CoAP, and what was evicted to
// make room. Counted per handshake or connection, never per message.
public static partial class CoapInstrumentation
{
    /// <summary>
    /// Counter: DTLS handshakes a server (or client) ended, tagged <c>coap.handshake.outcome</c> (<c>established</c>,
    /// <c>failed</c>, <c>timed_out</c>, <c>stalled</c>, <c>evicted</c>, <c>refused</c>) and, unless established, <c>error.type</c>:
    /// the TLS alert sent or received (<c>bad_record_mac</c>, <c>unknown_psk_identity</c>, ...), or the bound that
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

    /// <summary>The <c>coap.handshake.outcome</c> tag's name.</summary>
    internal const string OutcomeTag = "coap.handshake.outcome";

    internal static readonly Counter<long> DtlsHandshakeCounter = Meter.CreateCounter<long>(DtlsHandshakes, "{handshake}", "DTLS handshakes ended, by outcome");
    internal static readonly Counter<long> TlsRefusedCounter = Meter.CreateCounter<long>(TlsConnectionsRefused, "{connection}", "coaps+tcp connections closed before their TLS handshake completed");
    internal static readonly Counter<long> EvictedCounter = Meter.CreateCounter<long>(SessionsEvicted, "{session}", "Sessions and connections closed to admit a new peer");

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
}
