using System.Diagnostics;
using System.Diagnostics.Metrics;
using CoapNet.Channels;
using CoapNet.Messages;

namespace CoapNet.Diagnostics;

/// <summary>
/// The names under which CoapNet reports metrics (a <see cref="Meter"/>) and traces (an
/// <see cref="ActivitySource"/>), for OpenTelemetry (<c>AddMeter(CoapInstrumentation.MeterName)</c>,
/// <c>AddSource(CoapInstrumentation.ActivitySourceName)</c>) or a <see cref="MeterListener"/>.
/// Nothing is measured or traced unless something listens.
/// </summary>
/// <remarks>
/// Tags: <c>coap.method</c> ("GET"), <c>coap.response.code</c> ("2.05"), <c>coap.route</c> (the
/// route template, or <see cref="UnmatchedRoute"/>), <c>url.scheme</c> ("coap", "coap+tcp"), <c>error.type</c> (the exception's type
/// name when a client request fails without a response). Activities also carry
/// <c>url.path</c>, <c>network.transport</c> ("udp", "tcp"), <c>network.peer.address</c> and
/// <c>network.peer.port</c>, after the OpenTelemetry semantic conventions where they exist.
/// </remarks>
public static partial class CoapInstrumentation
{
    /// <summary>The name of the meter and of the activity source: "CoapNet".</summary>
    public const string MeterName = "CoapNet";

    /// <summary>The name of the activity source: "CoapNet". One activity per server request (kind Server) and per client request (kind Client).</summary>
    public const string ActivitySourceName = "CoapNet";

    /// <summary>Counter: requests a server answered, tagged with method, response code, route and scheme.</summary>
    public const string ServerRequests = "coap.server.requests";

    /// <summary>Histogram (seconds, with <see cref="DurationBuckets"/> as advice): from a request's arrival at the server to its answer, tagged like <see cref="ServerRequests"/>.</summary>
    public const string ServerRequestDuration = "coap.server.request.duration";

    /// <summary>Counter: requests a server shed with 5.03 or silence because it was full or stopping (RFC 7252 section 5.9.3.4).</summary>
    public const string ServerRequestsShed = "coap.server.requests.shed";

    /// <summary>
    /// Counter: requests refused because their peer's identity (its address when unsecured) went past its request rate
    /// (<see cref="RateLimiting.CoapIdentityRateLimitOptions"/>), tagged with scheme.
    /// </summary>
    public const string ServerRequestsLimited = "coap.server.requests.limited";

    /// <summary>Counter: requests a client completed, tagged with method, response code (or error type) and scheme.</summary>
    public const string ClientRequests = "coap.client.requests";

    /// <summary>Histogram (seconds, with <see cref="DurationBuckets"/> as advice): from a client request's start to its response or failure, tagged like <see cref="ClientRequests"/>.</summary>
    public const string ClientRequestDuration = "coap.client.request.duration";

    /// <summary>UpDownCounter: client requests awaiting a response.</summary>
    public const string ActiveExchanges = "coap.client.exchanges.active";

    /// <summary>Counter: retransmissions of confirmable messages (RFC 7252 section 4.2).</summary>
    public const string Retransmissions = "coap.retransmissions";

    /// <summary>
    /// Gauge (seconds): the retransmission timeout a retransmission policy that learns round trips (CoCoA,
    /// <see cref="Messaging.Retransmission.CoapRetransmissionPolicy.Cocoa"/>) currently holds for each peer, one measurement
    /// per peer tagged <c>network.peer.address</c>, <c>network.peer.port</c> and <c>url.scheme</c>. Its series are bounded
    /// by the endpoints' <see cref="Messaging.CoapEndpointOptions.MaxPeers"/>; the RFC 7252 default keeps no estimate and
    /// reports nothing.
    /// </summary>
    public const string PeerRetransmissionTimeout = "coap.peer.rto";

    /// <summary>Counter: duplicate messages recognized and answered from the deduplication cache (RFC 7252 section 4.5).</summary>
    public const string Duplicates = "coap.duplicates";

    /// <summary>Counter: malformed datagrams dropped or reset, and connections aborted for a malformed frame, tagged with scheme.</summary>
    public const string MalformedMessages = "coap.malformed";

    /// <summary>
    /// The <c>coap.route</c> tag of a server request that reached no route ("(unmatched)"): a 4.04, or a request refused
    /// before routing (4.02 for a critical option, 4.00...). A constant, so the tag's values stay few.
    /// </summary>
    public const string UnmatchedRoute = "(unmatched)";

