using System.Net;
using CoapNet.Channels;
using CoapNet.Messages;

namespace CoapNet.Messaging;

/// <summary>
/// The layer under the exchange layer, one per transport kind: the datagram message layer (RFC 7252
/// section 4: Message IDs, deduplication, CON/ACK/RST, retransmission, NSTART) or the stream
/// connection layer (RFC 8323 section 5: CSM, Ping/Pong, Release, Abort; no Message IDs at all).
/// The exchange layer above it sees only requests, responses and peers.
/// </summary>
/// <remarks>
/// Every method may be called from any thread. A lower layer calls back into
/// <see cref="IExchangeLayer"/> without holding its own locks.
/// </remarks>
internal interface IMessageLayer : IAsyncDisposable, IDisposable
{
    /// <summary>The URI scheme of the peers this layer reaches ("coap", "coap+tcp").</summary>
    string Scheme { get; }

    /// <summary>The local endpoint (the bound socket or listener).</summary>
    IPEndPoint LocalEndPoint { get; }

    /// <summary>Starts receiving; received requests and responses go to <paramref name="upper"/>. Call once.</summary>
    void Start(IExchangeLayer upper);

    /// <summary>The layer received messages go to; null before <see cref="Start"/>.</summary>
    IExchangeLayer? Upper { get; }

    /// <summary>
    /// Throws <see cref="ArgumentException"/> when <paramref name="message"/> can never be sent to
    /// <paramref name="peer"/> (too large for the datagram size in force, or for the peer's CSM
    /// Max-Message-Size when already known), so callers fail fast on their own thread. It is measured with a
    /// token of <paramref name="tokenLength"/> bytes: the one it will carry, which it may not hold yet.
    /// </summary>
    void CheckSendable(CoapPeer peer, CoapMessage message, int tokenLength);

    /// <summary>
    /// True when <paramref name="message"/> fits one message to <paramref name="peer"/>: one datagram
    /// of the size in force, or one frame within the peer's CSM Max-Message-Size (its base value of
    /// 1152 bytes while no CSM is known, RFC 8323 section 5.3.1). Block-wise transfer asks before
    /// splitting a request (RFC 7959 section 2.5).
    /// </summary>
    bool Fits(CoapPeer peer, CoapMessage message, int tokenLength);

    /// <summary>
    /// The size of a BERT block toward <paramref name="peer"/> (RFC 8323 section 6, SZX 7): a multiple
    /// of 1024 when both sides' CSMs offered Block-Wise-Transfer and the peer's Max-Message-Size leaves
    /// room for at least two KiB; 0 when BERT is not available (always over datagrams).
    /// </summary>
    int BertBlockSize(CoapPeer peer);

    /// <summary>
    /// True for a connection transport (RFC 8323: TCP, TLS, WebSockets): reliable and ordered, so there are no message
    /// types, Message IDs, acknowledgements or retransmissions (section 3.2); false for datagrams. What the transport
    /// can do is declared here, by the layer it feeds, so stages ask the exchange and never infer it from a scheme.
    /// </summary>
    bool IsReliable { get; }

    /// <summary>
    /// True when what <paramref name="peer"/> accepts (<see cref="Fits"/>, <see cref="BertBlockSize"/>) is known now.
    /// Otherwise (a connection whose peer has not yet sent its CSM, RFC 8323 section 5.3) it starts opening the
    /// connection if there is none, and calls <paramref name="known"/> once, off the caller's thread, when the CSM
    /// has arrived (with null) or the connection failed or closed first (with the reason), which the CSM timeout
    /// bounds. A datagram layer always knows. A client asks before sizing a body that may not fit the base
    /// 1152 bytes, so that its first upload uses the peer's limits (and BERT, section 6).
    /// </summary>
    bool LimitsKnown(CoapPeer peer, Action<Exception?> known);

    /// <summary>
    /// Sends the request of a client exchange. The layer assigns what its framing needs (a Message ID
    /// for datagrams), may hold it back (NSTART, a connection still being opened) and reports its
    /// fate through <paramref name="request"/>'s callbacks. Never throws for network failures.
    /// </summary>
    void SendRequest(OutgoingRequest request);

    /// <summary>
    /// The exchange of <paramref name="request"/> has ended (answered, failed or canceled): stop any
    /// retransmission, free its NSTART slot or in-flight count, forget it. Idempotent.
    /// </summary>
    void EndRequest(OutgoingRequest request);

    /// <summary>
    /// Acknowledges a received confirmable request now with an empty ACK, so its response will be
    /// separate (RFC 7252 section 5.2.2). Does nothing on a reliable transport, which has no ACKs.
    /// </summary>
    void Acknowledge(CoapExchange exchange);

