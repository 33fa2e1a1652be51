using System.Net;
using CoapNet.Messaging;
using Microsoft.Extensions.Logging;

namespace CoapNet.Server;

/// <summary>Settings of a <see cref="CoapServer"/>: where it listens, its limits, its clock and its logging.</summary>
public sealed class CoapServerOptions
{
    /// <summary>
    /// The local endpoints to listen on over UDP, one socket each (IPv4 and IPv6 alike, several ports
    /// allowed). Default: [::]:5683, dual-stack where the OS allows, when no other endpoint or
    /// transport of any kind is configured.
    /// </summary>
    public IList<IPEndPoint> Endpoints { get; init; } = [];

    /// <summary>
    /// The local endpoints to listen on for CoAP over TCP (RFC 8323), one listener each. Default: none.
    /// The usual choice is the same address and port as UDP, such as [::]:5683.
    /// </summary>
    public IList<IPEndPoint> TcpEndpoints { get; init; } = [];

    /// <summary>
    /// Connection listeners to serve on, ready-made (TCP set up your own way, an in-memory pipe in
    /// tests); the server owns them from <see cref="CoapServer.Start"/> on and disposes them.
    /// </summary>
    public IList<CoapNet.Transports.IConnectionListener> ConnectionListeners { get; init; } = [];

    /// <summary>The limits of every connection (RFC 8323): count, message size, timeouts, requests in flight; null for the defaults.</summary>
    public CoapConnectionOptions? Connections { get; init; }

    /// <summary>
    /// Datagram transports to serve on, ready-made (an in-memory network in tests, a socket set up
    /// your own way); the server owns them from <see cref="CoapServer.Start"/> on and disposes them.
    /// </summary>
    public IList<CoapNet.Transports.IDatagramTransport> DatagramTransports { get; init; } = [];

    /// <summary>The RFC 7252 section 4.8 parameters (default: the RFC's).</summary>
    public CoapTransmissionParameters TransmissionParameters { get; init; } = CoapTransmissionParameters.Default;

    /// <summary>How confirmable responses and notifications are retransmitted per peer (default <see cref="CoapNet.Messaging.Retransmission.CoapRetransmissionPolicy.Rfc7252"/>); see <see cref="CoapEndpointOptions.RetransmissionPolicy"/>.</summary>
    public CoapNet.Messaging.Retransmission.CoapRetransmissionPolicy RetransmissionPolicy { get; init; } = CoapNet.Messaging.Retransmission.CoapRetransmissionPolicy.Rfc7252;

    /// <summary>The clock for every timer; inject a fake one to test in virtual time.</summary>
    public TimeProvider TimeProvider { get; init; } = TimeProvider.System;

    /// <summary>Where log lines go; no-op by default.</summary>
    public ILoggerFactory? LoggerFactory { get; init; }

    /// <summary>
    /// How many requests may wait in or be processed by the pipeline at once (default 1024). Past it
    /// the server sheds load: a CON request gets 5.03 Service Unavailable with Max-Age
    /// <see cref="LoadSheddingMaxAge"/>, a NON request is dropped (RFC 7252 section 5.9.3.4).
    /// </summary>
    public int MaxPendingRequests { get; init; } = 1024;

    /// <summary>
    /// How many calls of one synchronous handler run at once (default: the number of processors). They
    /// may block their thread, so each route's synchronous handler runs on threads of its own (started as
    /// needed, ended when idle), never on the thread pool's: a route whose handler blocks queues only its
    /// own requests, and those that wait past <see cref="SeparateResponseDelay"/> get an empty ACK and a
    /// separate response. Asynchronous handlers are bounded only by <see cref="MaxPendingRequests"/>,
    /// since one that awaits holds no thread.
    /// </summary>
    public int MaxDegreeOfParallelism { get; init; } = Environment.ProcessorCount;

