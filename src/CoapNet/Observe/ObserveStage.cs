using CoapNet.Channels;
using CoapNet.Diagnostics;
using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.Observe;

/// <summary>What a request that may register observes (the server's route), set by routing when the resource is observable (RFC 7641 section 4.1).</summary>
/// <param name="Target">The route.</param>
internal sealed record ObserveTarget(object Target);

/// <summary>
/// Observe (RFC 7641) as one stage on both sides. On a server with a <see cref="Registry"/>, a GET with
/// Observe=0 on an observable resource registers its peer and token when the response succeeds (the
/// response then carries the Observe value), a GET with Observe=1 or another request with that token
/// deregisters (section 3.6), and each notification gets its 24-bit sequence value and its message
/// type on the way down. On a client, a notification older than the last one of its observation is
/// dropped (section 3.4).
/// </summary>
internal sealed class ObserveStage(TimeProvider time, ObservationRegistry? registry = null) : CoapStage
{
    private readonly long _ticks128Seconds = (long)(128 * time.TimestampFrequency);

    /// <summary>The server's list of observers; null on an endpoint that serves no observations.</summary>
    public ObservationRegistry? Registry { get; } = registry;

    /// <inheritdoc/>
    public override void ReceiveRequest(CoapExchange exchange, Action<CoapExchange> next)
    {
        CoapMessage request = exchange.RequestAt(this);
        if (Registry is { } registry && registry.Find(exchange.Peer, request.Token.Span) is { } observation)
        {
            bool reRegistration = request.Code == CoapCode.Get && request.Observe == 0;

            // RFC 7959 section 2.6: the later blocks of a notification are fetched without Observe, possibly with its token.
            bool laterBlock = request.Block2 is { Number: > 0 };
            if (!reRegistration && !laterBlock)
            {
                // RFC 7641 section 3.6: Observe=1 deregisters; so does any other request reusing the token (section 4.1).
                registry.Remove(observation, request.Observe == 1 ? "deregistered (Observe=1)" : "a new request reused its token");
            }
        }

        next(exchange);
    }

    /// <inheritdoc/>
    public override void SendResponse(CoapExchange exchange, CoapMessage response, Action<CoapExchange, CoapMessage> next)
    {
        if (exchange.IsFurtherResponse)
        {
            // A notification is a further response to its registration, with its observation as a feature (the server
            // sets it when it makes one); any other further response (a Q-Block2 block) passes as it is.
            if (exchange.Features.Get<Observation>() is { } observation)
            {
                next(exchange, Notification(observation, response));
            }
            else
            {
                next(exchange, response);
            }

            return;
        }

        CoapMessage request = exchange.RequestAt(this);
        if (Registry is { } registry && request.Code == CoapCode.Get && request.Observe == 0)
        {
            bool created = false;
            Observation? registered = exchange.Features.Get<ObserveTarget>() is { } target && response.Code.IsSuccess ? registry.Register(exchange, target.Target, out created) : null;
            if (registered is not null)
            {
                // RFC 7641 section 4.1: the response that adds the observer carries the Observe option.
                response = WithObserve(response, registered.NextSequence());
                if (created)
                {
                    // A new observation holds its notifications until this response has gone down (see Register).
                    try
                    {
                        next(exchange, response);
                    }
                    finally
                    {
                        registered.RegistrationAnswered();
                    }

                    return;
                }
            }
            else if (registry.Find(exchange.Peer, request.Token.Span) is { } previous)
            {
                // Not (or no longer) observable, refused, or an error: a re-registration that fails ends the old one.
                registry.Remove(previous, "its re-registration was not accepted");
            }
        }

        next(exchange, response);
    }

    /// <inheritdoc/>
    public override void ReceiveResponse(CoapClientCall call, CoapMessage response, Action<CoapClientCall, CoapMessage> next)
    {
        if (call.RequestAt(this).Observe == 0 && response.Observe is uint value)
        {
            long now = time.GetTimestamp();
            if (call.Features.Get<Freshness>() is not { } last)
            {
                call.Features.Set(new Freshness(value, now));
            }
            else if (!last.Accept(value, now, _ticks128Seconds))
            {
                // RFC 7641 section 3.4: an older notification arriving late is not the current state; drop it.
                return;
            }
        }

        next(call, response);
    }

    /// <inheritdoc/>
    public override void OnPeerLost(CoapPeer peer) => Registry?.RemovePeer(peer);

    /// <summary>
    /// The notification on its way down: a success carries the next sequence value; an error code ends
    /// the observation and goes without Observe (RFC 7641 section 4.2). Over UDP its type follows the
    /// liveness rule of section 4.5.
    /// </summary>
    private CoapMessage Notification(Observation observation, CoapMessage response)
    {
        ObservationRegistry registry = Registry!;
        CoapMessage notification;
        if (response.Code.IsSuccess)
        {
            notification = WithObserve(response, observation.NextSequence());
        }
        else
        {
            registry.Remove(observation, $"its notification is an error ({response.Code})");
            notification = WithObserve(response, null);
        }

        notification.Type = observation.NextType();
        if (CoapInstrumentation.NotificationCounter.Enabled || CoapInstrumentation.MeasuresNotificationLag)
        {
            long changedAt = observation.ChangedAt;
            CoapInstrumentation.RecordNotification(observation.Peer.Scheme, changedAt == Observation.NotTimed ? null : registry.Since(changedAt));
        }

        return notification;
    }

    /// <summary>A copy of <paramref name="response"/> with its Observe option set (or removed): the handler's message and options may be shared, so they are not modified.</summary>
    private static CoapMessage WithObserve(CoapMessage response, uint? observe)
    {
        CoapMessage copy = response.CopyWithout(CoapOptionNumber.Observe);
        copy.Observe = observe;
        return copy;
    }

    /// <summary>The last notification a client accepted on an observation: its value and when it arrived. Set once per call, then updated.</summary>
    private sealed class Freshness(uint value, long at)
    {
        private uint _value = value;
        private long _at = at;

        /// <summary>True, and remembered, when <paramref name="value"/> is newer than the last accepted (RFC 7641 section 3.4).</summary>
        public bool Accept(uint value, long now, long ticks128Seconds)
        {
            lock (this)
            {
                if (!ObserveSequence.IsNewer(_value, _at, value, now, ticks128Seconds))
                {
                    return false;
                }

                _value = value;
                _at = now;
                return true;
            }
        }
    }
}
