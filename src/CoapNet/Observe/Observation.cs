using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.Observe;

/// <summary>
/// One entry in a server's list of observers (RFC 7641 section 4.1): the observer (peer and token),
/// the request that registered, and the state of its notifications: the 24-bit sequence, when the
/// observer last proved alive, and a queue of one (section 4.5.2): while a notification is being made
/// or a CON one awaits its ACK, a change only marks the observation dirty, and one notification with
/// the latest state follows.
/// </summary>
internal sealed class Observation : ICoapDeliveryListener
{
    private readonly ObservationRegistry _registry;
    private readonly object _gate = new();
    private CoapExchange _registration;
    private uint _sequence;
    private long _aliveAt;
    private bool _busy;
    private bool _dirty;
    private long _changedAt = NotTimed;
    private long _dirtySince = NotTimed;
    private bool _confirmableInFlight;
    private int _nonSinceConfirmed;
    private bool _removed;

    public Observation(ObservationRegistry registry, TokenKey key, CoapExchange registration, object target, uint firstSequence, long now)
    {
        _registry = registry;
        Key = key;
        _registration = registration;
        Target = target;
        Path = registration.Request.UriPath;
        _sequence = firstSequence;
        _aliveAt = now;

        // The registration's response is the first notification in progress; RegistrationAnswered ends it.
        _busy = true;
    }

    /// <summary>The observer and its token.</summary>
    public TokenKey Key { get; }

    /// <summary>The observer.</summary>
    public CoapPeer Peer => Key.Peer;

    /// <summary>What is observed: the server's route.</summary>
    public object Target { get; private set; }

    /// <summary>The request path, as registered ("/time").</summary>
    public string Path { get; private set; }

    /// <summary>The exchange of the latest registration: its request is run again for each notification, and its lower state says where to send.</summary>
    public CoapExchange Registration
    {
        get
        {
            lock (_gate)
            {
                return _registration;
            }
        }
    }

    /// <summary>True once removed from the registry; a removed observation sends nothing more.</summary>
    public bool IsRemoved
    {
        get
        {
            lock (_gate)
            {
                return _removed;
            }
        }
    }

    /// <summary>A GET with Observe=0 and the same token replaces the registration (RFC 7641 section 4.1) and proves the observer alive.</summary>
    public void Renew(CoapExchange registration, object target, long now)
    {
        lock (_gate)
        {
            _registration = registration;
            Target = target;
            Path = registration.Request.UriPath;
            _aliveAt = now;
        }
    }

    /// <summary>The next Observe value, strictly increasing modulo 2^24 (RFC 7641 section 4.4).</summary>
    public uint NextSequence()
    {
        lock (_gate)
        {
            _sequence = ObserveSequence.Next(_sequence);
            return _sequence;
        }
    }

    /// <summary>
    /// The type of the next notification over UDP (RFC 7641 section 4.5): CON when configured so, when
    /// the last proof of the observer's liveness is older than the confirmable interval, or after
    /// <see cref="ObserveOptions.ConfirmableEvery"/> NON ones; NON otherwise.
    /// </summary>
    public CoapMessageType NextType()
    {
        ObserveOptions options = _registry.Options;
        long now = _registry.Now;
        lock (_gate)
        {
            _confirmableInFlight = options.ConfirmableNotifications || now - _aliveAt >= _registry.ConfirmableIntervalTicks
                || (options.ConfirmableEvery > 0 && _nonSinceConfirmed >= options.ConfirmableEvery);
            _nonSinceConfirmed = _confirmableInFlight ? 0 : _nonSinceConfirmed + 1;
            return _confirmableInFlight ? CoapMessageType.Confirmable : CoapMessageType.NonConfirmable;
        }
    }

    /// <summary>The <see cref="ChangedAt"/> of a change made while nobody measured the notification lag (a clock may start at 0).</summary>
    public const long NotTimed = long.MinValue;

    /// <summary>
    /// When the change that the notification in progress carries was made (a timestamp of the registry's clock), or
    /// <see cref="NotTimed"/>.
    /// </summary>
    public long ChangedAt
    {
        get
        {
            lock (_gate)
            {
                return _changedAt;
            }
        }
    }

    /// <summary>The resource changed: make a notification now, or (one in progress) mark the state dirty for one more after it.</summary>
    /// <param name="changedAt">When it changed (a timestamp of the registry's clock), or <see cref="NotTimed"/>.</param>
    public void Trigger(long changedAt)
    {
        lock (_gate)
        {
            if (_removed)
            {
                return;
            }

            if (_busy)
            {
                // The notification that follows carries this change and any later one: its lag counts from the first.
                if (!_dirty)
                {
                    _dirtySince = changedAt;
                }

                _dirty = true;
                return;
            }

            _busy = true;
            _changedAt = changedAt;
        }

        _registry.Run(this);
    }

    /// <summary>No notification came of a run (the server is stopping): the next change starts one again.</summary>
    public void Abandon()
    {
        lock (_gate)
        {
            _busy = false;
            _dirty = false;
        }
    }

    /// <summary>
    /// The response that established the observation has gone down (or was dropped): notifications may go now, and one
    /// with the latest state at once when the resource changed meanwhile. The registration itself proved the observer
    /// alive (RFC 7641 section 4.5), so nothing more is recorded.
    /// </summary>
    public void RegistrationAnswered() => Finish(provedAlive: false);

    /// <inheritdoc/>
    public void OnDelivered() => Finish(provedAlive: true);

    /// <summary>
    /// The notification was not sent: a stage dropped it, as No-Response does for a class the registration's option
    /// suppresses (RFC 7967 section 2). The next change makes a notification again; nothing proved the observer alive,
    /// so a CON one is still due (RFC 7641 section 4.5).
    /// </summary>
    public void OnDropped() => Finish(provedAlive: false);

    /// <summary>The notification in progress is over: the next one may go, at once when the state changed meanwhile.</summary>
    private void Finish(bool provedAlive)
    {
        bool again;
        long changedAt;
        lock (_gate)
        {
            if (_confirmableInFlight && provedAlive)
            {
                // An ACK is the proof of liveness RFC 7641 section 4.5 asks for.
                _aliveAt = _registry.Now;
            }

            _confirmableInFlight = false;
            _busy = false;
            again = _dirty && !_removed;
            _dirty = false;
            changedAt = _dirtySince;
        }

        if (again)
        {
            Trigger(changedAt);
        }
    }

    /// <inheritdoc/>
    public void OnRejected() => _registry.Remove(this, "the observer answered a notification with RST");

    /// <inheritdoc/>
    public void OnFailed(Exception reason) => _registry.Remove(this, reason.Message);

    /// <summary>Marks the observation removed; called by the registry.</summary>
    internal void MarkRemoved()
    {
        lock (_gate)
        {
            _removed = true;
            _dirty = false;
        }
    }
}
