namespace CoapNet.Blockwise;

/// <summary>
/// The bodies a server keeps for a client's later block requests (RFC 7959 section 2.4, RFC 9177 section 4.4), by key:
/// bounded in count and in the bytes they hold, each kept until it expires, expired ones swept when the table is used.
/// What leaves the table (expired or replaced) is handed to the release action outside the lock.
/// </summary>
/// <typeparam name="T">What is kept per body.</typeparam>
internal sealed class BodyStore<T>(int maxCount, long maxBytes, TimeProvider time, Action<T> release)
    where T : class
{
    private readonly object _gate = new();
    private readonly Dictionary<string, Entry> _entries = new(StringComparer.Ordinal);
    private long _bytes;

    /// <summary>The number of bodies kept.</summary>
    public int Count
    {
        get
        {
            lock (_gate)
            {
                return _entries.Count;
            }
        }
    }

    /// <summary>The body kept under <paramref name="key"/>; when <paramref name="renew"/> is given, it is kept that long from now.</summary>
    public bool TryGet(string key, [System.Diagnostics.CodeAnalysis.NotNullWhen(true)] out T? value, TimeSpan? renew = null)
    {
        List<T> expired;
        bool found;
        lock (_gate)
        {
            expired = RemoveExpired();
            found = _entries.TryGetValue(key, out Entry? entry);
            value = entry?.Value;
            if (entry is not null && renew is TimeSpan lifetime)
            {
                entry.ExpiresAt = ExpiryAfter(lifetime);
            }
        }

        Release(expired);
        return found;
    }

    /// <summary>
    /// Keeps <paramref name="value"/> under <paramref name="key"/> for <paramref name="lifetime"/>, counted as
    /// <paramref name="bytes"/>, in place of what was kept there; false when a bound refuses it (nothing is kept then).
    /// </summary>
    public bool Add(string key, T value, long bytes, TimeSpan lifetime)
    {
        List<T> released;
        bool kept;
        lock (_gate)
        {
            released = RemoveExpired();
            if (_entries.Remove(key, out Entry? previous))
            {
                _bytes -= previous.Bytes;
                released.Add(previous.Value);
            }

            kept = _entries.Count < maxCount && _bytes + bytes <= maxBytes;
            if (kept)
            {
                _entries[key] = new Entry(value, bytes, ExpiryAfter(lifetime));
                _bytes += bytes;
            }
        }

        Release(released);
        return kept;
    }

    /// <summary>Forgets <paramref name="value"/> when it is still what <paramref name="key"/> holds; the caller releases it.</summary>
    public void Remove(string key, T value)
    {
        lock (_gate)
        {
            if (_entries.TryGetValue(key, out Entry? entry) && ReferenceEquals(entry.Value, value))
            {
                _entries.Remove(key);
                _bytes -= entry.Bytes;
            }
        }
    }

    private long ExpiryAfter(TimeSpan lifetime) => time.GetTimestamp() + (long)(lifetime.TotalSeconds * time.TimestampFrequency);

    // Caller holds the lock; the caller releases what it returns, outside it.
    private List<T> RemoveExpired()
    {
        List<T> expired = [];
        if (_entries.Count == 0)
        {
            return expired;
        }

        long now = time.GetTimestamp();
        List<string>? keys = null;
        foreach (KeyValuePair<string, Entry> pair in _entries)
        {
            if (pair.Value.ExpiresAt <= now)
            {
                (keys ??= []).Add(pair.Key);
            }
        }

        if (keys is not null)
        {
            foreach (string key in keys)
            {
                if (_entries.Remove(key, out Entry? entry))
                {
                    _bytes -= entry.Bytes;
                    expired.Add(entry.Value);
                }
            }
        }

        return expired;
    }

    private void Release(List<T> values)
    {
        foreach (T value in values)
        {
            release(value);
        }
    }

    private sealed class Entry(T value, long bytes, long expiresAt)
    {
        public T Value { get; } = value;

        public long Bytes { get; } = bytes;

        public long ExpiresAt { get; set; } = expiresAt;
    }
}
