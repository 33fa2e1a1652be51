using System.Net;
using CoapNet.Channels;
using CoapNet.Messages;

namespace CoapNet.Messaging;

/// <summary>
/// A request received by a <see cref="CoapEndpoint"/>, and the way to answer it. Over UDP the
/// response is piggybacked in the ACK, or (after <see cref="Accept"/>) separate (RFC 7252 section
/// 5.2); over TCP it is simply the next frame with the request's token (RFC 8323 section 3.3).
/// </summary>
/// <remarks>
/// Thread-safe: the handler may answer from any thread, once. A <see cref="CoapStage"/> sees the exchange pass both ways:
/// it may answer it itself (<see cref="RespondFrom"/>), put a request of its own in place of the received one for the
/// stages above it and the handler (<see cref="ReplaceRequest(CoapStage, CoapMessage)"/>; each stage reads the request as it
/// came up to it with <see cref="RequestAt"/>), end it without an answer (<see cref="EndWithoutResponse"/>), answer the request again
/// later (<see cref="ForFurtherResponse"/>), and keep its state for it in <see cref="Features"/>.
/// </remarks>
public sealed class CoapExchange : IFeatureOwner
{
    // Every request allocates an exchange, so it is kept to 56 bytes (issue 11): the state says in one int whether the
    // response followed an empty ACK, and the arrival time is a 32-bit count of microseconds.
    private const int New = 0, Accepted = 1, Responded = 2, RespondedAfterAcknowledgement = 3, Ended = 4, EndedAfterAcknowledgement = 5;
    private int _state;

    // What only some requests need (a stage's state, a trace, route values, a stream body, a further response's listener),
    // kept by type in a list made on first use (CoapFeatures): every request allocates an exchange, so it holds only what
    // every request uses (issue 11).
    private FeatureEntry[]? _features;

    internal CoapExchange(CoapMessage request, PeerChannel channel)
    {
        Request = request;
        LowerState = channel;
    }

    /// <summary>
    /// The request as the application sees it, after every stage's replacement (for an upload that arrived in Block1 blocks,
    /// the whole reassembled request, RFC 7959 section 2.5; for an OSCORE request, the decrypted one). A stage reads
    /// <see cref="RequestAt"/> instead.
    /// </summary>
    public CoapMessage Request { get; private set; }

    /// <summary>Who sent it: transport, address and security context.</summary>
    public CoapPeer Peer => LowerState.Peer;

    /// <summary>The sender's address (<see cref="CoapPeer.EndPoint"/> of <see cref="Peer"/>).</summary>
    public IPEndPoint RemoteEndPoint => Peer.EndPoint;

    /// <summary>True when the request was confirmable (always false over a reliable transport, which has no message types).</summary>
    public bool IsConfirmable => Request.Type == CoapMessageType.Confirmable && !IsReliable;

    /// <summary>True once an empty ACK was sent, so the response will be separate.</summary>
    public bool IsAccepted => Volatile.Read(ref _state) == Accepted;

    /// <summary>True once a response was sent, or the exchange ended without one (<see cref="EndWithoutResponse"/>).</summary>
    public bool HasResponded => Volatile.Read(ref _state) >= Responded;

    /// <summary>
    /// What stages and the server keep for this exchange, keyed by type (a stage's state, what routing found, a handler's
    /// stream body). Empty, and costing nothing, until something is set. A further response's exchange
    /// (<see cref="ForFurtherResponse"/>) has features of its own.
    /// </summary>
    public CoapFeatures Features => new(this);

    /// <summary>True when the request came over a connection transport (RFC 8323: reliable, ordered, no message types), as its message layer declares.</summary>
    public bool IsReliable => LowerState.IsReliable;

    /// <summary>The BERT block size toward this peer (RFC 8323 section 6), or 0 when BERT is not available (always over datagrams).</summary>
    public int BertBlockSize => LowerState.Layer.BertBlockSize(Peer);

    /// <summary>
    /// True when this exchange carries a further response to its request (<see cref="ForFurtherResponse"/>): an Observe
    /// notification, a Q-Block2 block after the first. Its response goes out as a message of its own with the request's token.
    /// </summary>
    public bool IsFurtherResponse => GetFeature(typeof(FurtherResponseKey)) is not null;

