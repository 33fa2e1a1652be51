using System.Net;
using CoapNet.Channels;
using CoapNet.Messages;

namespace CoapNet.Messaging;

/// <summary>
/// A request received by a <see cref="CoapEndpoint"/>, and the way to answer it. Over UDP the
/// response is piggybacked in the ACK, or (after <see cref="Accept"/>) separate (RFC 7252 section
/// 5.2); over TCP it is simply the next frame with the request's token (RFC 8323 section 3.3).
/// </summary>
/// <remarks>Thread-safe: the handler may answer from any thread, once.</remarks>
public sealed class CoapExchange
{
    // Every request allocates an exchange, so it is kept to 56 bytes (issue 11): the state says in one int whether the
    // response followed an empty ACK, and the arrival time is a 32-bit count of microseconds.
    private const int New = 0, Accepted = 1, Responded = 2, RespondedAfterAcknowledgement = 3;
    private int _state;

    // What only some requests need (a trace, metrics, Observe, an upload, a stream body, route values), in an object of
    // its own made on first use: every request allocates an exchange, so it holds only what every request uses (issue 11).
    private Extras? _extras;

    internal CoapExchange(CoapMessage request, IPeerChannel channel)
    {
        Request = request;
        LowerState = channel;
    }

    /// <summary>The request (for an upload that arrived in Block1 blocks, the whole reassembled request, RFC 7959 section 2.5).</summary>
    public CoapMessage Request { get; private set; }

    /// <summary>Who sent it: transport, address and security context.</summary>
    public CoapPeer Peer => LowerState.Peer;

    /// <summary>The sender's address (<see cref="CoapPeer.EndPoint"/> of <see cref="Peer"/>).</summary>
    public IPEndPoint RemoteEndPoint => Peer.EndPoint;

    /// <summary>True when the request was confirmable (always false over a reliable transport, which has no message types).</summary>
    public bool IsConfirmable => Request.Type == CoapMessageType.Confirmable && !IsReliable;

    /// <summary>True once an empty ACK was sent, so the response will be separate.</summary>
    public bool IsAccepted => Volatile.Read(ref _state) == Accepted;

    /// <summary>True once a response was sent.</summary>
    public bool HasResponded => Volatile.Read(ref _state) >= Responded;

    /// <summary>Where the request came from and the answer goes: the channel over UDP, the connection over TCP (each knows its message layer).</summary>
    internal IPeerChannel LowerState { get; }

    /// <summary>The layer below's number for this request (over UDP, its deduplication entry, where the reply is recorded for duplicates).</summary>
    internal long LowerTicket { get; init; }

    /// <summary>Set while the response is being sent: true when it follows an empty ACK, so it must be a separate message.</summary>
    internal bool RespondsAfterAcknowledgement => Volatile.Read(ref _state) == RespondedAfterAcknowledgement;

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

    /// <summary>The server's activity for this request, when something listens.</summary>
    internal System.Diagnostics.Activity? Activity
    {
        get => _extras?.Activity;
        set => SetExtra(value, static (extras, v) => extras.Activity = v);
    }

    /// <summary>The template of the route that matched, for metrics and traces (set only when something listens); null before routing or when none did.</summary>
    internal string? Route
    {
        get => _extras?.Route;
        set => SetExtra(value, static (extras, v) => extras.Route = v);
    }

    /// <summary>The values the route's parameters captured; null when it has none.</summary>
    internal Dictionary<string, string>? RouteValues
    {
        get => _extras?.RouteValues;
        set => SetExtra(value, static (extras, v) => extras.RouteValues = v);
    }

    /// <summary>The Uri-Query arguments, decoded once when a handler first asks for one.</summary>
    internal string[]? QueryArguments
    {
        get => _extras?.QueryArguments;
        set => SetExtra(value, static (extras, v) => extras.QueryArguments = v);
    }

    /// <summary>A stage's note on this exchange (block-wise: the Block1 option its response echoes after a reassembled upload).</summary>
    internal object? StageState
    {
        get => _extras?.StageState;
        set => SetExtra(value, static (extras, v) => extras.StageState = v);
    }

    /// <summary>The stages the response passes on its way down: the layer above the one that made the exchange, when it has stages.</summary>
    internal ExchangeLayer? Layer => LowerState.Layer.Upper is ExchangeLayer { HasStages: true } layer ? layer : null;

    /// <summary>What the request observes when it registers (the server's route), set by routing when the resource is observable (RFC 7641).</summary>
    internal object? ObserveTarget
    {
        get => _extras?.ObserveTarget;
        set => SetExtra(value, static (extras, v) => extras.ObserveTarget = v);
    }

    /// <summary>Set on the exchange a server makes for one notification: its response goes to this observer as a notification (RFC 7641 section 4.2).</summary>
    internal Observe.Observation? Notification
    {
        get => _extras?.Notification;
        private init => SetExtra(value, static (extras, v) => extras.Notification = v);
    }

