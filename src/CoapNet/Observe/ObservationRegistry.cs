using CoapNet.Channels;
using CoapNet.Messaging;
using Microsoft.Extensions.Logging;

namespace CoapNet.Observe;

/// <summary>
/// A server's list of observers (RFC 7641 section 4.1), shared by all its endpoints: keyed by peer and
/// token, indexed by what is observed, and bounded in total and per peer so a peer cannot make the
/// server hold more than <see cref="ObserveOptions.MaxObservations"/>.
/// </summary>
internal sealed partial class ObservationRegistry
{
    private readonly ObserveOptions _options;
    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private readonly Action<Observation> _run;
    private readonly object _gate = new();
    private readonly Dictionary<TokenKey, Observation> _byKey = [];
    private readonly Dictionary<CoapPeer, int> _perPeer = [];
    private readonly Dictionary<PeerIdentityKey, int> _perIdentity = [];
    private readonly Dictionary<object, HashSet<Observation>> _byTarget = new(ReferenceEqualityComparer.Instance);

    // The observations of each request path: a change of one of many paths under a route ("/fleet/{device}" with
    // 100,000 devices, issue 41) finds its few observers without walking every observation of the route.
    private readonly Dictionary<string, HashSet<Observation>> _byPath = new(StringComparer.Ordinal);
    private int _count;

    /// <param name="options">The bounds and the notification types.</param>
    /// <param name="time">The clock for liveness.</param>
    /// <param name="logger">Where registrations and removals are logged (Debug).</param>
    /// <param name="run">Makes one notification of an observation: runs its request's handler again and answers through <see cref="Observation"/>.</param>
    public ObservationRegistry(ObserveOptions options, TimeProvider time, ILogger logger, Action<Observation> run)
    {
        options.Validate();
        _options = options;
        _time = time;
        _logger = logger;
        _run = run;
        ConfirmableIntervalTicks = (long)Math.Min(options.ConfirmableInterval.TotalSeconds * time.TimestampFrequency, long.MaxValue / 2);
    }

    /// <summary>The settings.</summary>
    public ObserveOptions Options => _options;

    /// <summary>The confirmable interval in timestamp ticks.</summary>
    public long ConfirmableIntervalTicks { get; }

    /// <summary>The clock's timestamp now.</summary>
    public long Now => _time.GetTimestamp();

    /// <summary>The time since <paramref name="timestamp"/>, on the registry's clock.</summary>
    public TimeSpan Since(long timestamp) => _time.GetElapsedTime(timestamp);

    /// <summary>The Observe value of a new observation's first response, less one; tests set it near 2^24 to see the wrap.</summary>
    internal uint FirstSequence { get; set; } = 1;

    /// <summary>The number of observations.</summary>
    public int Count
    {
        get
        {
            lock (_gate)
            {
                return _byKey.Count;
            }
        }
    }

    /// <summary>
    /// The observation of <paramref name="peer"/> with <paramref name="token"/>, or null. While nobody
    /// observes anything this reads one field and builds no key, so requests pay nothing for Observe.
    /// </summary>
    public Observation? Find(CoapPeer peer, ReadOnlySpan<byte> token)
    {
        if (Volatile.Read(ref _count) == 0)
        {
            return null;
        }

        TokenKey key = TokenKey.From(peer, token);
        lock (_gate)
        {
            return _byKey.TryGetValue(key, out Observation? observation) ? observation : null;
        }
    }

    /// <summary>
    /// Adds the observer of <paramref name="exchange"/>'s request, or renews the one with its peer and
    /// token (RFC 7641 section 4.1: replaced, never added twice); null when a bound refuses it. A new observation
    /// (<paramref name="created"/>) starts with its registration's response as the notification in progress: a change
    /// before that response has gone down only marks it dirty, so no notification overtakes the response that
    /// establishes the observation (on TCP the client would otherwise see a newer state, then the older one).
    /// The caller ends it with <see cref="Observation.RegistrationAnswered"/>.
    /// </summary>
    public Observation? Register(CoapExchange exchange, object target, out bool created)
    {
        created = false;
        TokenKey key = TokenKey.From(exchange.Peer, exchange.Request.Token.Span);
        long now = Now;
        Observation observation;
        lock (_gate)
        {
            if (_byKey.TryGetValue(key, out Observation? existing))
            {
                if (!ReferenceEquals(existing.Target, target) || !string.Equals(existing.Path, exchange.Request.UriPath, StringComparison.Ordinal))
                {
                    RemoveFromIndexes(existing);
                    existing.Renew(exchange, target, now);
                    AddToIndexes(existing);
                }
                else
                {
                    existing.Renew(exchange, target, now);
                }

                return existing;
            }

            _perPeer.TryGetValue(exchange.Peer, out int ofPeer);
            PeerIdentityKey identity = PeerIdentityKey.Of(exchange.Peer);
            _perIdentity.TryGetValue(identity, out int ofIdentity);
            if (_byKey.Count >= _options.MaxObservations || ofPeer >= _options.MaxObservationsPerPeer || ofIdentity >= _options.MaxObservationsPerIdentity)
            {
                Log.Refused(_logger, exchange.Peer, exchange.Request.UriPath, _byKey.Count, ofPeer, ofIdentity);
                return null;
            }

            observation = new Observation(this, key, exchange, target, FirstSequence, now);
            created = true;
            _byKey.Add(key, observation);
            Volatile.Write(ref _count, _byKey.Count);
            _perPeer[exchange.Peer] = ofPeer + 1;
            _perIdentity[identity] = ofIdentity + 1;
            AddToIndexes(observation);
        }

        Log.Registered(_logger, exchange.Peer, exchange.Request.UriPath);
        return observation;
    }

