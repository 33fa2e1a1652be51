using System.Net;
using CoapNet.Channels;
using CoapNet.Messages;

namespace CoapNet.Messaging;

// The owners of what the endpoint sends: a client request, a ping, a separate server response.
public sealed partial class CoapEndpoint
{
    /// <summary>
    /// One request we sent and the response we wait for: an NSTART slot while outstanding
    /// (RFC 7252 section 4.7), the CON's transmission, then the separate-response wait.
    /// </summary>
    private sealed class ClientExchange : ITransmissionOwner
    {
        private readonly CoapEndpoint _endpoint;
        private readonly CoapChannel _channel;
        private readonly TokenKey _key;
        private readonly TaskCompletionSource<CoapMessage> _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private Transmission? _transmission;
        private ITimer? _responseTimer;
        private bool _holdsSlot;
        private bool _started;
        private bool _finished;
        private CancellationTokenRegistration _registration;

        public ClientExchange(CoapEndpoint endpoint, CoapMessage request, IPEndPoint remote, CoapChannel channel, TokenKey key)
        {
            _endpoint = endpoint;
            Request = request;
            Remote = remote;
            _channel = channel;
            _key = key;
            StartAction = Start;
        }

        public CoapMessage Request { get; }

        public IPEndPoint Remote { get; }

        /// <summary>Runs when the exchange holds an NSTART slot: now, or when an earlier one frees it.</summary>
        public Action StartAction { get; }

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

        public void OnAcknowledged(CoapMessage acknowledgement)
        {
            // RFC 7252 section 5.2.1: a piggybacked response carries the request's token.
            if (acknowledgement.Code.IsResponse && acknowledgement.Token.Span.SequenceEqual(Request.Token.Span))
            {
                Complete(acknowledgement);
                return;
            }

            // An empty ACK: the response will be separate (RFC 7252 section 5.2.2). The interaction is no
            // longer outstanding for NSTART (section 4.7), so the next request toward the peer may start.
            Action? next = null;
            lock (_endpoint._gate)
            {
                if (_finished)
                {
                    return;
                }

                _transmission = null;
                next = ReleaseSlot();
                ArmResponseTimeout();
            }

            next?.Invoke();
        }

        public void OnReset() => Fail(new CoapResetException($"{Remote} answered {Request.Code} (MID {Request.MessageId}) with RST: it could not process it.", Remote));

        public void OnGaveUp(int retransmissions)
            => Fail(new CoapTimeoutException($"{Remote} did not acknowledge {Request.Code} (MID {Request.MessageId}) after {retransmissions} retransmissions.", Remote));

        public void OnResponse(CoapMessage response) => Complete(response);

        public void Complete(CoapMessage response)
        {
            if (TryFinish(out Action? next))
            {
                _completion.TrySetResult(response);
                next?.Invoke();
            }
        }

        public void Fail(Exception exception)
        {
            if (TryFinish(out Action? next))
            {
                if (exception is OperationCanceledException canceled)
                {
                    _completion.TrySetCanceled(canceled.CancellationToken);
                }
                else
                {
                    _completion.TrySetException(exception);
                }

                next?.Invoke();
            }
        }

        private void Start()
        {
            byte[]? bytes = null;
            Action? next = null;
            lock (_endpoint._gate)
            {
                _holdsSlot = true;
                if (_finished)
                {
                    // Canceled between leaving the queue and starting: hand the slot on, send nothing.
                    next = ReleaseSlot();
                }
                else
                {
                    _started = true;
                    Request.MessageId = _channel.NextMessageId();
                    bytes = _endpoint._sendSerializer.Serialize(Request);
                    if (Request.Type == CoapMessageType.Confirmable)
                    {
                        _transmission = _endpoint.StartTransmission(new MessageKey(Remote, Request.MessageId), bytes, this);
                    }
                    else
                    {
                        ArmResponseTimeout();
                    }
                }
            }

            if (bytes is null)
            {
                next?.Invoke();
                return;
            }

            _endpoint.SendRaw(bytes, Remote, Request);
        }

