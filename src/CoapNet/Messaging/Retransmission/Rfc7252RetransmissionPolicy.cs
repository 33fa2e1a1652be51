using CoapNet.Channels;

namespace CoapNet.Messaging.Retransmission;

/// <summary>The fixed back-off of RFC 7252 section 4.2 with the endpoint's parameters; see <see cref="CoapRetransmissionPolicy.Rfc7252"/>.</summary>
internal sealed class Rfc7252RetransmissionPolicy : CoapRetransmissionPolicy
{
    public override CoapPeerRetransmission CreatePeerState(CoapPeer peer, CoapTransmissionParameters parameters, TimeProvider timeProvider)
    {
        ArgumentNullException.ThrowIfNull(parameters);
        return new Rfc7252PeerRetransmission(parameters);
    }

    /// <summary>Nothing per peer but the parameters: every peer is treated alike.</summary>
    private sealed class Rfc7252PeerRetransmission(CoapTransmissionParameters parameters) : CoapPeerRetransmission
    {
        public override int NStart => parameters.NStart;

        public override int MaxRetransmit => parameters.MaxRetransmit;

        // RFC 7252 section 4.2: random in [ACK_TIMEOUT, ACK_TIMEOUT x ACK_RANDOM_FACTOR], so that peers started
        // together do not retransmit in step.
        public override TimeSpan GetInitialTimeout(Random random)
            => parameters.AckTimeout * (1 + (random.NextDouble() * (parameters.AckRandomFactor - 1)));

        // RFC 7252 section 4.2: "the timeout is doubled".
        public override TimeSpan GetNextTimeout(TimeSpan initialTimeout, TimeSpan timeout, int retransmissions) => timeout * 2;
    }
}
