namespace CoapNet.Messaging.Retransmission;

/// <summary>
/// Settings of CoCoA (<see cref="CoapRetransmissionPolicy.Cocoa"/>, draft-ietf-core-cocoa-03): the variant and the bound on
/// timeouts. The rest comes from the endpoint's <see cref="CoapTransmissionParameters"/>: ACK_TIMEOUT is the blind RTO a
/// peer starts with, ACK_RANDOM_FACTOR the jitter of each message's first timeout, and MAX_RETRANSMIT and NSTART apply as
/// they do without CoCoA.
/// </summary>
public sealed class CocoaOptions
{
    /// <summary>
    /// The bound on every timeout: a message's first one, each backed-off one and the RTO estimate itself (default 32 s,
    /// the draft's bound on the back-off).
    /// </summary>
    public TimeSpan MaxTimeout { get; set; } = TimeSpan.FromSeconds(32);

    /// <summary>
    /// True (the default) for CoCoA as the draft specifies it: a message acknowledged after its first or second
    /// retransmission feeds the weak estimator. False for the strong-only variant (CoCoA-S in the literature): only
    /// messages acknowledged without retransmission update the RTO, so a lossy link does not raise it with ambiguous
    /// samples.
    /// </summary>
    public bool WeakEstimator { get; set; } = true;

    /// <summary>
    /// False (the default) for NSTART outstanding messages per peer, as the draft has it. True to make NSTART the ceiling
    /// of a congestion window per peer, counted in messages as TCP's is in segments (RFC 5681): it starts at one, grows by
    /// one per message acknowledged without retransmission up to a threshold (doubling each round trip) and by one per
    /// round trip past it, and keeps 0.8 of itself, at most once per RTO, when a message times out. For a client that keeps
    /// several requests outstanding (<see cref="Blockwise.BlockwiseOptions.MaxBlocksInFlight"/> with NSTART above 1) on a
    /// link other devices share: it fills the link alone and comes down to its share when many do, where a fixed NSTART
    /// overruns the bottleneck until transfers give up (benchmarks/RESULTS.md, constrained links). With NSTART 1 it
    /// changes nothing.
    /// </summary>
    public bool CongestionWindow { get; set; }

    /// <summary>Checks that the settings make sense.</summary>
    /// <exception cref="ArgumentException">A setting is out of range; the message names it.</exception>
    public void Validate()
    {
        // Below 1 s the variable back-off could never reach its middle range, and a message would be given up on long
        // before a constrained link's round trip: the draft's own figures (a blind RTO of 2 s) need at least that.
        if (MaxTimeout < TimeSpan.FromSeconds(1) || MaxTimeout > TimeSpan.FromHours(1))
        {
            throw new ArgumentException("MaxTimeout must be from 1 s to 1 hour.", nameof(MaxTimeout));
        }
    }
}
