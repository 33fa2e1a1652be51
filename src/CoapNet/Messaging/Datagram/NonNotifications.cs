using CoapNet.Channels;

namespace CoapNet.Messaging.Datagram;

/// <summary>
/// The Message IDs of recent NON notifications, so an RST in reply reaches the observation it ends
/// (RFC 7641 section 3.6). Only the latest one per observation is kept, and each for NON_LIFETIME,
/// so the table never holds more than one entry per live observation.
/// </summary>
/// <remarks>
/// Its own lock, a leaf: nothing here needs to be atomic with the message layer's state (an entry is added after
/// the Message ID is taken and before the datagram is sent, so the RST it may draw finds it), and no other lock is
/// taken or code called while it is held.
/// </remarks>
internal sealed class NonNotifications
{
    private readonly object _gate = new();
    private readonly Dictionary<MessageKey, (ICoapDeliveryListener Owner, long ExpiresAt)> _byKey;
    private readonly Dictionary<ICoapDeliveryListener, MessageKey> _latest = new(ReferenceEqualityComparer.Instance);

    /// <param name="peers">Which peers' RSTs match (<see cref="SessionMatchingComparer"/>); null for the same session only.</param>
    public NonNotifications(SessionMatchingComparer? peers)
        => _byKey = peers is null ? [] : new(new PeerScopedKeyComparer<MessageKey>(peers));

    public void Add(MessageKey key, ICoapDeliveryListener owner, long expiresAt)
    {
        lock (_gate)
        {
            if (_latest.TryGetValue(owner, out MessageKey previous))
            {
                _byKey.Remove(previous);
            }

            _latest[owner] = key;
            _byKey[key] = (owner, expiresAt);
        }
    }

    public ICoapDeliveryListener? Take(MessageKey key)
    {
        lock (_gate)
        {
            return TakeLocked(key);
        }
    }

    public void Sweep(long now)
    {
        lock (_gate)
        {
            SweepLocked(now);
        }
    }

    private ICoapDeliveryListener? TakeLocked(MessageKey key)
    {
        if (!_byKey.Remove(key, out (ICoapDeliveryListener Owner, long ExpiresAt) entry))
        {
            return null;
        }

        _latest.Remove(entry.Owner);
        return entry.Owner;
    }

    private void SweepLocked(long now)
    {
        if (_byKey.Count == 0)
        {
            return;
        }

        List<MessageKey>? expired = null;
        foreach (KeyValuePair<MessageKey, (ICoapDeliveryListener Owner, long ExpiresAt)> pair in _byKey)
        {
            if (pair.Value.ExpiresAt <= now)
            {
                (expired ??= []).Add(pair.Key);
            }
        }

        if (expired is null)
        {
            return;
        }

        foreach (MessageKey key in expired)
        {
            TakeLocked(key);
        }
    }
}
