using CoapNet.Channels;
using CoapNet.Messages;

namespace CoapNet.Messaging.Datagram;

// The owners of what this layer sends: a client request, a ping, a separate server response.
internal sealed partial class DatagramMessageLayer
{
    /// <summary>
    /// This layer's side of a request we send: an NSTART slot while outstanding (RFC 7252 section
    /// 4.7), the Message ID, and the CON's transmission until its ACK or RST.
    /// </summary>
    /// <remarks>
    /// Its fields are guarded by the layer's lock, not one of its own: taking or handing on a slot must be atomic with
    /// the peer's NSTART queue (<see cref="PeerMessageState"/>), and ending must stop the transmission in the same step.
    /// </remarks>
    private sealed class RequestState : ITransmissionOwner, ISlotWaiter
    {
        private readonly DatagramMessageLayer _layer;
        private readonly OutgoingRequest _request;
        private readonly DatagramChannel _channel;
        private Transmission? _transmission;
        private bool _holdsSlot;
        private bool _started;
        private bool _ended;

        public RequestState(DatagramMessageLayer layer, OutgoingRequest request, DatagramChannel channel)
        {
            _layer = layer;
            _request = request;
            _channel = channel;
        }

        /// <summary>The peer's message state; set under the lock before the request can start.</summary>
        public PeerMessageState? Peer { get; set; }

        public void OnAcknowledged(CoapMessage acknowledgement)
        {
            // RFC 7252 section 5.2.1: a piggybacked response carries the request's token; the exchange layer matches it.
            if (acknowledgement.Code.IsResponse && _layer._upper!.OnResponse(_channel.Peer, acknowledgement))
            {
                return;
            }

            // An empty ACK (or one whose token matches nothing): the response will be separate (RFC 7252
            // section 5.2.2). The interaction is no longer outstanding for NSTART (section 4.7), so the
            // next request toward the peer may start.
            ISlotWaiter? next;
            lock (_layer._gate)
            {
                if (_ended)
                {
                    return;
                }

                _transmission = null;
                next = ReleaseSlot();
            }

            _request.OnAwaitingResponse();
            StartWaiting(next);
        }

        public void OnReset()
            => _request.OnFailed(new CoapResetException($"{_channel.Peer.EndPoint} answered {_request.Request.Code} (MID 0x{_request.Request.MessageId:x4}) with RST: it could not process it.", _channel.Peer.EndPoint));

        public void OnGaveUp(int retransmissions)
            => _request.OnFailed(new CoapTimeoutException($"{_channel.Peer.EndPoint} did not acknowledge {_request.Request.Code} (MID 0x{_request.Request.MessageId:x4}) after {retransmissions} retransmissions.", _channel.Peer.EndPoint));

        public void OnPeerLost(Exception reason) => _request.OnFailed(reason);

        /// <summary>The exchange is over: stop retransmitting, hand the NSTART slot on or leave the queue.</summary>
        public void End()
        {
            ISlotWaiter? next = null;
            lock (_layer._gate)
            {
                if (_ended)
                {
                    return;
                }

                _ended = true;

                // A separate response can arrive before the ACK (RFC 7252 section 5.2.2): it ends the retransmission too.
                _layer._reliability.Stop(_transmission);
                if (_holdsSlot)
                {
                    next = ReleaseSlot();
                }
                else if (!_started)
                {
                    Peer!.RemoveWaiting(this);
                }
            }

            StartWaiting(next);
        }

        /// <summary>Runs when the request holds an NSTART slot: now, or when an earlier one frees it.</summary>
        public void StartWithSlot() => Start(holdsSlot: true);