    /// <summary>The Max-Age of a 5.03 sent when shedding load: when the client may try again (default 5 s).</summary>
    public TimeSpan LoadSheddingMaxAge { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// How long a confirmable request may wait for its handler before the server acknowledges it with
    /// an empty ACK and sends the response separately (RFC 7252 section 5.2.2). Default 100 ms.
    /// </summary>
    /// <remarks>
    /// A client that sends one confirmable request at a time (NSTART = 1, RFC 7252 section 4.7; libcoap and aiocoap
    /// do) sends its next request only when this one is acknowledged, so ten concurrent requests to a 1.5 s handler
    /// take about ten times this delay plus 1.5 s: 2.5 s at 100 ms, 12 s at 1 s. A shorter delay costs two datagrams
    /// more (the empty ACK, and the client's ACK of the separate response) for each request that is answered later
    /// than it: none at 100 ms for a saturated server with fast handlers, a few per thousand for handlers that spend
    /// 200 µs of CPU with a thousand requests queued (benchmarks/RESULTS.md, the separate-ack scenario). It stays far
    /// below ACK_TIMEOUT (2 s), so a client never retransmits for a slow handler. aiocoap acknowledges after 100 ms too.
    /// </remarks>
    public TimeSpan SeparateResponseDelay { get; init; } = TimeSpan.FromMilliseconds(100);

    /// <summary>The largest message the server sends (default 1152 bytes, RFC 7252 section 4.6); a larger response becomes 5.00 with a diagnostic.</summary>
    public int MaxMessageSize { get; init; } = 1152;

    /// <summary>
    /// How many received messages the deduplication cache of each endpoint remembers (default 16384). RFC 7252
    /// section 4.5 asks for EXCHANGE_LIFETIME (247 s); at a sustained rate R the cache covers only
    /// DeduplicationCapacity / R seconds (0.18 s at 90,000 requests a second), and a CON retransmitted after an
    /// evicted entry runs its handler again. Size it to the rate times the span you need covered (a
    /// retransmission comes within MAX_TRANSMIT_SPAN, 45 s), at about 170 bytes an entry, its stored reply included.
    /// </summary>
    public int DeduplicationCapacity { get; init; } = 16384;

    /// <summary>
    /// The kernel receive buffer of each UDP socket, in bytes (default 1 MiB), so a burst of requests
    /// waits in the kernel instead of being dropped there. Linux caps what an unprivileged process gets
    /// at net.core.rmem_max (often 208 KiB, doubled for bookkeeping); null keeps the OS default.
    /// </summary>
    public int? SocketReceiveBufferSize { get; init; } = 1024 * 1024;

    /// <summary>The kernel send buffer of each UDP socket, in bytes (default null: the OS default; capped by net.core.wmem_max).</summary>
    public int? SocketSendBufferSize { get; init; }

    /// <summary>At most this many warnings per second for malformed datagrams, and as many for aborted connections, per endpoint (default 10); the rest are counted in the next line.</summary>
    public int MalformedLogLinesPerSecond { get; init; } = 10;

    /// <summary>The most options a received message may carry (default 1024); see <see cref="CoapEndpointOptions.MaxOptionCount"/>.</summary>
    public int MaxOptionCount { get; init; } = Serialization.CoapSerializerOptions.DefaultMaxOptionCount;

    /// <summary>Block-wise transfer (RFC 7959): the block size for large responses and the bounds on the bodies kept for follow-up blocks.</summary>
    public CoapNet.Blockwise.BlockwiseOptions Blockwise { get; init; } = new();

    /// <summary>
    /// The Echo option (RFC 9175 section 2): require fresh unsafe requests and mitigate amplification over UDP, both off
    /// by default; see <see cref="CoapNet.Freshness.EchoOptions"/>.
    /// </summary>
    public CoapNet.Freshness.EchoOptions Echo { get; init; } = new();

    /// <summary>Observe (RFC 7641): the bounds on observations and the type of notifications.</summary>
    public CoapNet.Observe.ObserveOptions Observe { get; init; } = new();

    /// <summary>How many peers each endpoint keeps state for (default 10000).</summary>
    public int MaxPeers { get; init; } = 10000;

    /// <summary>
    /// Where the server's own work runs, for tests inside the library: null (always, outside them) runs the dispatch
    /// block on the thread pool and each route's blocking lane on threads of its own (<see cref="BlockingHandlerScheduler"/>).
    /// Set, it runs the dispatch block, every blocking lane and the continuation of an awaited async handler, so a test
    /// with a scheduler that runs its queue on demand and the in-memory network serves requests in virtual time, on its
    /// own thread, with no wall-clock wait.
    /// </summary>
    internal TaskScheduler? Scheduler { get; init; }

    internal void Validate()
    {
        ArgumentNullException.ThrowIfNull(Endpoints);
        ArgumentNullException.ThrowIfNull(DatagramTransports);
        ArgumentNullException.ThrowIfNull(TcpEndpoints);
        if (SocketReceiveBufferSize < 1024 || SocketSendBufferSize < 1024)
        {
            throw new ArgumentException("SocketReceiveBufferSize and SocketSendBufferSize must be at least 1024 bytes (or null for the OS default).", nameof(SocketReceiveBufferSize));
        }

        ArgumentNullException.ThrowIfNull(ConnectionListeners);
        ArgumentNullException.ThrowIfNull(Observe);
        Observe.Validate();
        ArgumentNullException.ThrowIfNull(Echo);
        Echo.Validate();
        ArgumentNullException.ThrowIfNull(TransmissionParameters);
        ArgumentNullException.ThrowIfNull(RetransmissionPolicy);
        ArgumentNullException.ThrowIfNull(TimeProvider);
        if (MaxPendingRequests < 1)
        {
            throw new ArgumentException("MaxPendingRequests must be at least 1.", nameof(MaxPendingRequests));
        }

        if (MaxDegreeOfParallelism < 1)
        {
            throw new ArgumentException("MaxDegreeOfParallelism must be at least 1.", nameof(MaxDegreeOfParallelism));
        }

        if (SeparateResponseDelay <= TimeSpan.Zero)
        {
            throw new ArgumentException("SeparateResponseDelay must be positive.", nameof(SeparateResponseDelay));
        }

        if (LoadSheddingMaxAge < TimeSpan.Zero || LoadSheddingMaxAge.TotalSeconds > uint.MaxValue)
        {
            throw new ArgumentException("LoadSheddingMaxAge must be between 0 and 2^32 - 1 seconds.", nameof(LoadSheddingMaxAge));
        }
    }

    /// <summary>Makes each endpoint's stages (null: the default ones); see <see cref="CoapEndpointOptions.Stages"/>.</summary>
    internal Func<StageContext, IReadOnlyList<CoapStage>>? Stages { get; init; }

    /// <summary>The options of each endpoint, whose stages <paramref name="stages"/> makes (with the server's routing and observers).</summary>
    internal CoapEndpointOptions ToEndpointOptions(Func<StageContext, IReadOnlyList<CoapStage>> stages) => new()
    {
        Stages = stages,
        TransmissionParameters = TransmissionParameters,
        RetransmissionPolicy = RetransmissionPolicy,
        TimeProvider = TimeProvider,
        LoggerFactory = LoggerFactory,
        DeduplicationCapacity = DeduplicationCapacity,
        MaxPeers = MaxPeers,
        MaxMessageSize = MaxMessageSize,
        SeparateResponseDelay = SeparateResponseDelay,
        MalformedLogLinesPerSecond = MalformedLogLinesPerSecond,
        MaxOptionCount = MaxOptionCount,
        Blockwise = Blockwise,
        Echo = Echo,
    };
}
