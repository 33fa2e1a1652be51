using System.Diagnostics;
using CoapNet.Channels;
using CoapNet.Diagnostics;
using CoapNet.Messages;

namespace CoapNet.Messaging;

internal sealed partial class ExchangeLayer
{
    /// <summary>
    /// One request we sent and the response we wait for: registered under its token until a response
    /// arrives, the layer below reports a failure, the response timeout fires, or the caller cancels.
    /// </summary>
    /// <remarks>
    /// An exchange given a handler for later responses carries many (as Observe notifications will,
    /// RFC 7641 section 3): the first completes <see cref="Completion"/> and ends the request below
    /// (its retransmission and NSTART slot), and the exchange stays registered under its token,
    /// handing every later response to that handler, until it is canceled or the peer is lost.
    /// </remarks>
    private sealed class ClientExchange : OutgoingRequest
    {
        private readonly ExchangeLayer _layer;

        // The request as the caller, or the stage that sent this follow-up, sent it.
        private readonly CoapMessage _sent;
        private readonly ManyResponses? _laterResponses;
        private readonly Action<CoapMessage>? _onFollowUpResponse;
        private readonly ClientExchange? _parent;
        private readonly CancellationToken _cancellationToken;
        // The follow-ups in flight: several when a stage keeps more than one outstanding (a windowed Block2 download);
        // guarded by the list itself, pruned of finished ones as new ones start.
        private List<ClientExchange>? _followUps;
        private int _releasedBelow;
        private readonly long _started = Stopwatch.GetTimestamp();
        private Activity? _activity;
        private int _responded;
        private readonly TaskCompletionSource<CoapMessage> _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private ITimer? _responseTimer;
        private int _finished;
        private bool _opened;
        private CancellationTokenRegistration _registration;
        private string? _timeoutNote;

        // How many responses the call expects (CoapExpectedResponses): with several (RFC 7641 notifications, RFC 9177
        // section 4.4) its token stays matched after a response; the follow-ups of this call that expect several too are
        // ended with it.
        private int _expected;
        private List<ClientExchange>? _openFollowUps;
        private CoapCode? _lastCode;

        // The requests stages passed on in place of the one they got (OSCORE's protected one, a first Block1 block), newest
        // (nearest the wire) first; null while every stage passed on what it got, as an everyday request's do.
        private PassedOn? _passedOn;

        public ClientExchange(ExchangeLayer layer, CoapMessage request, CoapPeer peer, ManyResponses? laterResponses, ClientExchange? parent, int origin, Action<CoapMessage>? onFollowUpResponse, CoapExpectedResponses expected, CancellationToken cancellationToken)
            : base(request, peer)
        {
            _sent = request;
            _layer = layer;
            Origin = origin;
            _laterResponses = laterResponses;
            _parent = parent;
            _onFollowUpResponse = onFollowUpResponse;
            _expected = (int)expected;
            _cancellationToken = cancellationToken;
        }

        public TokenKey Key { get; private set; }

        /// <summary>The position of the stage that sent this request (a follow-up), or -1 for the caller's: its response goes up to there.</summary>
        public int Origin { get; }

        public Task<CoapMessage> Completion => _completion.Task;

        /// <summary>True once the call has ended (answered, failed or canceled).</summary>
        public bool IsFinished => Volatile.Read(ref _finished) != 0;

        /// <summary>The request that goes on the wire (a stage may have replaced the caller's) and its token: the exchange begins. Called under the layer's lock.</summary>
        public void Open(CoapMessage request, TokenKey key)
        {
            Request = request;
            Key = key;
            _opened = true;

            // The activity spans the exchange, not the caller's synchronous part: the caller's current activity stays current.
            Activity? outer = Activity.Current;
            _activity = CoapInstrumentation.StartRequestActivity(request, Peer, ActivityKind.Client);
            Activity.Current = outer;
            CoapInstrumentation.ActiveExchangeCounter.Add(1);
        }

        /// <inheritdoc/>
        public override CoapMessage RequestAt(CoapStage stage)
        {
            int below = _layer.IndexOf(stage, nameof(stage)) + 1;
            for (PassedOn? passed = Volatile.Read(ref _passedOn); passed is not null; passed = passed.Older)
            {
                if (passed.Index <= below)
                {
                    return passed.Request;
                }
            }

            return _sent;
        }

        /// <summary>
        /// Notes <paramref name="request"/> on its way to the stage at <paramref name="index"/> (the end of the chain: the
        /// wire): a message of the stage above's own, when it is not the one that stage got. Called from the one thread
        /// the request goes down on.
        /// </summary>
        public void Passing(int index, CoapMessage request)
        {
            PassedOn? newest = _passedOn;
            if (!ReferenceEquals(request, newest?.Request ?? _sent))
            {
                Volatile.Write(ref _passedOn, new PassedOn(index, request, newest));
            }
        }