        /// <summary>Sends the request, holding an NSTART slot or (a NON paced above, see <see cref="OutgoingRequest.PacedAbove"/>) none.</summary>
        public void Start(bool holdsSlot)
        {
            ISlotWaiter? next = null;
            CoapMessage request = _request.Request;
            bool start;
            lock (_layer._gate)
            {
                _holdsSlot = holdsSlot;
                start = !_ended;
                if (start)
                {
                    _started = true;
                    request.MessageId = Peer!.NextMessageId();
                }
                else
                {
                    // Ended between leaving the queue and starting: hand the slot on, send nothing.
                    next = ReleaseSlot();
                }
            }

            if (!start)
            {
                StartWaiting(next);
                return;
            }

            // Serialized outside the lock (the Message ID is ours alone once taken). A CON is then registered for
            // retransmission before it is sent, so its ACK or RST cannot come first. If the exchange ended meanwhile,
            // End has already released the slot and had no transmission to stop: nothing is registered or sent, as when
            // it ends before the start.
            byte[] bytes = _channel.Encode(request);
            if (request.Type == CoapMessageType.Confirmable)
            {
                lock (_layer._gate)
                {
                    if (_ended)
                    {
                        return;
                    }

                    _transmission = _layer._reliability.Start(new MessageKey(_channel.Peer, request.MessageId), _channel, bytes, this, Peer!.Retransmission);
                }
            }

            if (request.Type == CoapMessageType.NonConfirmable)
            {
                // A NON is never acknowledged: the wait for its response starts now.
                _request.OnAwaitingResponse();
            }

            _layer.SendRaw(_channel, bytes, request);
        }

        /// <summary>Starts <paramref name="next"/>, which holds a slot, and then every other waiting request the peer's NSTART now lets start.</summary>
        private void StartWaiting(ISlotWaiter? next)
        {
            while (next is not null)
            {
                next.StartWithSlot();
                lock (_layer._gate)
                {
                    next = Peer!.TakeWaiter();
                }
            }
        }

        // Caller holds the lock.
        private ISlotWaiter? ReleaseSlot()
        {
            if (!_holdsSlot)
            {
                return null;
            }

            _holdsSlot = false;
            return Peer!.ReleaseSlot();
        }
    }

    /// <summary>A CoAP ping: an empty CON whose answer is RST (RFC 7252 section 4.3).</summary>
    private sealed class PingOwner : ITransmissionOwner
    {
        private readonly DatagramMessageLayer _layer;
        private readonly CoapPeer _peer;
        private readonly ushort _messageId;
        private readonly long _started;
        private readonly TaskCompletionSource<TimeSpan> _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private CancellationTokenRegistration _registration;

        public PingOwner(DatagramMessageLayer layer, CoapPeer peer, ushort messageId, long started)
        {
            _layer = layer;
            _peer = peer;
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
            => Fail(new CoapTimeoutException($"{_peer.EndPoint} did not answer a ping (MID 0x{_messageId:x4}) after {retransmissions} retransmissions.", _peer.EndPoint));

        public void OnPeerLost(Exception reason) => Fail(reason);

        public void Fail(Exception exception)
        {
            _registration.Dispose();
            _completion.TrySetException(exception);
        }

        private void Succeed()
        {
            _registration.Dispose();
            _completion.TrySetResult(_layer._time.GetElapsedTime(_started));
        }

        private void Cancel(CancellationToken token)
        {
            _layer.StopTransmission(new MessageKey(_peer, _messageId));

            _completion.TrySetCanceled(token);
        }
    }

    /// <summary>A separate CON response we sent: nothing waits for it, but a Reset is worth a log line.</summary>
    private sealed class ServerResponseOwner(DatagramMessageLayer layer, CoapPeer peer, ushort messageId) : ITransmissionOwner
    {
        public void OnAcknowledged(CoapMessage acknowledgement)
        {
            // Delivered: nothing more to do.
        }

        public void OnReset() => Log.Ignored(layer._logger, CoapMessage.CreateEmpty(CoapMessageType.Reset, messageId), peer, "the client rejected our separate response");

        public void OnGaveUp(int retransmissions)
        {
            // The layer has already logged the give-up.
        }

        public void OnPeerLost(Exception reason)
        {
            // Nothing waits for it; the lost session was logged by the transport.
        }
    }

    /// <summary>A CON notification we sent: its ACK, RST or give-up goes to the observation (RFC 7641 section 4.5).</summary>
    private sealed class NotificationTransmissionOwner(ICoapDeliveryListener owner) : ITransmissionOwner
    {
        public void OnAcknowledged(CoapMessage acknowledgement) => owner.OnDelivered();

        public void OnReset() => owner.OnRejected();

        public void OnGaveUp(int retransmissions)
            => owner.OnFailed(new CoapTimeoutException($"The observer did not acknowledge a notification after {retransmissions} retransmissions.", null));

        public void OnPeerLost(Exception reason) => owner.OnFailed(reason);
    }
}