    /// <inheritdoc/>
    ref FeatureEntry[]? IFeatureOwner.FeatureSlot => ref _features;

    /// <summary>Where the request came from and the answer goes: the channel over UDP, the connection over TCP (each knows its message layer).</summary>
    internal PeerChannel LowerState { get; }

    /// <summary>The layer below's number for this request (over UDP, its deduplication entry, where the reply is recorded for duplicates).</summary>
    internal long LowerTicket { get; set; }

    /// <summary>Set while the response is being sent: true when it follows an empty ACK, so it must be a separate message.</summary>
    internal bool RespondsAfterAcknowledgement => Volatile.Read(ref _state) is RespondedAfterAcknowledgement or EndedAfterAcknowledgement;

    /// <summary>When the server admitted the request (<see cref="System.Diagnostics.Stopwatch"/> ticks), for its duration metric.</summary>
    /// <remarks>
    /// Microseconds of <see cref="System.Diagnostics.Stopwatch"/> time, wrapping every 71 minutes: <see cref="ElapsedSinceArrival"/> is right for any
    /// request answered within that. 0 when not marked: the server marks it only while the duration metric has a listener.
    /// </remarks>
    internal uint ArrivedAt { get; private set; }

    /// <summary>Notes the time the server admitted the request.</summary>
    internal void MarkArrival() => ArrivedAt = Microseconds(System.Diagnostics.Stopwatch.GetTimestamp());

    /// <summary>The time since <see cref="MarkArrival"/>.</summary>
    internal TimeSpan ElapsedSinceArrival => TimeSpan.FromMicroseconds(unchecked(Microseconds(System.Diagnostics.Stopwatch.GetTimestamp()) - ArrivedAt));

    /// <summary>The stages the response passes on its way down: the layer above the one that made the exchange, when it has stages.</summary>
    internal ExchangeLayer? Layer => LowerState.Stages;

    /// <summary>
    /// An exchange for one more response to this request, answered later: an Observe notification (RFC 7641 section 4.2),
    /// a Q-Block2 block after the first or a 4.08 listing missing Q-Block1 blocks (RFC 9177 sections 4.4, 5). Answer it
    /// with <see cref="Respond"/> (through every stage) or <see cref="RespondFrom"/> (through the stages below a stage); it
    /// goes out as a message of its own with the request's token (over UDP a CON or NON as the response's type says, with a
    /// Message ID of its own, a CON retransmitted until acknowledged; on a connection a frame), and its fate goes to
    /// <paramref name="listener"/>. Its features start empty.
    /// </summary>
    /// <param name="listener">Learns whether it was delivered, rejected, failed or dropped by a stage.</param>
    /// <returns>A new exchange for the same request, peer and session.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="listener"/> is null.</exception>
    public CoapExchange ForFurtherResponse(ICoapDeliveryListener listener)
    {
        ArgumentNullException.ThrowIfNull(listener);
        CoapExchange further = new(Request, LowerState) { LowerTicket = LowerTicket };
        further.Features.SetCore(typeof(FurtherResponseKey), listener);
        if (GetFeature(typeof(Replacement)) is Replacement replaced)
        {
            // Each stage goes on seeing the request as it came up to it: below OSCORE, the protected registration.
            further.Features.SetCore(typeof(Replacement), replaced);
        }
        return further;
    }

    /// <summary>
    /// Acknowledges a confirmable request now with an empty ACK, so the client stops retransmitting
    /// while a slow handler works; the response then goes out as a separate confirmable message
    /// (RFC 7252 section 5.2.2). Does nothing for a non-confirmable request, over a reliable
    /// transport, or when already accepted or answered.
    /// </summary>
    public void Accept()
    {
        if (!IsConfirmable || Interlocked.CompareExchange(ref _state, Accepted, New) != New)
        {
            return;
        }

        LowerState.Layer.Acknowledge(this);
    }