        private bool TryFinish(out Action? next)
        {
            next = null;
            lock (_endpoint._gate)
            {
                if (_finished)
                {
                    return false;
                }

                _finished = true;
                _endpoint._exchanges.Remove(_key);

                // A separate response can arrive before the ACK (RFC 7252 section 5.2.2): it ends the retransmission too.
                _endpoint.StopTransmission(_transmission);
                _responseTimer?.Dispose();
                if (_holdsSlot)
                {
                    next = ReleaseSlot();
                }
                else if (!_started)
                {
                    _channel.RemoveWaiting(StartAction);
                }
            }

            _registration.Dispose();
            return true;
        }

        // Caller holds the lock.
        private Action? ReleaseSlot()
        {
            if (!_holdsSlot)
            {
                return null;
            }

            _holdsSlot = false;
            return _channel.ReleaseSlot();
        }

        // Caller holds the lock.
        private void ArmResponseTimeout()
        {
            _responseTimer = _endpoint._time.CreateTimer(
                static state =>
                {
                    ClientExchange exchange = (ClientExchange)state!;
                    exchange.Fail(new CoapTimeoutException($"No response from {exchange.Remote} to {exchange.Request.Code} within {exchange._endpoint._responseTimeout}.", exchange.Remote));
                },
                this,
                _endpoint._responseTimeout,
                Timeout.InfiniteTimeSpan);
        }
    }

    /// <summary>A CoAP ping: an empty CON whose answer is RST (RFC 7252 section 4.3).</summary>
    private sealed class PingOwner : ITransmissionOwner
    {
        private readonly CoapEndpoint _endpoint;
        private readonly IPEndPoint _remote;
        private readonly ushort _messageId;
        private readonly long _started;
        private readonly TaskCompletionSource<TimeSpan> _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private CancellationTokenRegistration _registration;

        public PingOwner(CoapEndpoint endpoint, IPEndPoint remote, ushort messageId, long started)
        {
            _endpoint = endpoint;
            _remote = remote;
            _messageId = messageId;
            _started = started;
        }

        public Task<TimeSpan> Completion => _completion.Task;

        public void RegisterCancellation(CancellationToken cancellationToken)
        {
            if (cancellationToken.CanBeCanceled)
            {
                _registration = cancellationToken.UnsafeRegister(static (state, token) => ((PingOwner)state!).Cancel(token), this);
            }
        }

        // RFC 7252 section 4.3 answers a ping with RST; an ACK (some peers send one) proves liveness just as well.
        public void OnAcknowledged(CoapMessage acknowledgement) => Succeed();

        public void OnReset() => Succeed();

        public void OnGaveUp(int retransmissions)
            => Fail(new CoapTimeoutException($"{_remote} did not answer a ping (MID {_messageId}) after {retransmissions} retransmissions.", _remote));

        public void Fail(Exception exception)
        {
            _registration.Dispose();
            _completion.TrySetException(exception);
        }

        private void Succeed()
        {
            _registration.Dispose();
            _completion.TrySetResult(_endpoint._time.GetElapsedTime(_started));
        }

        private void Cancel(CancellationToken token)
        {
            lock (_endpoint._gate)
            {
                if (_endpoint._unacknowledged.TryGetValue(new MessageKey(_remote, _messageId), out Transmission? transmission))
                {
                    _endpoint.StopTransmission(transmission);
                }
            }

            _completion.TrySetCanceled(token);
        }
    }

    /// <summary>A separate CON response we sent: nothing waits for it, but a Reset is worth a log line.</summary>
    private sealed class ServerResponseOwner(CoapEndpoint endpoint, IPEndPoint remote, ushort messageId) : ITransmissionOwner
    {
        public void OnAcknowledged(CoapMessage acknowledgement)
        {
            // Delivered: nothing more to do.
        }

        public void OnReset() => Log.Ignored(endpoint._logger, CoapMessage.CreateEmpty(CoapMessageType.Reset, messageId), remote, "the client rejected our separate response");

        public void OnGaveUp(int retransmissions)
        {
            // The endpoint has already logged the give-up.
        }
    }
}
