namespace CoapNet.Messaging.Retransmission;

/// <summary>
/// The retransmission state an endpoint keeps for one peer (made by <see cref="CoapRetransmissionPolicy.CreatePeerState"/>):
/// it chooses the timeouts of the confirmable messages sent to the peer and the number of interactions that may be
/// outstanding toward it, and learns from the round trips of acknowledged messages.
/// </summary>
/// <remarks>
/// The endpoint calls every member under its lock, from timers and the receive path: keep them short and
/// non-blocking. They run once per confirmable message sent, retransmitted or acknowledged, so they should not
/// allocate.
/// </remarks>
public abstract class CoapPeerRetransmission
{
    /// <summary>How many interactions may be outstanding toward the peer at once (NSTART, RFC 7252 section 4.7); at least 1.</summary>
    public abstract int NStart { get; }

    /// <summary>How many times a confirmable message is retransmitted before the endpoint gives up (MAX_RETRANSMIT, RFC 7252 section 4.2).</summary>
    public abstract int MaxRetransmit { get; }

    /// <summary>The timeout of a new confirmable message: how long after its first transmission it is retransmitted.</summary>
    /// <param name="random">The endpoint's random source (<see cref="CoapEndpointOptions.Random"/>), for jitter.</param>
    /// <returns>A positive timeout.</returns>
    public abstract TimeSpan GetInitialTimeout(Random random);

    /// <summary>The timeout after a retransmission (the back-off).</summary>
    /// <param name="initialTimeout">
    /// The message's first timeout, as <see cref="GetInitialTimeout"/> chose it: a back-off that depends on it (CoCoA's
    /// variable back-off factor) reads it here.
    /// </param>
    /// <param name="timeout">The timeout that just expired.</param>
    /// <param name="retransmissions">The retransmissions so far, this one included (1 after the first).</param>
    /// <returns>A positive timeout.</returns>
    public abstract TimeSpan GetNextTimeout(TimeSpan initialTimeout, TimeSpan timeout, int retransmissions);

    /// <summary>
    /// A confirmable message to the peer was acknowledged (an empty ACK or a piggybacked response). With
    /// <paramref name="retransmissions"/> 0 the sample is strong (it measures one round trip); otherwise it is
    /// weak, since the ACK may answer any of the copies. The default ignores it.
    /// </summary>
    /// <param name="elapsed">The time from the first transmission to the acknowledgement.</param>
    /// <param name="retransmissions">How many times the message had been retransmitted.</param>
    public virtual void OnAcknowledged(TimeSpan elapsed, int retransmissions)
    {
        // The fixed back-off of RFC 7252 learns nothing from round trips.
    }

    /// <summary>
    /// A confirmable message to the peer ended without an acknowledgement: the peer reset it, the endpoint gave up
    /// after <see cref="MaxRetransmit"/>, or it was no longer needed (its exchange completed or was canceled, the
    /// endpoint was disposed). Every message <see cref="GetInitialTimeout"/> was asked for ends exactly once, here or in
    /// <see cref="OnAcknowledged"/>, so a policy can count what is outstanding. The default ignores it.
    /// </summary>
    /// <param name="retransmissions">How many times the message had been retransmitted.</param>
    public virtual void OnUnacknowledged(int retransmissions)
    {
        // Nothing to learn: no round trip was measured.
    }

    /// <summary>
    /// The peer's current retransmission timeout estimate (the RTO a new message starts from, before any jitter), or
    /// null for a policy that keeps none. Reported per peer by the <c>coap.peer.rto</c> gauge
    /// (<see cref="Diagnostics.CoapInstrumentation.PeerRetransmissionTimeout"/>).
    /// </summary>
    public virtual TimeSpan? RetransmissionTimeout => null;
}