        /// <inheritdoc/>
        public override int BertBlockSize => _layer._lower.BertBlockSize(Peer);

        /// <inheritdoc/>
        public override bool IsReliable => _layer._lower.IsReliable;

        /// <inheritdoc/>
        internal override int NextTokenLength => _layer.TokenLengthFor(Peer);

        /// <inheritdoc/>
        public override string? TimeoutNote
        {
            get => Volatile.Read(ref _timeoutNote);
            set => Volatile.Write(ref _timeoutNote, value);
        }

        /// <inheritdoc/>
        public override CoapExpectedResponses ExpectedResponses
        {
            get => (CoapExpectedResponses)Volatile.Read(ref _expected);
            set
            {
                if (value is not (CoapExpectedResponses.One or CoapExpectedResponses.None or CoapExpectedResponses.Several))
                {
                    throw new ArgumentOutOfRangeException(nameof(value), value, "A call expects one response, none or several.");
                }

                if (_laterResponses is not null && value == CoapExpectedResponses.One)
                {
                    // An observation's caller reads its notifications as later responses: one would leave it waiting.
                    throw new InvalidOperationException("This call is an observation's registration (RFC 7641): it expects several responses, its notifications, or none.");
                }

                Volatile.Write(ref _expected, (int)value);
            }
        }

        /// <summary>True when a stage asked for several responses (not the caller, as an observation does): that stage bounds the wait and paces the requests.</summary>
        private bool SeveralForStage => Volatile.Read(ref _expected) == (int)CoapExpectedResponses.Several && _laterResponses is null;

        /// <inheritdoc/>
        public override bool FitsOneMessage(CoapMessage request)
        {
            ArgumentNullException.ThrowIfNull(request);
            return _layer.CheckSize(Peer, request, throwWhenTooLarge: false);
        }

        /// <summary>Lets the caller's token cancel the call; once (a call that waited for its peer's limits registers before it is sent).</summary>
        public void RegisterCancellation()
        {
            CancellationToken cancellationToken = _cancellationToken;

            // A follow-up is canceled through the call it serves, which passes its failure on.
            if (_parent is null && cancellationToken.CanBeCanceled && _registration.Equals(default))
            {
                _registration = cancellationToken.UnsafeRegister(
                    static (state, token) => ((ClientExchange)state!).Fail(new OperationCanceledException(token)),
                    this);
            }
        }

        /// <inheritdoc/>
        public override bool PacedAbove => SeveralForStage;

        /// <inheritdoc/>
        public override void PassUp(CoapStage from, CoapMessage response)
        {
            int index = _layer.IndexOf(from, nameof(from));
            ArgumentNullException.ThrowIfNull(response);
            _layer.ReceiveResponseThroughStages(index - 1, this, response);
        }

        /// <summary>Notes an open follow-up of this call, ended when the call ends.</summary>
        public void AddOpenFollowUp(ClientExchange followUp)
        {
            lock (this)
            {
                (_openFollowUps ??= []).Add(followUp);
            }
        }

        /// <summary>
        /// Ends an open follow-up without an outcome: its token stops matching and what it holds below is freed. Its
        /// call goes on. Idempotent.
        /// </summary>
        public void End()
        {
            if (Interlocked.Exchange(ref _finished, 1) != 0)
            {
                return;
            }

            ReleaseBelow();
            _registration.Dispose();
            if (_lastCode is CoapCode code)
            {
                Record(code, null);
            }

            if (_parent is { } parent)
            {
                lock (parent)
                {
                    parent._openFollowUps?.Remove(this);
                }
            }
        }

        public override void OnAwaitingResponse()
        {
            if (Volatile.Read(ref _expected) == (int)CoapExpectedResponses.None)
            {
                // A stage said no response will come (RFC 7967): delivered is done, with an Empty message naming the request by its token.
                CoapMessage request = Request;
                Complete(new CoapMessage { Type = request.Type, Code = CoapCode.Empty, Token = request.Token });
                return;
            }

            if (SeveralForStage)
            {
                // The stage that keeps the token open bounds the wait for its responses (RFC 9177 section 7.2 timers).
                return;
            }

            ITimer timer = _layer._time.CreateTimer(
                static state =>
                {
                    ClientExchange exchange = (ClientExchange)state!;
                    string note = exchange.TimeoutNote is { } text ? " " + text : string.Empty;
                    exchange.Fail(new CoapTimeoutException($"No response from {exchange.Peer.EndPoint} to {exchange.Request.Code} within {exchange._layer._responseTimeout}.{note}", exchange.Peer.EndPoint));
                },
                this,
                _layer._responseTimeout,
                Timeout.InfiniteTimeSpan);

            // A response may already have ended the exchange (a separate response before the empty ACK).
            if (Interlocked.CompareExchange(ref _responseTimer, timer, null) is not null || Volatile.Read(ref _finished) != 0)
            {
                timer.Dispose();
            }
        }