    /// <summary>
    /// Sends the response; <paramref name="response"/> itself is not modified. The layers below set the
    /// type, Message ID and token on the wire: over UDP piggybacked in the ACK of a confirmable
    /// request not yet accepted, otherwise a separate CON (retransmitted until acknowledged) for a
    /// confirmable request or a NON for a non-confirmable one (RFC 7252 section 5.2.3).
    /// </summary>
    /// <param name="response">The response; its code must be a response code.</param>
    /// <exception cref="ArgumentException">The code is not a response code, or the message cannot be serialized.</exception>
    /// <exception cref="InvalidOperationException">A response was already sent.</exception>
    public void Respond(CoapMessage response) => Send(response, from: null);

    /// <summary>
    /// A stage's own answer to the request (a stored block, a 2.31 Continue, a 4.01 challenge): it goes down through the
    /// stages below <paramref name="stage"/> only, the ones the request came up through, never back through those above.
    /// </summary>
    /// <param name="stage">The stage that answers: one of this exchange's endpoint's.</param>
    /// <param name="response">The response; its code must be a response code.</param>
    /// <exception cref="ArgumentException">
    /// The stage is not one of this endpoint's, the code is not a response code, or the message cannot be sent.
    /// </exception>
    /// <exception cref="InvalidOperationException">A response was already sent.</exception>
    public void RespondFrom(CoapStage stage, CoapMessage response)
    {
        _ = IndexOf(stage);
        Send(response, stage);
    }

    /// <summary>
    /// The request as it came up to <paramref name="stage"/>: the received one, or the one the nearest stage below it put
    /// in its place (<see cref="ReplaceRequest(CoapStage, CoapMessage)"/>). A stage reads the request through this, on the
    /// way up and on the way down, so that it sees the message the responses it passes down answer: a stage below OSCORE
    /// sees the protected request (RFC 8613 section 4.1.3.4: outer block-wise fragments the OSCORE message), one above it
    /// the decrypted one. <see cref="Request"/> is what the application sees, after every replacement.
    /// </summary>
    /// <param name="stage">A stage of this exchange's endpoint.</param>
    /// <returns>The request as that stage sees it.</returns>
    /// <exception cref="ArgumentException">The stage is not one of the stages of the endpoint that received this request.</exception>
    public CoapMessage RequestAt(CoapStage stage)
    {
        int index = IndexOf(stage);

        // The replacements, newest (nearest the application) first: the stage sees what the lowest replacer at or above it
        // saw, or, above every replacer, the application's request.
        CoapMessage seen = Request;
        for (Replacement? replacement = GetFeature(typeof(Replacement)) as Replacement; replacement is not null && replacement.StageIndex <= index; replacement = replacement.Older)
        {
            seen = replacement.Seen;
        }

        return seen;
    }

    /// <summary>
    /// Puts <paramref name="request"/> in place of the request the stages above <paramref name="stage"/> and the handler
    /// see, as a stage does when it has joined the blocks of an upload (RFC 7959 section 2.5) or decrypted a protected
    /// request (RFC 8613 section 8.2); <paramref name="stage"/> itself and the stages below it go on seeing the request as it
    /// came up to them (<see cref="RequestAt"/>). It takes the received request's type, Message ID and token, by which the
    /// layers below answer it; the response still goes out on this exchange. Call it from
    /// <see cref="CoapStage.ReceiveRequest"/>, before passing the exchange on.
    /// </summary>
    /// <param name="stage">The stage that replaces the request: one of this exchange's endpoint's.</param>
    /// <param name="request">The stage's own request message, with a request code.</param>
    /// <exception cref="ArgumentException">
    /// The stage is not one of this endpoint's, the message is null, or its code is not a request method.
    /// </exception>
    /// <exception cref="InvalidOperationException">A stage above <paramref name="stage"/> has replaced the request already: it has passed this stage on its way up.</exception>
    public void ReplaceRequest(CoapStage stage, CoapMessage request)
    {
        int index = IndexOf(stage);
        ArgumentNullException.ThrowIfNull(request);
        if (!request.Code.IsRequest)
        {
            throw new ArgumentException($"{request.Code} is not a request method; a replaced request stays a request.", nameof(request));
        }

        Replacement? newest = GetFeature(typeof(Replacement)) as Replacement;
        if (newest is not null && newest.StageIndex < index)
        {
            throw new InvalidOperationException($"The stage {stage.GetType().Name} replaced the request after a stage above it had: a stage replaces the request on its way up, before passing it on.");
        }

        CoapMessage received = Request;
        request.Type = received.Type;
        request.MessageId = received.MessageId;
        request.Token = received.Token;
        if (newest?.StageIndex != index)
        {
            // A stage that replaces the request twice (Q-Block's own, then a joined body) keeps what it first saw.
            Features.SetCore(typeof(Replacement), new Replacement(index, received, newest));
        }

        Request = request;
    }

