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
        private readonly Action<CoapMessage>? _laterResponses;
        private readonly long _started = Stopwatch.GetTimestamp();
        private readonly Activity? _activity;
        private int _responded;
        private readonly TaskCompletionSource<CoapMessage> _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private ITimer? _responseTimer;
        private int _finished;
        private CancellationTokenRegistration _registration;

        public ClientExchange(ExchangeLayer layer, CoapMessage request, CoapPeer peer, TokenKey key, Action<CoapMessage>? laterResponses)
            : base(request, peer)
        {
            _layer = layer;
            Key = key;
            _laterResponses = laterResponses;

            // The activity spans the exchange, not the caller's synchronous part: the caller's current activity stays current.
            Activity? outer = Activity.Current;
            _activity = CoapInstrumentation.StartRequestActivity(request, peer, ActivityKind.Client);
            Activity.Current = outer;
            CoapInstrumentation.ActiveExchangeCounter.Add(1);
        }

        public TokenKey Key { get; }

        public Task<CoapMessage> Completion => _completion.Task;

        public void RegisterCancellation(CancellationToken cancellationToken)
        {
            if (cancellationToken.CanBeCanceled)
            {
                _registration = cancellationToken.UnsafeRegister(
                    static (state, token) => ((ClientExchange)state!).Fail(new OperationCanceledException(token)),
                    this);
            }
        }

        public override void OnAwaitingResponse()
        {
            ITimer timer = _layer._time.CreateTimer(
                static state =>
                {
                    ClientExchange exchange = (ClientExchange)state!;
                    exchange.Fail(new CoapTimeoutException($"No response from {exchange.Peer.EndPoint} to {exchange.Request.Code} within {exchange._layer._responseTimeout}.", exchange.Peer.EndPoint));
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
            if (_laterResponses is null)
            {
                if (TryFinish())
                {
                    Record(response.Code, null);
                    _completion.TrySetResult(response);
                }

                return;
            }

            if (Interlocked.Exchange(ref _responded, 1) == 0)
            {
                // The request is answered: below, its retransmission and NSTART slot end; here it stays registered.
                Record(response.Code, null);
                _layer._lower.EndRequest(this);
                Interlocked.Exchange(ref _responseTimer, DisposedTimer.Instance)?.Dispose();
                _completion.TrySetResult(response);
                return;
            }

            if (Volatile.Read(ref _finished) == 0)
            {
                _laterResponses(response);
            }
        }

        public void Fail(Exception exception)
        {
            if (!TryFinish())
            {
                return;
            }

            if (Volatile.Read(ref _responded) == 0)
            {
                Record(default, exception);
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

        private bool TryFinish()
        {
            if (Interlocked.Exchange(ref _finished, 1) != 0)
            {
                return false;
            }

            _layer.Remove(this);
            CoapInstrumentation.ActiveExchangeCounter.Add(-1);
            _layer._lower.EndRequest(this);
            Interlocked.Exchange(ref _responseTimer, DisposedTimer.Instance)?.Dispose();
            _registration.Dispose();
            return true;
        }
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