        public override void OnFailed(Exception reason) => Fail(reason);

        public void OnResponse(CoapMessage response)
        {
            if (Volatile.Read(ref _finished) != 0)
            {
                return;
            }

            if (_laterResponses is not null)
            {
                // The request is answered: below, its retransmission and NSTART slot end; here it stays
                // registered, and every response (the first and each later one) passes the stages.
                _layer._lower.EndRequest(this);
                Interlocked.Exchange(ref _responseTimer, DisposedTimer.Instance)?.Dispose();
                _layer.ReceiveResponseThroughStages(this, response);
                return;
            }

            if (Volatile.Read(ref _expected) == (int)CoapExpectedResponses.Several)
            {
                // The request is answered below (its retransmission and NSTART slot end), and its token stays matched:
                // more responses are coming with it (RFC 9177 section 4.4).
                _lastCode = response.Code;
                _layer._lower.EndRequest(this);
                _layer.ReceiveResponseThroughStages(this, response);
                return;
            }

            // The request is answered below; the caller's outcome may still take more exchanges (stages). A stage's
            // follow-up passes the stages below that stage, and stops at it (Complete), never going up the chain again.
            ReleaseBelow();
            _layer.ReceiveResponseThroughStages(this, response);
        }

        /// <summary>The outcome: the response, after every stage below the request's sender had its say; to the caller, or to the stage that sent a follow-up.</summary>
        public void Complete(CoapMessage response)
        {
            if (_laterResponses is not null)
            {
                if (Interlocked.Exchange(ref _responded, 1) == 0)
                {
                    Record(response.Code, null);
                    _completion.TrySetResult(response);
                }
                else if (Volatile.Read(ref _finished) == 0)
                {
                    _laterResponses.Later(response);
                }

                return;
            }

            if (_onFollowUpResponse is not null && Volatile.Read(ref _expected) == (int)CoapExpectedResponses.Several)
            {
                // An open follow-up hands each response to its stage and goes on until the stage or its call ends it.
                if (Volatile.Read(ref _finished) == 0)
                {
                    _onFollowUpResponse(response);
                }

                return;
            }

            if (Interlocked.Exchange(ref _finished, 1) != 0)
            {
                return;
            }

            ReleaseBelow();
            _registration.Dispose();
            Record(response.Code, null);
            if (_onFollowUpResponse is not null)
            {
                _onFollowUpResponse(response);
                return;
            }

            _completion.TrySetResult(response);
        }

        /// <inheritdoc/>
        public override IDisposable SendFollowUp(CoapStage from, CoapMessage request, Action<CoapMessage> onResponse, CoapExpectedResponses expected = CoapExpectedResponses.One)
        {
            int index = _layer.IndexOf(from, nameof(from));
            ArgumentNullException.ThrowIfNull(request);
            ArgumentNullException.ThrowIfNull(onResponse);
            if (expected is not (CoapExpectedResponses.One or CoapExpectedResponses.None or CoapExpectedResponses.Several))
            {
                throw new ArgumentOutOfRangeException(nameof(expected), expected, "A follow-up expects one response, none or several.");
            }

            if (Volatile.Read(ref _finished) != 0)
            {
                return DisposedTimer.Instance;
            }

            ClientExchange followUp;
            try
            {
                followUp = _layer.Begin(request, Peer, null, _cancellationToken, this, _layer._stages[index], onResponse, expected);
            }
            catch (Exception e) when (e is ArgumentException or ObjectDisposedException)
            {
                // A follow-up that cannot be sent (too large, the endpoint disposed) fails the call it serves.
                Fail(e);
                return DisposedTimer.Instance;
            }

            if (expected == CoapExpectedResponses.Several)
            {
                if (Volatile.Read(ref _finished) != 0)
                {
                    // The call ended meanwhile: so does the follow-up.
                    followUp.End();
                }

                return new FollowUpHandle(followUp);
            }

            List<ClientExchange> followUps = LazyInitializer.EnsureInitialized(ref _followUps);
            lock (followUps)
            {
                followUps.RemoveAll(static f => Volatile.Read(ref f._finished) != 0);
                followUps.Add(followUp);
            }

            if (Volatile.Read(ref _finished) != 0)
            {
                // Canceled meanwhile: the follow-up ends with the call.
                followUp.Fail(new OperationCanceledException(_cancellationToken));
            }

            return new FollowUpHandle(followUp);
        }

