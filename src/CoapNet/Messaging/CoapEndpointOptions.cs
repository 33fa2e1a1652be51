using Microsoft.Extensions.Logging;

namespace CoapNet.Messaging;

/// <summary>
/// Settings of a <see cref="CoapEndpoint"/>: transmission parameters, limits, time and logging. The same type configures
/// the endpoints of a server (<see cref="Server.CoapServerOptions.Endpoint"/>) and of a client
/// (<see cref="Client.CoapClientOptions.Endpoint"/>), and Hosting binds it from the "Coap:Endpoint" and
/// "Coap:Client:Endpoint" configuration sections.
/// </summary>
/// <remarks>Set it before the endpoint, server or client is created; later changes are not guaranteed to be seen.</remarks>
public sealed class CoapEndpointOptions
{
    private List<StageRegistration>? _stages;

    /// <summary>The RFC 7252 section 4.8 parameters (default: the RFC's).</summary>
    public CoapTransmissionParameters TransmissionParameters { get; set; } = new();

    /// <summary>The clock for every timer (retransmission, lifetimes, timeouts); inject a fake one to test in virtual time.</summary>
    public TimeProvider TimeProvider { get; set; } = TimeProvider.System;

    /// <summary>Where log lines go: one debug line per message in and out, warnings for dropped malformed datagrams. No-op by default.</summary>
    public ILoggerFactory? LoggerFactory { get; set; }

    /// <summary>
    /// How many received messages the deduplication cache remembers (default 16384); when full, the oldest entry is
    /// evicted. RFC 7252 section 4.5 asks for EXCHANGE_LIFETIME (247 s); at a sustained rate R the cache covers only
    /// DeduplicationCapacity / R seconds (0.18 s at 90,000 requests a second), and a CON retransmitted after an
    /// evicted entry runs its handler again. Size it to the rate times the span you need covered (a retransmission
    /// comes within MAX_TRANSMIT_SPAN, 45 s), at about 170 bytes an entry, its stored reply included.
    /// </summary>
    public int DeduplicationCapacity { get; set; } = 16384;

    /// <summary>How many peers the endpoint keeps state for (default 10000); idle ones are dropped first.</summary>
    public int MaxPeers { get; set; } = 10000;

    /// <summary>
    /// The length of generated tokens, 4 to 8 bytes (default 8; RFC 9175 section 4.2 asks for enough randomness to be
    /// unguessable). A path in <see cref="Paths"/> may set another length for its peers.
    /// </summary>
    public int TokenLength { get; set; } = 8;

    /// <summary>
    /// What the endpoint knows of the network paths to some peers, for constrained links: each path's MTU (block-wise
    /// messages to its peers then never fragment) and token length (short tokens are a counter that never wraps). Empty by
    /// default: every peer is treated as one on the general Internet. See <see cref="CoapPathOptions"/>.
    /// </summary>
    public IList<CoapPathOptions> Paths { get; set; } = [];

    /// <summary>
    /// How long a client waits for a response that is not piggybacked: after the empty ACK of a
    /// separate response, or after sending a NON request. Default: MAX_TRANSMIT_WAIT (93 s).
    /// </summary>
    public TimeSpan? ResponseTimeout { get; set; }

    /// <summary>
    /// The largest message this endpoint sends, in bytes (default 1152, the size RFC 7252 section 4.6
    /// recommends when the path MTU is unknown). A larger request or response is refused with an
    /// <see cref="ArgumentException"/> rather than sent truncated or fragmented; block-wise transfer
    /// (RFC 7959) is how larger bodies will travel. Received messages may be up to 65507 bytes.
    /// </summary>
    public int MaxMessageSize { get; set; } = 1152;

    /// <summary>
    /// How long a confirmable request may wait for its handler before it is acknowledged with an empty ACK and its
    /// response goes out separately (RFC 7252 section 5.2.2). Default 100 ms; null leaves it to the handler
    /// (<see cref="CoapExchange.Accept"/>). Has no effect on reliable transports.
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
    public TimeSpan? SeparateResponseDelay { get; set; } = TimeSpan.FromMilliseconds(100);

    /// <summary>
    /// At most this many warnings per second for malformed datagrams (default 10), and as many again for
    /// aborted connections over a connection transport (RFC 8323 section 5.6); the rest are counted and
    /// summed up in the next line written, so a flood of bad input cannot flood the log.
    /// </summary>
    public int MalformedLogLinesPerSecond { get; set; } = 10;

    /// <summary>
    /// The most options a received message may carry (default <see cref="Serialization.CoapSerializerOptions.DefaultMaxOptionCount"/>,
    /// 1024). A datagram with more is malformed: a CON is answered with RST, anything else dropped (RFC 7252
    /// sections 4.2 and 4.3); a stream frame with more aborts its connection (RFC 8323 section 5.6).
    /// </summary>
    public int MaxOptionCount { get; set; } = Serialization.CoapSerializerOptions.DefaultMaxOptionCount;

