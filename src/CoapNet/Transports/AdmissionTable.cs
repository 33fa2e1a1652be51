namespace CoapNet.Transports;

/// <summary>Something an <see cref="AdmissionTable{T}"/> holds a place for: a handshake in progress, a connection.</summary>
public interface IAdmissionEntry
{
    /// <summary>The source it counts against.</summary>
    AddressGroup Group { get; }

    /// <summary>
    /// Where it stands in the order of eviction when a newcomer needs its place: the lowest goes first (the oldest
    /// activity, as a <see cref="TimeProvider"/> timestamp, or lower still for one that never spoke);
    /// <see cref="long.MaxValue"/> when it may not be evicted now (busy, or not stalled long enough to tell).
    /// </summary>
    /// <param name="now">The time, a timestamp of the clock the entries use.</param>
    long EvictionOrder(long now);
}

/// <summary>Why <see cref="AdmissionTable{T}.TryAdmit"/> refused.</summary>
public enum AdmissionRefusal
{
    /// <summary>Admitted.</summary>
    None,

    /// <summary>Its source holds as many places as one source may, and none of them could be evicted.</summary>
    SourceBound,

    /// <summary>Every place is held, and none could be evicted.</summary>
    Full,
}

/// <summary>
/// A bounded set of places with a bound per source (<see cref="AddressGroup"/>), where a newcomer takes the place of
/// the entry first in eviction order once a bound is reached, and is refused only when nothing may be evicted: what
/// Scandium does with its connection store and nginx and Kestrel do per address. When the source's bound is the one
/// reached, the newcomer can displace only its own source's entries, so one source filling its share costs the others
/// nothing; when the whole table is, any source's.
/// </summary>
/// <remarks>
/// Eviction scans the entries (a few hundred at most: handshakes in progress, or one endpoint's connections) and
/// happens only at a bound; admitting below the bounds is a dictionary update under a lock. The evicted entry is
/// removed at once and handed to the caller, who ends it outside the lock; its later <see cref="Remove"/> is a no-op.
/// Thread-safe. Public so that a transport in a package of its own (DTLS handshakes, WebSocket connections) admits
/// its peers as the built-in ones do.
/// </remarks>
/// <typeparam name="T">What holds a place.</typeparam>
public sealed class AdmissionTable<T>
    where T : class, IAdmissionEntry
{
    private readonly object _gate = new();
    private readonly HashSet<T> _entries = new(ReferenceEqualityComparer.Instance);
    private readonly Dictionary<AddressGroup, int> _perSource = [];

    /// <summary>An empty table.</summary>
    /// <param name="capacity">The most entries at once.</param>
    /// <param name="perSource">The most entries of one source at once.</param>
    /// <exception cref="ArgumentOutOfRangeException">A bound is less than 1.</exception>
    public AdmissionTable(int capacity, int perSource)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(capacity, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(perSource, 1);
        Capacity = capacity;
        PerSource = perSource;
    }

    /// <summary>The most entries at once.</summary>
    public int Capacity { get; }

    /// <summary>The most entries of one source at once.</summary>
    public int PerSource { get; }

    /// <summary>The entries now.</summary>
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

    /// <summary>
    /// Admits <paramref name="entry"/>, evicting the entry first in eviction order when a bound is reached (returned
    /// in <paramref name="evicted"/>, already removed: the caller ends it); refuses when a bound is reached and
    /// nothing in its scope may be evicted.
    /// </summary>
    /// <param name="entry">The newcomer.</param>
    /// <param name="now">The time, for the entries' eviction order.</param>
    /// <param name="evicted">The entry whose place it took, or null.</param>
    /// <returns><see cref="AdmissionRefusal.None"/> when admitted; otherwise the bound that refused it.</returns>
    public AdmissionRefusal TryAdmit(T entry, long now, out T? evicted)
    {
        ArgumentNullException.ThrowIfNull(entry);
        evicted = null;
        lock (_gate)
        {
            bool sourceFull = _perSource.GetValueOrDefault(entry.Group) >= PerSource;
            if (sourceFull || _entries.Count >= Capacity)
            {
                evicted = FirstToEvict(sourceFull ? entry.Group : null, now);
                if (evicted is null)
                {
                    return sourceFull ? AdmissionRefusal.SourceBound : AdmissionRefusal.Full;
                }

                RemoveLocked(evicted);
            }

            _entries.Add(entry);
            _perSource[entry.Group] = _perSource.GetValueOrDefault(entry.Group) + 1;
            return AdmissionRefusal.None;
        }
    }

    /// <summary>Frees the place of <paramref name="entry"/>; false when it held none (evicted, or removed already).</summary>
    /// <param name="entry">The entry that held a place.</param>
    /// <returns>Whether it held one.</returns>
    public bool Remove(T entry)
    {
        lock (_gate)
        {
            return RemoveLocked(entry);
        }
    }

    private bool RemoveLocked(T entry)
    {
        if (!_entries.Remove(entry))
        {
            return false;
        }

        int left = _perSource[entry.Group] - 1;
        if (left == 0)
        {
            _perSource.Remove(entry.Group);
        }
        else
        {
            _perSource[entry.Group] = left;
        }

        return true;
    }

    private T? FirstToEvict(AddressGroup? source, long now)
    {
        T? first = null;
        long lowest = long.MaxValue;
        foreach (T candidate in _entries)
        {
            if (source is { } group && candidate.Group != group)
            {
                continue;
            }

            long order = candidate.EvictionOrder(now);
            if (order < lowest)
            {
                lowest = order;
                first = candidate;
            }
        }

        return first;
    }
}