        /// <inheritdoc/>
        public override void Fail(Exception exception)
        {
            ArgumentNullException.ThrowIfNull(exception);
            if (Interlocked.Exchange(ref _finished, 1) != 0)
            {
                return;
            }

            ReleaseBelow();
            _registration.Dispose();
            if (Volatile.Read(ref _responded) == 0)
            {
                Record(default, exception);
            }

            // The follow-ups in flight end with their call; a follow-up's failure is its call's.
            if (Volatile.Read(ref _followUps) is { } followUps)
            {
                ClientExchange[] inFlight;
                lock (followUps)
                {
                    inFlight = [.. followUps];
                }

                foreach (ClientExchange followUp in inFlight)
                {
                    followUp.Fail(exception);
                }
            }

            if (_parent is not null)
            {
                _parent.Fail(exception);
                return;
            }

            if (Volatile.Read(ref _responded) != 0)
            {
                // Past the first response of an exchange that carries many: its caller hears of the end this way.
                if (exception is not OperationCanceledException)
                {
                    _laterResponses?.FailedLater?.Invoke(exception);
                }

                return;
            }

            if (exception is OperationCanceledException canceled)
            {
                _completion.TrySetCanceled(canceled.CancellationToken);
            }
            else
            {
                _completion.TrySetException(exception);
            }
        }

        /// <summary>The request's count, duration and activity: with the response code, or with the failure.</summary>
        private void Record(CoapCode code, Exception? failure)
        {
            string method = CoapInstrumentation.MethodName(Request.Code);
            string outcome = failure is null ? CoapInstrumentation.CodeName(code) : failure.GetType().Name;
            TagList tags = new()
            {
                { "coap.method", method },
                { failure is null ? "coap.response.code" : "error.type", outcome },
                { "url.scheme", Peer.Scheme },
            };
            CoapInstrumentation.ClientRequestCounter.Add(1, tags);
            CoapInstrumentation.ClientDuration.Record(Stopwatch.GetElapsedTime(_started).TotalSeconds, tags);
            if (_activity is null)
            {
                return;
            }

            _activity.SetTag(failure is null ? "coap.response.code" : "error.type", outcome);
            if (failure is not null || code.Class == 5)
            {
                _activity.SetStatus(ActivityStatusCode.Error, failure?.Message);
            }

            // Stopping makes the parent current only where this activity is current, which it is nowhere.
            Activity? outer = Activity.Current;
            _activity.Stop();
            Activity.Current = outer;
        }

        /// <summary>Frees what the request holds: its token, its state below (retransmission, NSTART slot), its response timer. Idempotent.</summary>
        private void ReleaseBelow()
        {
            if (Interlocked.Exchange(ref _releasedBelow, 1) != 0)
            {
                return;
            }

            _layer.Remove(this);
            if (_opened)
            {
                // A call that ended before it began (canceled while it waited for its peer's limits) was never counted.
                CoapInstrumentation.ActiveExchangeCounter.Add(-1);
            }

            _layer._lower.EndRequest(this);
            Interlocked.Exchange(ref _responseTimer, DisposedTimer.Instance)?.Dispose();

            // The open follow-ups of a call end with it (a failure has already reached them through Fail).
            List<ClientExchange>? open;
            lock (this)
            {
                open = _openFollowUps;
                _openFollowUps = null;
            }

            if (open is not null)
            {
                foreach (ClientExchange followUp in open)
                {
                    followUp.End();
                }
            }
        }
    }

    /// <summary>A request a stage passed on in place of the one it got: where it went (the next stage's position) and what was passed before.</summary>
    private sealed class PassedOn(int index, CoapMessage request, PassedOn? older)
    {
        public int Index { get; } = index;

        public CoapMessage Request { get; } = request;

        public PassedOn? Older { get; } = older;
    }

    /// <summary>The handle a stage disposes to end a follow-up: its token stops matching and it gets no outcome.</summary>
    private sealed class FollowUpHandle(ClientExchange followUp) : IDisposable
    {
        public void Dispose() => followUp.End();
    }

    /// <summary>Marks a finished exchange's timer slot so a late OnAwaitingResponse disposes its new timer at once.</summary>
    private sealed class DisposedTimer : ITimer
    {
        public static readonly DisposedTimer Instance = new();

        public bool Change(TimeSpan dueTime, TimeSpan period) => false;

        public void Dispose()
        {
            // Nothing to release: this is a marker.
        }

        public ValueTask DisposeAsync() => ValueTask.CompletedTask;
    }
}