    /// <summary>Removes an observation (deregistered, rejected, timed out, ended by an error notification); later changes send it nothing.</summary>
    public void Remove(Observation observation, string reason)
    {
        lock (_gate)
        {
            if (!_byKey.TryGetValue(observation.Key, out Observation? current) || !ReferenceEquals(current, observation))
            {
                return;
            }

            RemoveLocked(observation);
        }

        Log.Removed(_logger, observation.Peer, observation.Path, reason);
    }

    /// <summary>Removes every observation of <paramref name="peer"/> (its connection or DTLS session is gone: notifications can go in no other, RFC 7252 section 9.1.1).</summary>
    public void RemovePeer(CoapPeer peer)
    {
        List<Observation> gone = [];
        lock (_gate)
        {
            if (!_perPeer.ContainsKey(peer))
            {
                return;
            }

            foreach (Observation observation in _byKey.Values)
            {
                if (observation.Peer.Equals(peer))
                {
                    gone.Add(observation);
                }
            }

            foreach (Observation observation in gone)
            {
                RemoveLocked(observation);
            }
        }

        foreach (Observation observation in gone)
        {
            Log.Removed(_logger, peer, observation.Path, "its connection or session is gone");
        }
    }

    /// <summary>Removes every observation (the server stops).</summary>
    public void Clear()
    {
        lock (_gate)
        {
            foreach (Observation observation in _byKey.Values)
            {
                observation.MarkRemoved();
            }

            _byKey.Clear();
            Volatile.Write(ref _count, 0);
            _perPeer.Clear();
            _perIdentity.Clear();
            _byTarget.Clear();
            _byPath.Clear();
        }
    }

    /// <summary>
    /// The observed state changed: every observation of <paramref name="target"/> (only those whose
    /// path is <paramref name="path"/>, when given) gets a notification, each on its own.
    /// </summary>
    /// <returns>The number of observations notified.</returns>
    public int Notify(object target, string? path)
    {
        Observation[] observers;
        lock (_gate)
        {
            HashSet<Observation>? set;
            if (path is null ? !_byTarget.TryGetValue(target, out set) : !_byPath.TryGetValue(path, out set))
            {
                return 0;
            }

            observers = new Observation[set.Count];
            set.CopyTo(observers);
        }

        // The clock is read only for a listener of the notification lag.
        long changedAt = Diagnostics.CoapInstrumentation.MeasuresNotificationLag ? Now : Observation.NotTimed;
        int count = 0;
        foreach (Observation observation in observers)
        {
            // A path's observers are of one route, unless the routes changed since they registered.
            if (ReferenceEquals(observation.Target, target))
            {
                observation.Trigger(changedAt);
                count++;
            }
        }

        return count;
    }

    /// <summary>Makes one notification (the observation is marked busy).</summary>
    internal void Run(Observation observation) => _run(observation);

    // Caller holds the lock.
    private void RemoveLocked(Observation observation)
    {
        _byKey.Remove(observation.Key);
        Volatile.Write(ref _count, _byKey.Count);
        Decrement(_perPeer, observation.Peer);

        Decrement(_perIdentity, PeerIdentityKey.Of(observation.Peer));
        RemoveFromIndexes(observation);
        observation.MarkRemoved();
    }

    // Caller holds the lock. An entry at zero goes, so the tables hold only those that observe something.
    private static void Decrement<TKey>(Dictionary<TKey, int> counts, TKey key)
        where TKey : notnull
    {
        if (counts.TryGetValue(key, out int count))
        {
            if (count <= 1)
            {
                counts.Remove(key);
            }
            else
            {
                counts[key] = count - 1;
            }
        }
    }

    // Caller holds the lock.
    private void AddToIndexes(Observation observation)
    {
        Add(_byTarget, observation.Target, observation);
        Add(_byPath, observation.Path, observation);
    }

    // Caller holds the lock.
    private void RemoveFromIndexes(Observation observation)
    {
        Remove(_byTarget, observation.Target, observation);
        Remove(_byPath, observation.Path, observation);
    }

    private static void Add<TKey>(Dictionary<TKey, HashSet<Observation>> index, TKey key, Observation observation)
        where TKey : notnull
    {
        if (!index.TryGetValue(key, out HashSet<Observation>? set))
        {
            set = new HashSet<Observation>(ReferenceEqualityComparer.Instance);
            index.Add(key, set);
        }

        set.Add(observation);
    }

    // An empty set goes, so the index holds only what is observed now.
    private static void Remove<TKey>(Dictionary<TKey, HashSet<Observation>> index, TKey key, Observation observation)
        where TKey : notnull
    {
        if (index.TryGetValue(key, out HashSet<Observation>? set) && set.Remove(observation) && set.Count == 0)
        {
            index.Remove(key);
        }
    }

    private static partial class Log
    {
        [LoggerMessage(301, LogLevel.Debug, "{Peer} observes {Path}")]
        public static partial void Registered(ILogger logger, CoapPeer peer, string path);

        [LoggerMessage(302, LogLevel.Debug, "{Peer} no longer observes {Path}: {Reason}")]
        public static partial void Removed(ILogger logger, CoapPeer peer, string path, string reason);

        [LoggerMessage(303, LogLevel.Debug, "Refused to let {Peer} observe {Path}: {Total} observations in all, {OfPeer} of this peer, {OfIdentity} of its identity, at the configured bound (ObserveOptions)")]
        public static partial void Refused(ILogger logger, CoapPeer peer, string path, int total, int ofPeer, int ofIdentity);
    }
}
