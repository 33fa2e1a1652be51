using CoapNet.Channels;
using CoapNet.Messages;

namespace CoapNet.Messaging;

/// <summary>
/// One stage of an endpoint's stack, between the application (a <see cref="Server.CoapServer"/>'s handlers, a
/// <see cref="Client.CoapClient"/>'s caller) and the exchange layer that matches responses to requests by token. Block-wise
/// transfer (RFC 7959), Observe (RFC 7641), Q-Block (RFC 9177), No-Response (RFC 7967) and Echo (RFC 9175) are stages;
/// so can an application's own be (OSCORE, RFC 8613, a rate limit, a trace). A stage sees every message of every exchange
/// of its endpoint pass, on the client side and on the server side, and may pass it on unchanged, change it, answer it,
/// hold it, split it into several or join several into one. The default of every member passes the message on unchanged.
/// </summary>
/// <remarks>
/// <para>
/// <b>Order.</b> An endpoint's stages form one chain, from the application down to the wire (registered with
/// <see cref="CoapEndpointOptions.UseStage"/>). Going down (a request a client sends, a response a server sends) the first
/// stage sees a message first; coming up (a response a client receives, a request a server receives) the last stage sees
/// it first. A message a stage makes itself passes only the stages below it: its own answer
/// (<see cref="CoapExchange.RespondFrom"/>), its follow-up request (<see cref="CoapClientCall.SendFollowUp"/>), and the
/// response to that follow-up, which comes up through those stages to the stage and goes no further.
/// </para>
/// <para>
/// <b>Threads.</b> Every member is a synchronous callback: a message delivered by the layer below reaches the handler, or
/// completes the caller's task, within that delivery. <see cref="ReceiveRequest"/> and <see cref="ReceiveResponse"/> run
/// on the transport's receive thread (or a connection's reading task); <see cref="SendRequest"/> on the caller's thread,
/// or for a follow-up on the thread of the stage that sent it; <see cref="SendResponse"/> on the thread that answers (the
/// handler's, the receive thread, or a timer for a response a stage sends later). A stage's own timers call it on the
/// clock's thread. Several exchanges pass at once on different threads, so a stage keeps its shared state under a lock of
/// its own, never held while it calls <c>next</c> or the layers below. A stage must not block: a slow operation holds
/// the receive thread and every exchange behind it; a stage that must wait holds the message and passes it on later
/// (from a timer or a task), which the contract allows.
/// </para>
/// <para>
/// <b>Cancellation.</b> A client call ends when its caller cancels it, on the caller's thread, at any moment: the call
/// fails with <see cref="OperationCanceledException"/>, and so does every follow-up it has in flight. A stage that holds
/// a message or runs a timer for the call is not told: whatever it sends, passes up or fails through the ended call later
/// does nothing, so its timer's next turn is harmless, and it should bound how long it holds anything. A response already
/// on its way may still reach <see cref="ReceiveResponse"/> once. A server's exchange is not canceled: it ends when it is
/// answered or ended without an answer.
/// </para>
/// <para>
/// <b>Messages.</b> A stage passes each message on at most once, or answers it, or drops it (see each member). It must not
/// keep or change a message after passing it on: the layers below may serialize it on another thread, and a handler's
/// response may be a shared, cached message, so a stage that changes a response passes on a copy
/// (<see cref="CoapMessage.CopyWithout(CoapOptionNumber)"/>). It may pass on a message of its own in place of the one it got, with another
/// code and other options (OSCORE replaces a request's code with POST or FETCH and moves the options into a ciphertext,
/// RFC 8613 section 4.1.3, and a response's with 2.04 or 2.05).
/// </para>
/// <para>
/// <b>The request each stage sees.</b> A request a stage puts in place of another is seen by the stages above it only;
/// the stage and those below it keep seeing the one they passed, so each stage's response and follow-ups match the
/// message on its own side. On a server, <see cref="CoapExchange.RequestAt"/> is the request as it came up to a stage
/// (<see cref="CoapExchange.Request"/> the application's); on a client, <see cref="CoapClientCall.RequestAt"/> is the
/// request as a stage passed it on, the one the responses coming up to it answer (<see cref="CoapClientCall.Request"/>
/// the one on the wire). Below OSCORE that is the protected message, which an outer block-wise stage cuts and joins;
/// above it, the plaintext, which the inner one does (RFC 8613 section 4.1.3.4).
/// </para>
/// <para>
/// <b>State.</b> A stage made for one endpoint serves only it (its factory makes a new one per endpoint). What it knows
/// of one exchange it keeps in that exchange's <see cref="CoapExchange.Features"/> or that call's
/// <see cref="CoapClientCall.Features"/>, under a type of its own; state across exchanges (per peer, per resource) it
/// keeps itself, bounded, so a peer cannot make it grow without limit, and forgets a peer in <see cref="OnPeerLost"/>.
/// </para>
/// <para>
/// <b>Failures.</b> An exception from <see cref="ReceiveResponse"/> fails the call with it. An exception from
/// <see cref="ReceiveRequest"/> is logged and answered 5.00 Internal Server Error, as a handler's is. An
/// <see cref="ArgumentException"/> from <see cref="SendRequest"/> or <see cref="SendResponse"/> says the message cannot be
/// sent (too large, malformed) and reaches whoever sent it; a stage throws nothing else there.
/// </para>
/// </remarks>
public abstract class CoapStage
{
    /// <summary>Makes a stage; register it with <see cref="CoapEndpointOptions.UseStage"/> through a factory.</summary>
    protected CoapStage()
    {
    }

