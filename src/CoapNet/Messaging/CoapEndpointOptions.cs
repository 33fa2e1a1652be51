using Microsoft.Extensions.Logging;

namespace CoapNet.Messaging;

/// <summary>Settings of a <see cref="CoapEndpoint"/>: transmission parameters, limits, time and logging.</summary>
public sealed class CoapEndpointOptions
{
    /// <summary>The RFC 7252 section 4.8 parameters (default: the RFC's).</summary>
    public CoapTransmissionParameters TransmissionParameters { get; init; } = CoapTransmissionParameters.Default;

    /// <summary>The clock for every timer (retransmission, lifetimes, timeouts); inject a fake one to test in virtual time.</summary>
    public TimeProvider TimeProvider { get; init; } = TimeProvider.System;

    /// <summary>Where log lines go: one debug line per message in and out, warnings for dropped malformed datagrams. No-op by default.</summary>
    public ILoggerFactory? LoggerFactory { get; init; }

    /// <summary>
    /// How many received messages the deduplication cache remembers (default 16384); when full,
    /// the oldest entry is evicted (see <see cref="DeduplicationCapacity"/> remarks in the docs).
    /// </summary>
    public int DeduplicationCapacity { get; init; } = 16384;

    /// <summary>How many peers the endpoint keeps state for (default 10000); idle ones are dropped first.</summary>
    public int MaxPeers { get; init; } = 10000;

    /// <summary>The length of generated tokens, 4 to 8 bytes (default 8; RFC 9175 section 4.2 asks for enough randomness to be unguessable).</summary>
    public int TokenLength { get; init; } = 8;

    /// <summary>
    /// How long a client waits for a response that is not piggybacked: after the empty ACK of a
    /// separate response, or after sending a NON request. Default: MAX_TRANSMIT_WAIT (93 s).
    /// </summary>
    public TimeSpan? ResponseTimeout { get; init; }

    /// <summary>
    /// The largest message this endpoint sends, in bytes (default 1152, the size RFC 7252 section 4.6
    /// recommends when the path MTU is unknown). A larger request or response is refused with an
    /// <see cref="ArgumentException"/> rather than sent truncated or fragmented; block-wise transfer
    /// (RFC 7959) is how larger bodies will travel. Received messages may be up to 65507 bytes.
    /// </summary>
    public int MaxMessageSize { get; init; } = 1152;

    /// <summary>
    /// When set, a confirmable request whose handler has not answered within this delay is
    /// acknowledged with an empty ACK, and its response goes out separately (RFC 7252 section 5.2.2);
    /// keep it below ACK_TIMEOUT so the client does not retransmit. Null (the default) leaves that to
    /// the handler (<see cref="CoapExchange.Accept"/>). Has no effect on reliable transports.
    /// </summary>
    public TimeSpan? SeparateResponseDelay { get; init; }

    /// <summary>
    /// At most this many warnings per second for malformed datagrams (default 10), and as many again for
    /// aborted connections over a connection transport (RFC 8323 section 5.6); the rest are counted and
    /// summed up in the next line written, so a flood of bad input cannot flood the log.
    /// </summary>
    public int MalformedLogLinesPerSecond { get; init; } = 10;

    /// <summary>
    /// The most options a received message may carry (default <see cref="Serialization.CoapSerializerOptions.DefaultMaxOptionCount"/>,
    /// 1024). A datagram with more is malformed: a CON is answered with RST, anything else dropped (RFC 7252
    /// sections 4.2 and 4.3); a stream frame with more aborts its connection (RFC 8323 section 5.6).
    /// </summary>
    public int MaxOptionCount { get; init; } = Serialization.CoapSerializerOptions.DefaultMaxOptionCount;

    /// <summary>Block-wise transfer (RFC 7959): block size and the bounds on stored bodies; default <see cref="CoapNet.Blockwise.BlockwiseOptions"/>.</summary>
    public CoapNet.Blockwise.BlockwiseOptions Blockwise { get; init; } = new();

    /// <summary>
    /// The Echo option (RFC 9175 section 2) on a server: freshness of unsafe requests and amplification mitigation, both
    /// off by default; see <see cref="CoapNet.Freshness.EchoOptions"/>. A client answers Echo challenges whatever this says.
    /// </summary>
    public CoapNet.Freshness.EchoOptions Echo { get; init; } = new();

    /// <summary>
    /// How confirmable messages are retransmitted over a datagram transport: timeouts, back-off and NSTART per peer
    /// (default <see cref="Retransmission.CoapRetransmissionPolicy.Rfc7252"/>, the fixed back-off of RFC 7252 section 4.2
    /// with <see cref="TransmissionParameters"/>).
    /// </summary>
    public Retransmission.CoapRetransmissionPolicy RetransmissionPolicy { get; init; } = Retransmission.CoapRetransmissionPolicy.Rfc7252;

    /// <summary>The random source for retransmission jitter and Message ID starts (default <see cref="Random.Shared"/>); tokens always come from a cryptographic generator.</summary>
    public Random? Random { get; init; }

    /// <summary>
    /// Makes the endpoint's stages, from the application down (null: <see cref="CoapStages.CreateDefault"/>, block-wise,
    /// Observe, No-Response and Echo). Internal until the stage contract is public: tests add stages of their own here.
    /// </summary>
    internal Func<StageContext, IReadOnlyList<CoapStage>>? Stages { get; init; }

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
    }
}
