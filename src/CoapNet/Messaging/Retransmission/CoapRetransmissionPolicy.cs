using CoapNet.Channels;

namespace CoapNet.Messaging.Retransmission;

/// <summary>
/// Decides how an endpoint retransmits confirmable messages over a datagram transport: the timeouts, the back-off,
/// when to give up, and how many interactions may be outstanding toward one peer (RFC 7252 sections 4.2, 4.7 and
/// 4.8). The policy makes one <see cref="CoapPeerRetransmission"/> per peer, which keeps whatever that peer needs
/// (round-trip estimates, for congestion control such as CoCoA) and is fed a round-trip sample for every
/// acknowledged message.
/// </summary>
/// <remarks>
/// The default, <see cref="Rfc7252"/>, is the fixed back-off of RFC 7252 section 4.2 with the endpoint's
/// <see cref="CoapTransmissionParameters"/>. Reliable transports (TCP) do not retransmit and never ask the policy.
/// </remarks>
public abstract class CoapRetransmissionPolicy
{
    /// <summary>
    /// RFC 7252 section 4.2: the first timeout random in [ACK_TIMEOUT, ACK_TIMEOUT x ACK_RANDOM_FACTOR], doubled
    /// at each of at most MAX_RETRANSMIT retransmissions, and NSTART outstanding interactions per peer; round-trip
    /// samples are not used.
    /// </summary>
    public static CoapRetransmissionPolicy Rfc7252 { get; } = new Rfc7252RetransmissionPolicy();

    /// <summary>
    /// Makes the state for one peer, when the endpoint first sends to it or receives from it. The endpoint keeps
    /// it while it keeps the peer (bounded by <see cref="CoapEndpointOptions.MaxPeers"/>, idle peers dropped after
    /// EXCHANGE_LIFETIME) and calls it under its own lock, so an implementation needs no locking of its own.
    /// </summary>
    /// <param name="peer">The peer.</param>
    /// <param name="parameters">The endpoint's transmission parameters.</param>
    /// <param name="timeProvider">The endpoint's clock (<see cref="CoapEndpointOptions.TimeProvider"/>), for a policy whose state ages.</param>
    /// <returns>The peer's retransmission state.</returns>
    public abstract CoapPeerRetransmission CreatePeerState(CoapPeer peer, CoapTransmissionParameters parameters, TimeProvider timeProvider);

    /// <summary>
    /// CoCoA, the congestion control of draft-ietf-core-cocoa-03: a retransmission timeout per peer learned from round
    /// trips (a strong estimator fed by messages acknowledged without retransmission, a weak one by those acknowledged
    /// after one or two), a back-off factor that depends on the timeout (3, 2 or 1.5), timeouts bounded at 32 s, and
    /// an RTO that ages back toward the default when no round trip updates it. MAX_RETRANSMIT, NSTART, ACK_TIMEOUT
    /// (the initial RTO, 2 s by default) and ACK_RANDOM_FACTOR (the jitter) come from the endpoint's
    /// <see cref="CoapTransmissionParameters"/>.
    /// </summary>
    /// <param name="options">The variant and bounds; null for the draft's.</param>
    /// <returns>The policy, for <see cref="CoapEndpointOptions.RetransmissionPolicy"/>.</returns>
    /// <exception cref="ArgumentException">An option is out of range; the message names it.</exception>
    public static CoapRetransmissionPolicy Cocoa(CocoaOptions? options = null) => new CocoaRetransmissionPolicy(options ?? new CocoaOptions());
}