    /// <summary>The exchange layer whose chain holds this stage; set once, when the endpoint assembles its chain.</summary>
    internal ExchangeLayer? Layer { get; private set; }

    /// <summary>This stage's position in <see cref="Layer"/>'s chain, from the application down.</summary>
    internal int Index { get; private set; }

    /// <summary>
    /// True when this stage processes critical option <paramref name="number"/> in responses, so the exchange layer does
    /// not reject a response for carrying it (RFC 7252 section 5.4.1: a critical option nobody processes makes a response
    /// one to reject). Asked for each critical option of each response; answer from a constant or a switch.
    /// </summary>
    /// <param name="number">A critical option's number.</param>
    /// <returns>True when this stage handles that option.</returns>
    public virtual bool Processes(CoapOptionNumber number) => false;

    /// <summary>
    /// A request this side sends, on its way down: pass it on with <paramref name="next"/> (changed or not, or a message of
    /// the stage's own in its place), or end the call with <see cref="CoapClientCall.Fail"/>, or answer it yourself with
    /// <see cref="CoapClientCall.PassUp"/>. Block-wise transfer passes on only the first Block1 block of a body too large
    /// for one message (RFC 7959 section 2.5) and sends the rest as follow-ups as their answers come.
    /// </summary>
    /// <remarks>
    /// Called once per call the application starts and per follow-up of a stage above this one, on the caller's thread,
    /// before the layers below check the size, so that check applies to what goes on the wire. Set what the call expects
    /// (<see cref="CoapClientCall.ExpectedResponses"/>) before passing the request on. An exception from
    /// <paramref name="next"/> (a message that cannot be sent) reaches the caller; let it pass.
    /// </remarks>
    /// <param name="call">The call: its peer, features and follow-ups.</param>
    /// <param name="request">The request as the stages above passed it.</param>
    /// <param name="next">Passes a request on to the stage below; built once per stage, so it costs nothing per call.</param>
    public virtual void SendRequest(CoapClientCall call, CoapMessage request, Action<CoapClientCall, CoapMessage> next)
        => next(call, request);

    /// <summary>
    /// A response to a request this side sent, on its way up to the caller (or, for a follow-up, to the stage that sent
    /// it): pass it on with <paramref name="next"/>, now or after follow-up requests of the stage's own
    /// (<see cref="CoapClientCall.SendFollowUp"/>); or drop it (a stale notification, RFC 7641 section 3.4); or end the
    /// call with <see cref="CoapClientCall.Fail"/>. Throwing fails the call with the exception.
    /// </summary>
    /// <remarks>
    /// Runs on the transport's receive thread, or on the thread of a stage below that held the response. A call that
    /// expects several responses (<see cref="CoapExpectedResponses.Several"/>) brings each here in turn.
    /// </remarks>
    /// <param name="call">The call the response answers.</param>
    /// <param name="response">The response as the stages below passed it.</param>
    /// <param name="next">Passes a response on to the stage above.</param>
    public virtual void ReceiveResponse(CoapClientCall call, CoapMessage response, Action<CoapClientCall, CoapMessage> next)
        => next(call, response);

