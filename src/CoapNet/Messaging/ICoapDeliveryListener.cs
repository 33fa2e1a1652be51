namespace CoapNet.Messaging;

/// <summary>
/// Learns what became of a further response (<see cref="CoapExchange.ForFurtherResponse"/>): an Observe notification
/// (RFC 7641 section 4.5) or one more block of a Q-Block2 body (RFC 9177 section 4.4). Exactly one of its members is
/// called per further response.
/// </summary>
/// <remarks>
/// Called on the thread where the outcome is known: the one that sent it (a NON delivered, a stage that dropped it), the
/// transport's receive thread (an ACK or RST), or a retransmission timer (given up). Return quickly, and do not block.
/// </remarks>
public interface ICoapDeliveryListener
{
    /// <summary>A confirmable response was acknowledged, or a non-confirmable one (or a frame on a connection) was sent.</summary>
    void OnDelivered();

    /// <summary>The client answered it with RST: it no longer wants these responses (RFC 7641 section 3.6).</summary>
    void OnRejected();

    /// <summary>
    /// It could not be delivered: a confirmable one was not acknowledged after MAX_RETRANSMIT (RFC 7252 section 4.2), the
    /// connection is gone, or the endpoint stopped.
    /// </summary>
    /// <param name="reason">Why.</param>
    void OnFailed(Exception reason);

    /// <summary>
    /// It was not sent: a stage dropped it (<see cref="CoapExchange.EndWithoutResponse"/>), as No-Response does for a class
    /// the registration declined (RFC 7967 section 2). Nothing went out, so nothing proved the client alive either.
    /// </summary>
    void OnDropped();
}
