namespace CoapNet.Messaging.Datagram;

/// <summary>
/// The Message IDs of recent NON notifications, so an RST in reply reaches the observation it ends
/// (RFC 7641 section 3.6). Only the latest one per observation is kept, and each for NON_LIFETIME,
/// so the table never holds more than one entry per live observation. Guarded by the message layer's lock.
/// </summary>
internal sealed class NonNotifications
{
    private readonly Dictionary<MessageKey, (INotificationOwner Owner, long ExpiresAt)> _byKey = [];
    private readonly Dictionary<INotificationOwner, MessageKey> _latest = new(ReferenceEqualityComparer.Instance);

    public int Count => _byKey.Count;

    public void Add(MessageKey key, INotificationOwner owner, long expiresAt)
    {
        if (_latest.TryGetValue(owner, out MessageKey previous))
        {
            _byKey.Remove(previous);
        }

        _latest[owner] = key;
        _byKey[key] = (owner, expiresAt);
    }

    public INotificationOwner? Take(MessageKey key)
    {
        if (!_byKey.Remove(key, out (INotificationOwner Owner, long ExpiresAt) entry))
        {
            return null;
        }

        _latest.Remove(entry.Owner);
        return entry.Owner;
    }

    public void Sweep(long now)
    {
        if (_byKey.Count == 0)
        {
            return;
        }

        List<MessageKey>? expired = null;
        foreach (KeyValuePair<MessageKey, (INotificationOwner Owner, long ExpiresAt)> pair in _byKey)
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
            Take(key);
        }
    }
}
