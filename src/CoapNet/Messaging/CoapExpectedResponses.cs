namespace CoapNet.Messaging;

/// <summary>How many responses a client call or a follow-up expects under its token (<see cref="CoapClientCall.ExpectedResponses"/>).</summary>
public enum CoapExpectedResponses
{
    /// <summary>
    /// One response (the default): the token stops matching when it arrives, and the endpoint's response timeout bounds the
    /// wait after the request is delivered.
    /// </summary>
    One = 0,

    /// <summary>
    /// None: the server will not answer (RFC 7967 with every class suppressed), so the call completes once the request is
    /// delivered (a NON sent, a CON acknowledged with an empty ACK, a frame written) with a 0.00 Empty message carrying its
    /// token, handed to the caller (or a follow-up's stage) directly. A response that comes first (piggybacked) still
    /// completes it as usual.
    /// </summary>
    None = 1,

    /// <summary>
    /// Several under one token until the call is ended: each comes up through the stages as the first did. The request
    /// below ends at the first (its retransmission, its NSTART slot), and no response timeout applies: the stage that asks
    /// for several bounds the wait itself, and a NON request of such a call takes no NSTART slot below, since that stage
    /// paces its requests (RFC 9177 section 7.2). For an Observe registration (RFC 7641, the caller's call) the first
    /// response completes the caller's task and the rest are its notifications; for Q-Block (RFC 9177 section 4.4) the
    /// stage joins them and passes one outcome up; a group request (multicast) gets one from each server.
    /// </summary>
    Several = 2,
}