    /// <summary>
    /// A received request on its way up to the handler, as it came up to this stage (<see cref="CoapExchange.RequestAt"/>):
    /// pass it on with <paramref name="next"/> (after <see cref="CoapExchange.ReplaceRequest(CoapStage, CoapMessage)"/> for a
    /// request of the stage's own, as a joined upload or a decrypted one, which only the stages above see);
    /// or answer it yourself with <see cref="CoapExchange.RespondFrom"/>; or end it without an answer
    /// (<see cref="CoapExchange.EndWithoutResponse"/>), as a Q-Block1 block that is kept for the body it belongs to.
    /// </summary>
    /// <remarks>Runs on the transport's receive thread; return quickly.</remarks>
    /// <param name="exchange">The request and the way to answer it.</param>
    /// <param name="next">Passes the exchange on to the stage above.</param>
    public virtual void ReceiveRequest(CoapExchange exchange, Action<CoapExchange> next)
        => next(exchange);

    /// <summary>
    /// A response on its way down to the layer below: pass it on with <paramref name="next"/> (changed on a copy, or a
    /// message of the stage's own in its place, or several: the first Block2 block now and the rest as they are asked
    /// for), or drop it with <see cref="CoapExchange.EndWithoutResponse"/> (No-Response, RFC 7967), which a stage that does
    /// not pass a response on must call, so that a confirmable request still gets its acknowledgement and a further
    /// response's listener hears that it was not sent.
    /// </summary>
    /// <remarks>
    /// Runs on the thread that answers: the handler's, the receive thread, or a timer's. A further response
    /// (<see cref="CoapExchange.IsFurtherResponse"/>: an Observe notification, a Q-Block2 block after the first) passes
    /// here as a response of its own exchange. An <see cref="ArgumentException"/> says the response cannot be sent.
    /// </remarks>
    /// <param name="exchange">The exchange the response answers.</param>
    /// <param name="response">The response as the stages above passed it; perhaps a handler's shared message.</param>
    /// <param name="next">Passes a response on to the stage below.</param>
    public virtual void SendResponse(CoapExchange exchange, CoapMessage response, Action<CoapExchange, CoapMessage> next)
        => next(exchange, response);

    /// <summary>
    /// The path to <paramref name="peer"/> is gone (a connection closed, a DTLS session ended): forget what the stage
    /// holds for it. The peer's calls have failed already; its exchanges get no more messages.
    /// </summary>
    /// <param name="peer">The peer, with the session it had.</param>
    public virtual void OnPeerLost(CoapPeer peer)
    {
        // Most stages hold nothing per peer beyond what expires by itself.
    }

    /// <summary>
    /// Which of the server-side members a built-in stage needs called on an endpoint whose transport is reliable or not
    /// (<paramref name="reliable"/>): one that would pass every received request, or every response, on unchanged says so,
    /// and the chain goes past it without the call and its hop (issue 39). Asked once, when the chain is assembled, so it
    /// answers from the options as they are then. An application's stage is always called.
    /// </summary>
    /// <param name="reliable">True over a connection transport (RFC 8323).</param>
    /// <returns>The members to call.</returns>
    internal virtual ServerPaths UsedServerPaths(bool reliable) => ServerPaths.Requests | ServerPaths.Responses;

    /// <summary>Puts this stage at <paramref name="index"/> of <paramref name="layer"/>'s chain; once.</summary>
    /// <exception cref="ArgumentException">The stage is already in a chain (this endpoint's or another's).</exception>
    internal void Join(ExchangeLayer layer, int index, string name)
    {
        if (Layer is not null)
        {
            throw new ArgumentException(
                $"The stage '{name}' ({GetType().Name}) is already in an endpoint's chain: its factory must make a new stage each time it is called, one per endpoint.",
                "factory");
        }

        Layer = layer;
        Index = index;
    }
}

/// <summary>The server-side members of a stage (<see cref="CoapStage.UsedServerPaths"/>).</summary>
[Flags]
internal enum ServerPaths
{
    /// <summary>Neither: the stage passes requests and responses on unchanged.</summary>
    None = 0,

    /// <summary><see cref="CoapStage.ReceiveRequest"/>.</summary>
    Requests = 1,

    /// <summary><see cref="CoapStage.SendResponse"/>.</summary>
    Responses = 2,
}