    /// <summary>Block-wise transfer (RFC 7959): block size and the bounds on stored bodies; default <see cref="CoapNet.Blockwise.BlockwiseOptions"/>.</summary>
    public CoapNet.Blockwise.BlockwiseOptions Blockwise { get; set; } = new();

    /// <summary>
    /// The Echo option (RFC 9175 section 2) on a server: freshness of unsafe requests and amplification mitigation, both
    /// off by default; see <see cref="CoapNet.Freshness.EchoOptions"/>. A client answers Echo challenges whatever this says.
    /// </summary>
    public CoapNet.Freshness.EchoOptions Echo { get; set; } = new();

    /// <summary>
    /// How confirmable messages are retransmitted over a datagram transport: timeouts, back-off and NSTART per peer
    /// (default <see cref="Retransmission.CoapRetransmissionPolicy.Rfc7252"/>, the fixed back-off of RFC 7252 section 4.2
    /// with <see cref="TransmissionParameters"/>).
    /// </summary>
    public Retransmission.CoapRetransmissionPolicy RetransmissionPolicy { get; set; } = Retransmission.CoapRetransmissionPolicy.Rfc7252;

    /// <summary>
    /// Which security session an answer may arrive in and still match the request, notification or separate response
    /// it answers, on a secured transport (DTLS, TLS): <see cref="Channels.CoapSessionMatching.Strict"/> by default, the
    /// same session and epoch, as RFC 7252 section 9.1.2 requires (a session moved by its Connection ID, RFC 9146, is
    /// the same session). <see cref="Channels.CoapSessionMatching.Relaxed"/> (the same identity at the same address, in
    /// a new session) and <see cref="Channels.CoapSessionMatching.Principal"/> (the same identity anywhere) do not
    /// conform to that section: opt-ins for peers that handshake again mid-exchange and for clusters behind load
    /// balancers. Configuration names it: "Strict", "Relaxed" or "Principal".
    /// </summary>
    public Channels.CoapSessionMatching SessionMatching { get; set; }

    /// <summary>The random source for retransmission jitter and Message ID starts (default <see cref="Random.Shared"/>); tokens always come from a cryptographic generator.</summary>
    public Random? Random { get; set; }

    /// <summary>The stages added with <see cref="UseStage"/>, in the order added; empty for the built-in chain alone.</summary>
    internal IReadOnlyList<StageRegistration> StageRegistrations => (IReadOnlyList<StageRegistration>?)_stages ?? [];

    /// <summary>A server's check of an upload's first block, given to the stages it makes (<see cref="CoapStageContext"/>); null on a client.</summary>
    internal Func<CoapNet.Messages.CoapMessage, CoapNet.Messages.CoapMessage?>? UploadCheck { get; private set; }

    /// <summary>A server's observers, given to the stages it makes; null on a client.</summary>
    internal CoapNet.Observe.ObservationRegistry? Observers { get; private set; }

    /// <summary>
    /// Adds a stage of your own to every endpoint these options make, at <paramref name="position"/> in the chain that runs
    /// from the application down to the wire (see <see cref="CoapStage"/>): above or below every stage, or just above or
    /// below a named one. <paramref name="factory"/> makes the stage once per endpoint, when the endpoint is made, so
    /// each endpoint has its own (a server with UDP and TCP endpoints calls it twice).
    /// </summary>
    /// <param name="name">The stage's name, unique on these options: other stages are placed by it; the built-in ones have theirs (<see cref="CoapStageNames"/>).</param>
    /// <param name="factory">Makes a new stage for an endpoint, from that endpoint's <see cref="CoapStageContext"/>.</param>
    /// <param name="position">Where it goes: <see cref="CoapStagePosition.AboveAll"/>, <see cref="CoapStagePosition.BelowAll"/>,
    /// <see cref="CoapStagePosition.Above"/> or <see cref="CoapStagePosition.Below"/> a built-in stage or one added before.</param>
    /// <returns>These options, to add more.</returns>
    /// <exception cref="ArgumentException">
    /// An argument is null, the name is blank or already taken (by a built-in stage or one added before), or the position
    /// names a stage that is neither built in nor added before.
    /// </exception>
    public CoapEndpointOptions UseStage(string name, Func<CoapStageContext, CoapStage> factory, CoapStagePosition position)
    {
        CoapStagePosition.CheckName(name);
        ArgumentNullException.ThrowIfNull(factory);
        ArgumentNullException.ThrowIfNull(position);
        if (IsStageName(name))
        {
            throw new ArgumentException($"A stage named '{name}' is already in the chain; each stage has a name of its own.", nameof(name));
        }

        if (position.Anchor is { } anchor && !IsStageName(anchor))
        {
            throw new ArgumentException(
                $"No stage named '{anchor}' to place '{name}' {position}: the stages are {string.Join(", ", KnownStageNames())}; add a stage before placing another by it.",
                nameof(position));
        }

        (_stages ??= []).Add(new StageRegistration(name, factory, position));
        return this;
    }

