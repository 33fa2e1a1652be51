using CoapNet.Channels;
using CoapNet.Messages;

namespace CoapNet.Messaging;

/// <summary>
/// A request this side sends and the wait for its response, as a <see cref="CoapStage"/> sees it: the caller's call, or a
/// follow-up a stage sent for it. Through it a stage learns what the path to the server takes, keeps its state for the call
/// (<see cref="Features"/>), says how many responses the call expects, sends follow-up requests through the stages below
/// it, and ends the call.
/// </summary>
/// <remarks>
/// Made by the endpoint, never by an application. Its members may be called from any thread. A call ends once: with a
/// response that reaches its top (the caller, or the stage that sent the follow-up), with <see cref="Fail"/>, with the
/// caller's cancellation (which fails every follow-up in flight too), or, for a call that expects several responses, when
/// its caller or the stage that opened it ends it; after that every member that sends does nothing.
/// </remarks>
public abstract class CoapClientCall : IFeatureOwner
{
    private FeatureEntry[]? _features;

    internal CoapClientCall(CoapMessage request, CoapPeer peer)
    {
        Request = request;
        Peer = peer;
    }

    /// <summary>
    /// The request as it went on the wire (its token assigned once sent): for a block-wise upload, its first block; for an
    /// OSCORE request, the protected one. A stage reads <see cref="RequestAt"/> instead.
    /// </summary>
    public CoapMessage Request { get; private protected set; }

    /// <summary>The server, with the session the call goes in.</summary>
    public CoapPeer Peer { get; }

    /// <summary>
    /// What stages and the caller keep for this call, keyed by type: the client puts what the caller asked of the transfer
    /// here when it starts the call; each stage keeps its own state under a type of its own. A follow-up is a call of its
    /// own, with features of its own.
    /// </summary>
    public CoapFeatures Features => new(this);

    /// <summary>True when the call goes over a connection transport (RFC 8323: reliable, ordered, no message types), as its message layer declares.</summary>
    public abstract bool IsReliable { get; }

    /// <summary>The BERT block size toward the server (RFC 8323 section 6), or 0 when BERT is not available (always over datagrams).</summary>
    public abstract int BertBlockSize { get; }

    /// <summary>
    /// How many responses the call expects under its token (default <see cref="CoapExpectedResponses.One"/>). A stage sets it
    /// before it passes the request on: <see cref="CoapExpectedResponses.None"/> when the server will not answer (RFC 7967),
    /// <see cref="CoapExpectedResponses.Several"/> when it will answer more than once under the token (RFC 9177 section
    /// 4.4). An observation's registration (RFC 7641) is a call its caller started with several.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is not one of the enumeration's.</exception>
    /// <exception cref="InvalidOperationException">The value is one and the call is an observation's registration, which expects several (or none).</exception>
    public abstract CoapExpectedResponses ExpectedResponses { get; set; }

    /// <summary>A stage's explanation, added to the message of the call's response timeout ("The request's No-Response option asked..."); null for none.</summary>
    public abstract string? TimeoutNote { get; set; }

    /// <inheritdoc/>
    ref FeatureEntry[]? IFeatureOwner.FeatureSlot => ref _features;

    /// <summary>The length of the token a request of this call (a follow-up) gets when it has none: what its size is counted with.</summary>
    internal abstract int NextTokenLength { get; }

    /// <summary>
    /// The request as <paramref name="stage"/> passed it on: the one the responses coming up to it answer, which its
    /// follow-ups repeat with changes (a Block2 number, an Echo value). Stages below it may have put messages of their own
    /// in its place (OSCORE a protected one, RFC 8613 section 4.1.3), which they see and it does not; only the one on the
    /// wire (<see cref="Request"/>) carries the token. For a stage the request has not reached yet, or one above the stage
    /// that sent this follow-up, the request as it was sent.
    /// </summary>
    /// <param name="stage">A stage of this call's endpoint.</param>
    /// <returns>The request as that stage passed it on.</returns>
    /// <exception cref="ArgumentException"><paramref name="stage"/> is not a stage of this call's endpoint, or is null.</exception>
    public abstract CoapMessage RequestAt(CoapStage stage);

    /// <summary>
    /// True when <paramref name="request"/> fits one message to the server: one datagram of the endpoint's size, or one
    /// frame within the server's CSM Max-Message-Size (its base value while none is known, RFC 8323 section 5.3.1); a
    /// token still to be assigned counted at its full length. Block-wise transfer asks before it splits a body.
    /// </summary>
    /// <param name="request">A request this stage may send.</param>
    /// <returns>True when it goes in one message.</returns>
    public abstract bool FitsOneMessage(CoapMessage request);

    /// <summary>
    /// Sends <paramref name="request"/> to the same server, in the same session, through the stages below
    /// <paramref name="from"/> only, and hands each response to it, once that response has come up through those stages,
    /// to <paramref name="onResponse"/> (on the thread it arrived on). The follow-up gets a fresh token when the request has
    /// none. Its failure fails this call; this call's end (its cancellation, a failure) ends the follow-up.
    /// </summary>
    /// <remarks>
    /// <paramref name="expected"/> says how many responses come: <see cref="CoapExpectedResponses.One"/> (the follow-up ends
    /// with it; the endpoint's response timeout bounds the wait), <see cref="CoapExpectedResponses.None"/>
    /// (<paramref name="onResponse"/> gets a 0.00 Empty message with the follow-up's token once the request is delivered),
    /// or <see cref="CoapExpectedResponses.Several"/> (each response with its token, until the returned handle is disposed
    /// or this call ends; no response timeout applies, the stage bounds the wait). Nothing is sent once the call has ended.
    /// </remarks>
    /// <param name="from">The stage that sends it: one of this endpoint's.</param>
    /// <param name="request">A CON or NON request; the stage's own message, not to be changed after.</param>
    /// <param name="onResponse">Gets the follow-up's response (or each of them).</param>
    /// <param name="expected">How many responses the follow-up expects.</param>
    /// <returns>A handle whose disposal ends the follow-up at once: its token stops matching, and no outcome comes. This call goes on.</returns>
    /// <exception cref="ArgumentException"><paramref name="from"/> is not a stage of this call's endpoint, or an argument is null.</exception>
    public abstract IDisposable SendFollowUp(CoapStage from, CoapMessage request, Action<CoapMessage> onResponse, CoapExpectedResponses expected = CoapExpectedResponses.One);

    /// <summary>
    /// Completes the call with <paramref name="response"/> as if it had come up to <paramref name="from"/>: through the
    /// stages above it to the caller. For a stage whose outcome came on a follow-up, not on the call's own token, or that
    /// answers the call itself.
    /// </summary>
    /// <param name="from">The stage the response goes up from: one of this endpoint's.</param>
    /// <param name="response">The outcome.</param>
    /// <exception cref="ArgumentException"><paramref name="from"/> is not a stage of this call's endpoint, or an argument is null.</exception>
    public abstract void PassUp(CoapStage from, CoapMessage response);

    /// <summary>Ends the call with <paramref name="exception"/> (its caller's task faults with it) and every follow-up it has in flight. Does nothing once the call has ended.</summary>
    /// <param name="exception">Why it failed.</param>
    public abstract void Fail(Exception exception);
}