    /// <summary>
    /// Puts <paramref name="request"/> in place of the received one, as <see cref="ReplaceRequest(CoapStage, CoapMessage)"/>
    /// does, for a stage that authenticated the request itself, end to end (OSCORE, RFC 8613 section 8.2): the handler then
    /// sees the sender as the transport's peer with <paramref name="securityContext"/> in place of the transport's own
    /// (<c>request.Peer.Identity</c>, which routes that require authorization check). <see cref="Peer"/>, which the stages
    /// and the layers below key their state by, stays the transport's.
    /// </summary>
    /// <param name="stage">The stage that replaces the request: one of this exchange's endpoint's.</param>
    /// <param name="request">The stage's own request message, with a request code.</param>
    /// <param name="securityContext">
    /// What authenticated the request and whom; the stage keeps one per security association, since peers compare
    /// security contexts by reference.
    /// </param>
    /// <exception cref="ArgumentException">
    /// The stage is not one of this endpoint's, a message or context is null, or the code is not a request method.
    /// </exception>
    /// <exception cref="InvalidOperationException">A stage above <paramref name="stage"/> has replaced the request already.</exception>
    public void ReplaceRequest(CoapStage stage, CoapMessage request, CoapSecurityContext securityContext)
    {
        ArgumentNullException.ThrowIfNull(securityContext);
        ReplaceRequest(stage, request);
        CoapPeer transport = Peer;
        Features.SetCore(typeof(AuthenticatedPeerKey), new CoapPeer(transport.Scheme, transport.EndPoint, securityContext));
    }

    /// <summary>
    /// Ends the exchange without a response, for a stage that answers nothing (RFC 7967 section 2.1, a Q-Block1 block that
    /// gets no answer of its own): a confirmable request not yet acknowledged gets its empty ACK, recorded for its
    /// duplicates as a reply would be (RFC 7252 sections 4.2, 4.5); a NON gets nothing; on a connection the request stops
    /// counting as in flight. A further response's listener hears <see cref="ICoapDeliveryListener.OnDropped"/>. Call it
    /// in place of answering (from <see cref="CoapStage.ReceiveRequest"/>) or of passing a response on (from
    /// <see cref="CoapStage.SendResponse"/>), never after a response went below.
    /// </summary>
    /// <exception cref="InvalidOperationException">The exchange has already ended without a response.</exception>
    public void EndWithoutResponse()
    {
        int previous = Volatile.Read(ref _state);
        while (true)
        {
            if (previous >= Ended)
            {
                throw new InvalidOperationException("This exchange has already ended without a response.");
            }

            int ended = previous is Accepted or RespondedAfterAcknowledgement ? EndedAfterAcknowledgement : Ended;
            int seen = Interlocked.CompareExchange(ref _state, ended, previous);
            if (seen == previous)
            {
                break;
            }

            previous = seen;
        }

        if (GetFeature(typeof(FurtherResponseKey)) is ICoapDeliveryListener listener)
        {
            // Nothing was sent, so nothing below waits for it: only its listener hears.
            listener.OnDropped();
            return;
        }

        LowerState.Layer.EndWithoutResponse(this);
    }

    /// <summary>
    /// True when <paramref name="message"/> fits one message toward this peer: one datagram of the endpoint's size, or one
    /// frame within the peer's CSM Max-Message-Size (RFC 8323 section 5.3.1), with the request's token.
    /// </summary>
    /// <param name="message">A response this exchange may send.</param>
    /// <returns>True when it goes in one message.</returns>
    public bool FitsOneMessage(CoapMessage message) => LowerState.Fits(message, Request.Token.Length);