    /// <summary>A copy of these options whose stages get a server's routing check and observers (<see cref="CoapStageContext"/>).</summary>
    /// <summary>
    /// A copy of these settings for an endpoint of its own (<see cref="Server.CoapListenOptions.Endpoint"/>): its nested
    /// settings (transmission parameters, block-wise, Echo, Q-Block) are copies to change apart; the stages added with
    /// <see cref="UseStage"/>, the clock, the logging and the retransmission policy are the same.
    /// </summary>
    /// <returns>The copy.</returns>
    public CoapEndpointOptions Clone()
    {
        CoapEndpointOptions copy = (CoapEndpointOptions)MemberwiseClone();
        copy.TransmissionParameters = TransmissionParameters.Copy();
        copy.Blockwise = Blockwise.Copy();
        copy.Echo = Echo.Copy();
        copy.QBlock = QBlock.Copy();
        copy._stages = _stages is null ? null : [.. _stages];
        return copy;
    }

    internal CoapEndpointOptions ForServer(Func<CoapNet.Messages.CoapMessage, CoapNet.Messages.CoapMessage?> uploadCheck, CoapNet.Observe.ObservationRegistry observers)
    {
        CoapEndpointOptions copy = (CoapEndpointOptions)MemberwiseClone();
        copy.UploadCheck = uploadCheck;
        copy.Observers = observers;
        return copy;
    }

    private bool IsStageName(string name)
    {
        if (CoapStages.IsBuiltIn(name))
        {
            return true;
        }

        foreach (StageRegistration registration in StageRegistrations)
        {
            if (string.Equals(registration.Name, name, StringComparison.Ordinal))
            {
                return true;
            }
        }

        return false;
    }

    private IEnumerable<string> KnownStageNames()
    {
        foreach (string name in CoapStages.BuiltInNames())
        {
            yield return name;
        }

        foreach (StageRegistration registration in StageRegistrations)
        {
            yield return registration.Name;
        }
    }

    internal void Validate()
    {
        ArgumentNullException.ThrowIfNull(TransmissionParameters);
        ArgumentNullException.ThrowIfNull(TimeProvider);
        ArgumentNullException.ThrowIfNull(RetransmissionPolicy);
        TransmissionParameters.Validate();
        ArgumentNullException.ThrowIfNull(Blockwise);
        Blockwise.Validate();
        ArgumentNullException.ThrowIfNull(Echo);
        Echo.Validate();
        if (!Enum.IsDefined(SessionMatching))
        {
            throw new ArgumentException($"SessionMatching is {(int)SessionMatching}, which is no policy: Strict, Relaxed or Principal.", nameof(SessionMatching));
        }

        if (DeduplicationCapacity < 1)
        {
            throw new ArgumentException("DeduplicationCapacity must be at least 1.", nameof(DeduplicationCapacity));
        }

        if (MaxPeers < 1)
        {
            throw new ArgumentException("MaxPeers must be at least 1.", nameof(MaxPeers));
        }

        if (TokenLength is < 4 or > 8)
        {
            throw new ArgumentException("TokenLength must be 4 to 8 bytes.", nameof(TokenLength));
        }

        if (MaxMessageSize is < 64 or > Serialization.CoapSerializerOptions.DefaultMaxDatagramSize)
        {
            throw new ArgumentException("MaxMessageSize must be between 64 and 65507 bytes.", nameof(MaxMessageSize));
        }

        if (MaxOptionCount < 1)
        {
            throw new ArgumentException("MaxOptionCount must be at least 1.", nameof(MaxOptionCount));
        }

        if (MalformedLogLinesPerSecond < 1)
        {
            throw new ArgumentException("MalformedLogLinesPerSecond must be at least 1.", nameof(MalformedLogLinesPerSecond));
        }

        if (SeparateResponseDelay <= TimeSpan.Zero)
        {
            throw new ArgumentException("SeparateResponseDelay must be positive.", nameof(SeparateResponseDelay));
        }

        if (ResponseTimeout <= TimeSpan.Zero)
        {
            throw new ArgumentException("ResponseTimeout must be positive.", nameof(ResponseTimeout));
        }

        ArgumentNullException.ThrowIfNull(QBlock);
        QBlock.Validate();
        ValidatePaths();
    }

    private void ValidatePaths()
    {
        ArgumentNullException.ThrowIfNull(Paths);
        HashSet<System.Net.IPNetwork> seen = [];
        for (int i = 0; i < Paths.Count; i++)
        {
            CoapPathOptions path = Paths[i] ?? throw new ArgumentException($"Paths[{i}] is null.", nameof(Paths));
            if (!seen.Add(path.Validate()))
            {
                throw new ArgumentException($"Two paths name the network {path.Network}: give each prefix one path.", nameof(Paths));
            }
        }
    }

    /// <summary>
    /// Q-Block1 and Q-Block2 (RFC 9177): block-wise transfer without a request per block, with peers that support it;
    /// off by default, see <see cref="CoapNet.QBlock.QBlockOptions"/>.
    /// </summary>
    public CoapNet.QBlock.QBlockOptions QBlock { get; set; } = new();
}