    /// <summary>Set on the exchange a stage makes for a further response to the same request: where that response's fate goes.</summary>
    internal INotificationOwner? FurtherResponseOwner
    {
        get => _extras?.FurtherResponseOwner;
        private init => SetExtra(value, static (extras, v) => extras.FurtherResponseOwner = v);
    }

    /// <summary>
    /// An exchange for one more response to this request (RFC 9177 section 4.4: the Q-Block2 blocks after the first, a
    /// 4.08 listing the missing Q-Block1 blocks after a block that got none): answered through the stages below the
    /// stage that makes it, then sent as a message of its own (its type as the response says) with the request's token.
    /// </summary>
    internal CoapExchange ForFurtherResponse(INotificationOwner owner)
        => new(Request, LowerState) { LowerTicket = LowerTicket, FurtherResponseOwner = owner };

    /// <summary>An exchange for one notification of <paramref name="observation"/>: the registering request again, answered toward the same observer.</summary>
    internal CoapExchange ForNotification(Observe.Observation observation)
        => new(Request, LowerState) { LowerTicket = LowerTicket, Notification = observation, ObserveTarget = observation.Target };

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
    public void Respond(CoapMessage response) => Respond(response, from: null);

    /// <summary>
    /// A stage's own answer to the request (a stored block, a 2.31 Continue): it goes down through the stages
    /// below <paramref name="stage"/> only, the ones the request came up through, never back through the top.
    /// </summary>
    internal void RespondFrom(CoapStage stage, CoapMessage response) => Respond(response, stage);

    private void Respond(CoapMessage response, CoapStage? from)
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
                LowerState.Layer.SendResponse(this, response);
            }
        }
        catch (ArgumentException)
        {
            // Nothing was sent: the handler (or the endpoint's 5.00 fallback) may still answer.
            Volatile.Write(ref _state, previous);
            throw;
        }
    }

    /// <summary>
    /// Replaces the request the layers above see, as a stage does when it has joined the blocks of an
    /// upload into one request (RFC 7959 section 2.5); the response still goes out on this exchange.
    /// </summary>
    internal void ReplaceRequest(CoapMessage request) => Request = request;

    /// <summary>The block size the handler chose for its response body (RFC 7959 section 2.2), or null for the server's.</summary>
    internal int? ResponseBlockSize
    {
        get => _extras?.ResponseBlockSize;
        set => SetExtra(value, static (extras, v) => extras.ResponseBlockSize = v);
    }

    /// <summary>A response body the server's handler gave as a seekable stream; the block-wise stage reads it block by block and closes it.</summary>
    internal Stream? ResponseBody
    {
        get => _extras?.ResponseBody;
        set => SetExtra(value, static (extras, v) => extras.ResponseBody = v);
    }

    /// <summary>True when the request came over a connection transport (RFC 8323), as its message layer declares.</summary>
    internal bool IsReliable => LowerState.Layer.IsReliable;

    /// <summary>The BERT block size toward this peer (RFC 8323 section 6), or 0 when BERT is not available.</summary>
    internal int BertBlockSize => LowerState.Layer.BertBlockSize(Peer);

    /// <summary>True when <paramref name="message"/> fits one message toward this peer (over TCP: within its CSM Max-Message-Size).</summary>
    internal bool FitsOneMessage(CoapMessage message) => LowerState.Layer.Fits(Peer, message, Request.Token.Length);

    /// <summary>Sends the response below the stages (the last stage's "next"): a notification as one, anything else as the response to the request.</summary>
    internal void SendBelowStages(CoapMessage wire)
    {
        if (Notification is { } observation)
        {
            LowerState.Layer.SendNotification(this, wire, observation);
            return;
        }

        if (FurtherResponseOwner is { } owner)
        {
            // The layer below sends a further response as it sends a notification: a message of its own with the token.
            LowerState.Layer.SendNotification(this, wire, owner);
            return;
        }

        LowerState.Layer.SendResponse(this, wire);
    }

    private static uint Microseconds(long timestamp) => unchecked((uint)(timestamp / TicksPerMicrosecond));

    private static readonly long TicksPerMicrosecond = Math.Max(1, System.Diagnostics.Stopwatch.Frequency / 1_000_000);

    /// <summary>Sets a field of <see cref="Extras"/>; a null value where nothing was set allocates nothing.</summary>
    private void SetExtra<T>(T? value, Action<Extras, T?> set)
    {
        Extras? extras = _extras;
        if (extras is null)
        {
            if (value is null)
            {
                return;
            }

            // The stages, routing and the answer set these one after another, never at once; a compare-exchange all the
            // same, so that two first writers could never each make an object and one lose its field.
            extras = Interlocked.CompareExchange(ref _extras, new Extras(), null) ?? _extras!;
        }

        set(extras, value);
    }

    private sealed class Extras
    {
        public System.Diagnostics.Activity? Activity;
        public object? StageState;
        public object? ObserveTarget;
        public Observe.Observation? Notification;
        public INotificationOwner? FurtherResponseOwner;
        public int? ResponseBlockSize;
        public Stream? ResponseBody;
        public string? Route;
        public Dictionary<string, string>? RouteValues;
        public string[]? QueryArguments;
    }
}