    /// <summary>
    /// The bucket boundaries, in seconds, that the duration histograms advise (OpenTelemetry uses them unless a view says
    /// otherwise): from 0.1 ms, a request answered on a loopback, to 100 s, past MAX_TRANSMIT_WAIT (93 s, RFC 7252
    /// section 4.8.2), which a confirmable exchange may take with every retransmission. The SDK's default boundaries are
    /// meant for milliseconds (0, 5, 10, 25, ... 10000) and would put every CoAP duration in seconds in the first bucket.
    /// </summary>
    public static IReadOnlyList<double> DurationBuckets { get; } =
        [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100];

    internal static readonly Meter Meter = new(MeterName);
    internal static readonly ActivitySource Source = new(ActivitySourceName);

    internal static readonly Counter<long> ServerRequestCounter = Meter.CreateCounter<long>(ServerRequests, "{request}", "CoAP requests answered by the server");
    internal static readonly Histogram<double> ServerDuration = Meter.CreateHistogram(ServerRequestDuration, "s", "Time from a request's arrival to its answer", tags: null, new InstrumentAdvice<double> { HistogramBucketBoundaries = DurationBuckets });
    internal static readonly Counter<long> ShedCounter = Meter.CreateCounter<long>(ServerRequestsShed, "{request}", "Requests shed by a full or stopping server");
    internal static readonly Counter<long> LimitedCounter = Meter.CreateCounter<long>(ServerRequestsLimited, "{request}", "Requests refused for their identity's request rate");
    internal static readonly Counter<long> ClientRequestCounter = Meter.CreateCounter<long>(ClientRequests, "{request}", "CoAP requests completed by the client");
    internal static readonly Histogram<double> ClientDuration = Meter.CreateHistogram(ClientRequestDuration, "s", "Time from a client request's start to its end", tags: null, new InstrumentAdvice<double> { HistogramBucketBoundaries = DurationBuckets });
    internal static readonly UpDownCounter<long> ActiveExchangeCounter = Meter.CreateUpDownCounter<long>(ActiveExchanges, "{exchange}", "Client requests awaiting a response");
    internal static readonly Counter<long> RetransmissionCounter = Meter.CreateCounter<long>(Retransmissions, "{message}", "Retransmissions of confirmable messages");
    internal static readonly Counter<long> DuplicateCounter = Meter.CreateCounter<long>(Duplicates, "{message}", "Duplicates answered from the deduplication cache");
    internal static readonly Counter<long> MalformedCounter = Meter.CreateCounter<long>(MalformedMessages, "{message}", "Malformed input dropped, reset or aborted");
    internal static readonly ObservableGauge<double> PeerTimeoutGauge = Meter.CreateObservableGauge(PeerRetransmissionTimeout, ObservePeerTimeouts, "s", "The retransmission timeout estimate held for each peer");

    // Tag values as interned strings: recording a measurement allocates nothing per request.
    private static readonly string?[] CodeNames = new string?[256];

    /// <summary>The code as "2.05", cached.</summary>
    internal static string CodeName(CoapCode code)
        => CodeNames[code.Value] ??= $"{code.Class}.{code.Detail:D2}";

    /// <summary>The method name ("GET") of a request code, cached.</summary>
    internal static string MethodName(CoapCode code) => code.Value switch
    {
        1 => "GET",
        2 => "POST",
        3 => "PUT",
        4 => "DELETE",
        5 => "FETCH",
        6 => "PATCH",
        7 => "iPATCH",
        _ => CodeName(code),
    };

    /// <summary>Starts an activity for a request, or returns null when nobody listens.</summary>
    internal static Activity? StartRequestActivity(CoapMessage request, CoapPeer peer, ActivityKind kind)
    {
        if (!Source.HasListeners())
        {
            return null;
        }

        string method = MethodName(request.Code);
        Activity? activity = Source.StartActivity("CoAP " + method, kind);
        if (activity is { IsAllDataRequested: true })
        {
            activity.SetTag("coap.method", method);
            activity.SetTag("url.scheme", peer.Scheme);
            activity.SetTag("url.path", request.UriPath);
            activity.SetTag("network.transport", peer.Scheme.EndsWith("+tcp", StringComparison.Ordinal) || peer.Scheme.EndsWith("+ws", StringComparison.Ordinal) ? "tcp" : "udp");
            activity.SetTag("network.peer.address", peer.EndPoint.Address.ToString());
            activity.SetTag("network.peer.port", peer.EndPoint.Port);
        }

        return activity;
    }
}
