using CoapNet.Channels;
using CoapNet.Messaging;
using CoapNet.Messaging.Retransmission;

namespace CoapNet.Simulation;

/// <summary>
/// Another policy with every timeout bounded: seed 002 ran "Default CoAP" with MAX_RETRANSMIT 20 and its doubling stopped
/// at 60 s, since RFC 7252 names no bound and 2 s x 2^20 is not a timeout anyone waits for. The inner policy decides
/// everything else; only its timeouts are cut.
/// </summary>
/// <param name="inner">The policy to bound (<see cref="CoapRetransmissionPolicy.Rfc7252"/> for the seed's Default CoAP).</param>
/// <param name="maxTimeout">The bound.</param>
public sealed class BoundedBackOffPolicy(CoapRetransmissionPolicy inner, TimeSpan maxTimeout) : CoapRetransmissionPolicy
{
    /// <inheritdoc/>
    public override CoapPeerRetransmission CreatePeerState(CoapPeer peer, CoapTransmissionParameters parameters, TimeProvider timeProvider)
        => new Bounded(inner.CreatePeerState(peer, parameters, timeProvider), maxTimeout);

    private sealed class Bounded(CoapPeerRetransmission inner, TimeSpan max) : CoapPeerRetransmission
    {
        public override int NStart => inner.NStart;

        public override int MaxRetransmit => inner.MaxRetransmit;

        public override TimeSpan? RetransmissionTimeout => inner.RetransmissionTimeout;

        public override TimeSpan GetInitialTimeout(Random random) => Min(inner.GetInitialTimeout(random));

        public override TimeSpan GetNextTimeout(TimeSpan initialTimeout, TimeSpan timeout, int retransmissions)
            => Min(inner.GetNextTimeout(initialTimeout, timeout, retransmissions));

        public override void OnAcknowledged(TimeSpan elapsed, int retransmissions) => inner.OnAcknowledged(elapsed, retransmissions);

        public override void OnUnacknowledged(int retransmissions) => inner.OnUnacknowledged(retransmissions);

        private TimeSpan Min(TimeSpan timeout) => timeout < max ? timeout : max;
    }
}