    /// <summary>
    /// Ends a received request that gets no response (a stage suppressed it, as No-Response does, RFC 7967 section
    /// 2.1): a confirmable request not yet acknowledged gets its empty ACK, recorded for its duplicates as a reply
    /// would be (RFC 7252 sections 4.2, 4.5); a NON gets nothing; on a connection the request stops counting as in
    /// flight, as a written response would make it.
    /// </summary>
    void EndWithoutResponse(CoapExchange exchange);

    /// <summary>
    /// Turns away a received request that nothing above can process (an endpoint without a request
    /// handler): RST for a CON (RFC 7252 section 4.2), silence for a NON; on a stream, which has no
    /// RST, 5.01 Not Implemented.
    /// </summary>
    void Reject(CoapExchange exchange);

    /// <summary>
    /// Sends the response to a received request. <paramref name="response"/> carries the code,
    /// options and payload, and may be a handler's shared message: the layer writes the request's
    /// token and the rest (piggybacked in the ACK, separate CON or NON with a new Message ID, or a
    /// plain frame on a stream) into the bytes it sends, and changes nothing on the message.
    /// </summary>
    /// <exception cref="ArgumentException">The response cannot be serialized or is too large; nothing was sent.</exception>
    void SendResponse(CoapExchange exchange, CoapMessage response);

    /// <summary>
    /// Sends a notification (RFC 7641 section 4.2) to the observer that registered through
    /// <paramref name="registration"/>'s request (its <see cref="CoapExchange.LowerState"/> says where):
    /// over UDP a CON or NON (as <paramref name="notification"/>'s type says) with a Message ID of its
    /// own, retransmitted until acknowledged when CON; on a stream a plain frame; with the registering
    /// request's token either way. Its fate goes to
    /// <paramref name="owner"/>.
    /// </summary>
    /// <exception cref="ArgumentException">The notification cannot be serialized or is too large; nothing was sent.</exception>
    void SendNotification(CoapExchange registration, CoapMessage notification, ICoapDeliveryListener owner);

    /// <summary>
    /// Checks that the peer is alive: an empty CON answered by RST (RFC 7252 section 4.3), or a Ping
    /// signal answered by Pong (RFC 8323 section 5.4).
    /// </summary>
    /// <returns>The round-trip time.</returns>
    Task<TimeSpan> PingAsync(CoapPeer peer, CancellationToken cancellationToken);
}

/// <summary>The exchange layer as the layer below sees it: where received requests and responses go.</summary>
internal interface IExchangeLayer
{
    /// <summary>A new request (duplicates were settled below). Return quickly: this runs on the receive path.</summary>
    void OnRequest(CoapExchange exchange);

    /// <summary>A response (piggybacked, separate, NON or on a stream).</summary>
    /// <returns>True when an outstanding request with its token took it; false when none did, so a CON gets RST.</returns>
    bool OnResponse(CoapPeer peer, CoapMessage response);

    /// <summary>The path to <paramref name="peer"/> is gone (a connection closed or aborted, a DTLS session ended): fail its exchanges with <paramref name="reason"/>.</summary>
    void OnPeerLost(CoapPeer peer, Exception reason);
}

/// <summary>
/// A request on its way out, as the layer below sees it: the message, the peer, a slot for the
/// lower layer's own state, and the callbacks through which that layer reports what happened.
/// </summary>
/// <remarks>
/// It is the call a stage sees (<see cref="CoapClientCall"/>, whose <see cref="CoapClientCall.Request"/> is the request as
/// sent, its token set; the lower layer sets the Message ID on datagram transports): one object per request, not two.
/// </remarks>
internal abstract class OutgoingRequest(CoapMessage request, CoapPeer peer) : CoapClientCall(request, peer)
{
    /// <summary>
    /// True when a stage above paces this request with others of one body (RFC 9177 section 7.2: MAX_PAYLOADS back to
    /// back, then NON_TIMEOUT_RANDOM), so a NON one takes no NSTART slot (RFC 7252 section 4.7): a Q-Block payload gets no
    /// response of its own that would free it.
    /// </summary>
    public virtual bool PacedAbove => false;

    /// <summary>The lower layer's per-request state (a retransmission, an NSTART slot, a connection); only it reads this.</summary>
    public object? LowerState { get; set; }

    /// <summary>
    /// The request was delivered and the response is now awaited without further transmissions: a CON
    /// was answered with an empty ACK (the response will be separate), a NON was sent, or a frame was
    /// written to a stream. The exchange layer starts its response timeout here.
    /// </summary>
    public abstract void OnAwaitingResponse();

    /// <summary>
    /// The request failed below: an RST (<see cref="CoapResetException"/>), no ACK after MAX_RETRANSMIT
    /// (<see cref="CoapTimeoutException"/>), the connection could not be opened or was lost, or the
    /// message exceeds what the peer accepts (<see cref="ArgumentException"/>).
    /// </summary>
    public abstract void OnFailed(Exception reason);
}
