namespace CoapNet.QBlock;

/// <summary>
/// Settings of the Q-Block1 and Q-Block2 options (19 and 31, RFC 9177): block-wise transfer that sends a body's blocks
/// without a request per block, for lossy, high-latency links. Off by default; when enabled, an endpoint uses them
/// only with a peer that supports them too (RFC 9177 section 4.1): a server when a request carries a Q-Block option, a
/// client after its first request that offered them was not refused with 4.02 Bad Option (then it falls back to
/// Block1/Block2, RFC 7959, for that peer). Only over datagrams: over a reliable transport BERT (RFC 8323 section 6)
/// carries large bodies.
/// </summary>
/// <remarks>
/// The names of the timing settings are those of RFC 9177 section 7.2 (Table 3 gives the defaults). The block size,
/// and the bounds on what a transfer may hold (stored bodies, uploads being joined, the largest body), are those of
/// <see cref="Blockwise.BlockwiseOptions"/>, so one setting sizes both kinds of transfer. Not covered: notifications of
/// an observation (a server answers an Observe request offering Q-Block2 with 4.02, so the client uses Block2), a
/// response body to a Q-Block1 upload larger than one message, bodies streamed through the client's
/// <c>UploadAsync</c>/<c>DownloadAsync</c> (those use block-wise), and PROBING_RATE toward a peer that does not answer
/// (section 7.2): a transfer is bounded by NON_MAX_RETRANSMIT instead.
/// </remarks>
public sealed class QBlockOptions
{
    /// <summary>True to use Q-Block1 and Q-Block2 with peers that support them (default false).</summary>
    public bool Enabled { get; set; }

    /// <summary>
    /// MAX_PAYLOADS: how many blocks of one body go out back to back before the sender waits for the peer, or for
    /// <see cref="NonTimeout"/> (default 10, RFC 9177 section 7.2). Both sides must use the same value, or transfers
    /// stall until a timeout.
    /// </summary>
    public int MaxPayloads { get; set; } = 10;

    /// <summary>
    /// NON_TIMEOUT: the base of the pause between two sets of <see cref="MaxPayloads"/> blocks of one body when the
    /// peer has not asked to continue (default 2 s, ACK_TIMEOUT's default). The pause itself, NON_TIMEOUT_RANDOM, is
    /// drawn once per body between this and 1.5 times this (ACK_RANDOM_FACTOR).
    /// </summary>
    public TimeSpan NonTimeout { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>
    /// NON_RECEIVE_TIMEOUT: how long a receiver waits after the latest block of a body before it asks for the missing
    /// ones; doubled at each repeated request (default 4 s). RFC 9177 section 7.2 asks that it exceed NON_TIMEOUT_RANDOM
    /// (at most 1.5 <see cref="NonTimeout"/>) by at least one second, so the sender can start its next set first.
    /// </summary>
    public TimeSpan NonReceiveTimeout { get; set; } = TimeSpan.FromSeconds(4);

    /// <summary>
    /// NON_MAX_RETRANSMIT: how many times a receiver asks for missing blocks without any arriving before it gives the
    /// body up (default 4, MAX_RETRANSMIT's default).
    /// </summary>
    public int NonMaxRetransmit { get; set; } = 4;

    /// <summary>
    /// NON_PARTIAL_TIMEOUT: how long a server keeps a partly received upload, and a body it sent for the client's
    /// requests for missing blocks, after the latest request for it (default 247 s, RFC 9177 section 7.2).
    /// </summary>
    public TimeSpan NonPartialTimeout { get; set; } = TimeSpan.FromSeconds(247);

    internal void Validate()
    {
        if (MaxPayloads < 1)
        {
            throw new ArgumentException("MaxPayloads must be at least 1 (RFC 9177 section 7.2).", nameof(MaxPayloads));
        }

        if (NonTimeout <= TimeSpan.Zero || NonPartialTimeout <= TimeSpan.Zero)
        {
            throw new ArgumentException("NonTimeout and NonPartialTimeout must be positive.", nameof(NonTimeout));
        }

        // RFC 9177 section 7.2: the receiver must not ask for blocks the sender is about to send after its pause.
        if (NonReceiveTimeout <= NonTimeout * 1.5)
        {
            throw new ArgumentException("NonReceiveTimeout must exceed NON_TIMEOUT_RANDOM, at most 1.5 times NonTimeout (RFC 9177 section 7.2).", nameof(NonReceiveTimeout));
        }

        if (NonMaxRetransmit < 0)
        {
            throw new ArgumentException("NonMaxRetransmit must not be negative.", nameof(NonMaxRetransmit));
        }
    }

    /// <summary>A copy of these settings, for an endpoint's own (<see cref="Messaging.CoapEndpointOptions.Clone"/>).</summary>
    internal QBlockOptions Copy() => (QBlockOptions)MemberwiseClone();
}