    private void Send(CoapMessage response, CoapStage? from)
    {
        ArgumentNullException.ThrowIfNull(response);
        if (!response.Code.IsResponse)
        {
            throw new ArgumentException($"{response.Code} is not a response code.", nameof(response));
        }

        // One compare-exchange to the responded state that says whether an empty ACK went first: a second answer
        // fails without ever writing the state, which the layer below reads while it sends the first.
        int previous = Volatile.Read(ref _state);
        while (true)
        {
            if (previous >= Responded)
            {
                throw new InvalidOperationException("This exchange was already answered.");
            }

            int seen = Interlocked.CompareExchange(ref _state, previous == Accepted ? RespondedAfterAcknowledgement : Responded, previous);
            if (seen == previous)
            {
                break;
            }

            previous = seen;
        }

        try
        {
            // The caller's message is not modified (a handler may return a shared, cached response), nor copied:
            // the layer below writes the request's token, and a type and Message ID of its choosing, into the
            // bytes it sends; a stage that changes the response (Observe, Block2) makes a copy of its own.
            if (Layer is { } layer)
            {
                layer.SendResponse(this, response, from);
            }
            else
            {
                SendBelowStages(response);
            }
        }
        catch (ArgumentException)
        {
            // Nothing was sent: the handler (or the endpoint's 5.00 fallback) may still answer.
            Volatile.Write(ref _state, previous);
            throw;
        }
    }

    /// <summary>Sends the response below the stages (the last stage's "next"): a further response as a message of its own, anything else as the response to the request.</summary>
    internal void SendBelowStages(CoapMessage wire)
    {
        if (GetFeature(typeof(FurtherResponseKey)) is ICoapDeliveryListener listener)
        {
            // The layer below sends a further response (a notification, a Q-Block2 block) as a message of its own with the token.
            LowerState.Layer.SendNotification(this, wire, listener);
            return;
        }

        LowerState.Layer.SendResponse(this, wire);
    }

    private static uint Microseconds(long timestamp) => unchecked((uint)(timestamp / TicksPerMicrosecond));

    private static readonly long TicksPerMicrosecond = Math.Max(1, System.Diagnostics.Stopwatch.Frequency / 1_000_000);

    /// <summary>
    /// The sender as the handler sees it: the transport's peer, or the one a stage authenticated end to end
    /// (<see cref="ReplaceRequest(CoapStage, CoapMessage, CoapSecurityContext)"/>).
    /// </summary>
    internal CoapPeer ApplicationPeer => GetFeature(typeof(AuthenticatedPeerKey)) as CoapPeer ?? Peer;

    /// <summary>
    /// What <see cref="Features"/> keeps under <paramref name="key"/>. Most exchanges keep nothing: this answers them from the
    /// field, before a lookup that reaches the list through the feature owner's interface (issue 39).
    /// </summary>
    private object? GetFeature(Type key) => Volatile.Read(ref _features) is null ? null : Features.GetCore(key);

    /// <summary>The position of <paramref name="stage"/> in the chain this exchange passes.</summary>
    /// <exception cref="ArgumentException">The stage is null or not one of this endpoint's.</exception>
    private int IndexOf(CoapStage stage)
    {
        ArgumentNullException.ThrowIfNull(stage);
        return Layer is { } layer && ReferenceEquals(stage.Layer, layer)
            ? stage.Index
            : throw new ArgumentException($"The stage {stage.GetType().Name} is not one of the stages of the endpoint that received this request.", nameof(stage));
    }

    /// <summary>
    /// A request a stage replaced (<see cref="ReplaceRequest(CoapStage, CoapMessage)"/>), kept in <see cref="Features"/>
    /// under this type: the stage's position, the request as it came up to it, and the replacement made below it before.
    /// Made only when a stage replaces the request, so an everyday exchange costs nothing more.
    /// </summary>
    private sealed class Replacement(int stageIndex, CoapMessage seen, Replacement? older)
    {
        public int StageIndex { get; } = stageIndex;

        public CoapMessage Seen { get; } = seen;

        public Replacement? Older { get; } = older;
    }

    /// <summary>The key of the peer a stage authenticated in <see cref="Features"/>: a type no one outside can name.</summary>
    private static class AuthenticatedPeerKey
    {
    }

    /// <summary>The key of a further response's listener in <see cref="Features"/>: a type no one outside can name, so no stage sets it by mistake.</summary>
    private static class FurtherResponseKey
    {
    }
}
