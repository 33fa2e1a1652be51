using CoapNet.Channels;
using CoapNet.Messages;

namespace CoapNet.Messaging;

/// <summary>
/// One stage of the stack above the exchange layer, as block-wise transfer (RFC 7959), Observe
/// (RFC 7641) and OSCORE (RFC 8613) are or will be: each sees requests and responses pass and may
/// split, join, answer or hold them, without touching the layers below. The default of every member
/// passes the message on unchanged.
/// </summary>
/// <remarks>
/// Stages are ordered from the application down: on the way out (a server response) the first
/// stage sees a message first; on the way in (a server request) the last stage sees it first. Every
/// hook is a synchronous callback, not an awaited task, so a message delivered by the layer below
/// reaches the handler, or completes a caller's task, within that delivery (deterministic in virtual
/// time).
/// </remarks>
internal abstract class CoapStage
{
    /// <summary>
    /// True when this stage processes critical option <paramref name="number"/> in responses, so the
    /// exchange layer does not reject a response for carrying it (RFC 7252 section 5.4.1).
    /// </summary>
    public virtual bool Processes(CoapOptionNumber number) => false;

    /// <summary>
    /// A request this side sends, on its way down to the layer below: pass it on with
    /// <paramref name="next"/>, changed or not (block-wise sends the first Block1 block of a body too
    /// large for one message, RFC 7959 section 2.5, and the rest as follow-ups when its responses
    /// come). Called once per top-level request that expects one response, before the size check, so
    /// that check applies to what goes on the wire. An exception from <paramref name="next"/> (a
    /// message that cannot be sent) reaches the caller.
    /// </summary>
    public virtual void SendRequest(IClientCall call, CoapMessage request, Action<IClientCall, CoapMessage> next) => next(call, request);

    /// <summary>
    /// A response to a request this side sent, on its way up to the caller: pass it on with
    /// <paramref name="next"/> (now, or after follow-up requests through <see cref="IClientCall.SendFollowUp"/>),
    /// or fail the call. Throwing fails the call with the exception.
    /// </summary>
    public virtual void ReceiveResponse(IClientCall call, CoapMessage response, Action<IClientCall, CoapMessage> next) => next(call, response);

    /// <summary>A received request on its way up to the handler; a stage may answer it itself instead of calling <paramref name="next"/>.</summary>
    public virtual void ReceiveRequest(CoapExchange exchange, Action<CoapExchange> next) => next(exchange);

    /// <summary>A response on its way down to the layer below.</summary>
    public virtual void SendResponse(CoapExchange exchange, CoapMessage response, Action<CoapExchange, CoapMessage> next) => next(exchange, response);

    /// <summary>The path to <paramref name="peer"/> is gone (a connection closed, a DTLS session ended): forget what the stage holds for it.</summary>
    public virtual void OnPeerLost(CoapPeer peer)
    {
        // Most stages hold nothing per peer beyond what expires by itself.
    }
}

/// <summary>A request this side sent, as a stage sees it while its response passes up.</summary>
internal interface IClientCall
{
    /// <summary>The request as sent (its token assigned): for a block-wise upload, its first block.</summary>
    CoapMessage Request { get; }

    /// <summary>The server.</summary>
    CoapPeer Peer { get; }

    /// <summary>True when the call goes over a connection transport (RFC 8323), as its message layer declares.</summary>
    bool IsReliable { get; }

    /// <summary>The BERT block size toward the server (RFC 8323 section 6), or 0 when BERT is not available.</summary>
    int BertBlockSize { get; }

    /// <summary>What the caller asked of the call's block-wise transfer (a streamed body, progress), or null.</summary>
    Blockwise.BlockTransfer? Transfer { get; }

    /// <summary>The state <paramref name="stage"/> keeps for this call (each stage has a slot of its own), or null.</summary>
    object? GetState(CoapStage stage);

    /// <summary>Sets the state <paramref name="stage"/> keeps for this call.</summary>
    void SetState(CoapStage stage, object? state);

    /// <summary>
    /// Sends <paramref name="request"/> to the same server through the stages below <paramref name="from"/> (a
    /// fresh token when it has none), and hands its response, once it has come up through those stages, to
    /// <paramref name="onResponse"/>; its failure, and the call's cancellation, fail the call.
    /// </summary>
    void SendFollowUp(CoapStage from, CoapMessage request, Action<CoapMessage> onResponse);

    /// <summary>
    /// True when <paramref name="request"/> fits one message to the server (one datagram, or one frame
    /// within its CSM Max-Message-Size), a token still to be assigned counted at its full length.
    /// </summary>
    bool FitsOneMessage(CoapMessage request);

    /// <summary>
    /// Keeps the call's token matched after a response: every further response with it comes up through the stages as
    /// the first did, until the call ends (RFC 9177 section 4.4: a server answers one Q-Block2 request with up to
    /// MAX_PAYLOADS responses, and a Q-Block1 body's answers may come with the token of any of its blocks). The exchange
    /// layer then sets no response timeout on the call: the stage bounds the wait itself; and a NON request of such a
    /// call takes no NSTART slot below, since the stage paces it (RFC 9177 section 7.2). Call before passing the request on.
    /// </summary>
    void ReceiveSeveral();

    /// <summary>
    /// Sends <paramref name="request"/> as <see cref="SendFollowUp"/> does, but its token stays matched after a response:
    /// each response with it comes up through the stages below <paramref name="from"/> to <paramref name="onEachResponse"/>
    /// until the returned handle is disposed or the call ends. No response timeout applies to it (the stage bounds the
    /// wait); its failure fails the call.
    /// </summary>
    /// <returns>Disposing it stops matching the follow-up's token.</returns>
    IDisposable SendOpenFollowUp(CoapStage from, CoapMessage request, Action<CoapMessage> onEachResponse);

    /// <summary>
    /// Completes the call with <paramref name="response"/> as if it had come up to <paramref name="from"/>: through the
    /// stages above it to the caller. For a stage whose outcome arrived on a follow-up, not on the call's own token.
    /// </summary>
    void PassUp(CoapStage from, CoapMessage response);

    /// <summary>Ends the call with <paramref name="exception"/>.</summary>
    void Fail(Exception exception);

    /// <summary>
    /// Says that no response will come (a stage knows it, as No-Response with every class suppressed,
    /// RFC 7967): once the request is delivered (a NON sent, a CON acknowledged with an empty ACK, a frame
    /// written) the call completes with <paramref name="result"/> (given the request's token when it has
    /// none) instead of awaiting a response. A response
    /// that arrives first (piggybacked in the ACK) still completes it as usual. Call before passing the
    /// request on.
    /// </summary>
    void CompleteOnDelivery(CoapMessage result);

    /// <summary>A stage's explanation, added to the message of the call's response timeout; null for none.</summary>
    string? TimeoutNote { get; set; }
}
