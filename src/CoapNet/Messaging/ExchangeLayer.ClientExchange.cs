using CoapNet.Channels;
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
                    _completion.TrySetResult(response);
                }

                return;
            }

            if (Interlocked.Exchange(ref _responded, 1) == 0)
            {
                // The request is answered: below, its retransmission and NSTART slot end; here it stays registered.
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

            if (exception is OperationCanceledException canceled)
            {
                _completion.TrySetCanceled(canceled.CancellationToken);
            }
            else
            {
                _completion.TrySetException(exception);
            }
        }

        private bool TryFinish()
        {
            if (Interlocked.Exchange(ref _finished, 1) != 0)
            {
                return false;
            }

            _layer.Remove(this);
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
