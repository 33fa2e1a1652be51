namespace CoapNet.Messaging;

/// <summary>
/// The features of one exchange (<see cref="CoapExchange.Features"/>) or one client call (<see cref="CoapClientCall.Features"/>):
/// objects keyed by type, in which a stage keeps what it knows of that exchange and what a caller or server hands to the
/// stages (as ASP.NET Core's <c>HttpContext.Features</c>). A stage defines a type of its own for its state, so no two
/// stages share a slot and the exchange has no field per feature.
/// </summary>
/// <remarks>
/// <para>
/// A view, passed by value: it costs no object until the first <see cref="Set{T}"/>, and reading an exchange that has
/// none reads one field. The features are few (a handful at most), so a lookup is a short scan, no dictionary.
/// </para>
/// <para>
/// Keyed by the type argument, not by the object's runtime type: <c>Set&lt;IMyFeature&gt;(x)</c> is found by
/// <c>Get&lt;IMyFeature&gt;()</c> only. A stage that may be added twice to one endpoint (a second block-wise stage
/// outside OSCORE, RFC 8613 section 4.1.3.4) keeps its state under a type of its own per instance, or in one object that
/// tells its instances apart.
/// </para>
/// <para>
/// Thread-safe: <see cref="Get{T}"/> and <see cref="Set{T}"/> may be called from any thread (the receive thread, a timer,
/// the caller's); a value set is seen by every read that begins after <see cref="Set{T}"/> returns. Each set copies the
/// short list, so a stage sets its state once and changes that object, rather than setting a new one per message.
/// </para>
/// </remarks>
public readonly struct CoapFeatures
{
    private readonly IFeatureOwner? _owner;

    internal CoapFeatures(IFeatureOwner owner) => _owner = owner;

    /// <summary>The feature of type <typeparamref name="T"/>, or null when none was set.</summary>
    /// <typeparam name="T">The feature's type, as it was set.</typeparam>
    /// <returns>The feature, or null.</returns>
    public T? Get<T>()
        where T : class
    {
        // Most exchanges have no feature: answered before typeof(T), which in shared generic code is a runtime lookup.
        FeatureEntry[]? entries = _owner is null ? null : Volatile.Read(ref _owner.FeatureSlot);
        return entries is null ? null : (T?)Find(entries, typeof(T));
    }

    /// <summary>Sets the feature of type <typeparamref name="T"/>, replacing any; null removes it.</summary>
    /// <typeparam name="T">The type it is found by.</typeparam>
    /// <param name="feature">The feature, or null to remove it.</param>
    /// <exception cref="InvalidOperationException">This is a <c>default</c> value, not the features of an exchange or call.</exception>
    public void Set<T>(T? feature)
        where T : class
        => SetCore(typeof(T), feature);

    /// <summary>The feature of type <typeparamref name="T"/>, set to <paramref name="value"/> first when there is none: one object, whichever thread sets first.</summary>
    internal T GetOrSet<T>(T value)
        where T : class
    {
        if (_owner is null)
        {
            throw new InvalidOperationException("This CoapFeatures is a default value; use the Features of an exchange or a call.");
        }

        ref FeatureEntry[]? slot = ref _owner.FeatureSlot;
        while (true)
        {
            FeatureEntry[]? current = Volatile.Read(ref slot);
            if (Find(current, typeof(T)) is T existing)
            {
                return existing;
            }

            if (ReferenceEquals(Interlocked.CompareExchange(ref slot, With(current, typeof(T), value), current), current))
            {
                return value;
            }
        }
    }

    /// <summary>The value kept under <paramref name="key"/>, a type of the library's own (the exchange's further-response listener).</summary>
    internal object? GetCore(Type key) => _owner is null ? null : Find(Volatile.Read(ref _owner.FeatureSlot), key);

    /// <summary>Keeps <paramref name="value"/> under <paramref name="key"/>: a copy of the list with it, swapped in atomically.</summary>
    internal void SetCore(Type key, object? value)
    {
        if (_owner is null)
        {
            throw new InvalidOperationException("This CoapFeatures is a default value; use the Features of an exchange or a call.");
        }

        ref FeatureEntry[]? slot = ref _owner.FeatureSlot;
        while (true)
        {
            FeatureEntry[]? current = Volatile.Read(ref slot);
            FeatureEntry[]? updated = With(current, key, value);
            if (ReferenceEquals(Interlocked.CompareExchange(ref slot, updated, current), current))
            {
                return;
            }
        }
    }

    private static object? Find(FeatureEntry[]? entries, Type key)
    {
        if (entries is null)
        {
            return null;
        }

        foreach (FeatureEntry entry in entries)
        {
            if (ReferenceEquals(entry.Key, key))
            {
                return entry.Value;
            }
        }

        return null;
    }

    /// <summary>A new list: <paramref name="current"/> with <paramref name="key"/> set to <paramref name="value"/>, or without it when null.</summary>
    private static FeatureEntry[]? With(FeatureEntry[]? current, Type key, object? value)
    {
        int count = current?.Length ?? 0;
        int index = -1;
        for (int i = 0; i < count; i++)
        {
            if (ReferenceEquals(current![i].Key, key))
            {
                index = i;
                break;
            }
        }

        if (value is null)
        {
            if (index < 0)
            {
                return current;
            }

            if (count == 1)
            {
                return null;
            }

            FeatureEntry[] smaller = new FeatureEntry[count - 1];
            Array.Copy(current!, 0, smaller, 0, index);
            Array.Copy(current!, index + 1, smaller, index, count - index - 1);
            return smaller;
        }

        FeatureEntry[] updated = new FeatureEntry[index < 0 ? count + 1 : count];
        if (count > 0)
        {
            Array.Copy(current!, updated, count);
        }

        updated[index < 0 ? count : index] = new FeatureEntry(key, value);
        return updated;
    }
}

/// <summary>One feature: its key (the type it was set as) and its value.</summary>
internal readonly record struct FeatureEntry(Type Key, object Value);

/// <summary>What keeps a feature list: an exchange or a client call, each one field, empty until a feature is set.</summary>
internal interface IFeatureOwner
{
    /// <summary>The field that holds the list (copied on each set, swapped in with a compare-exchange).</summary>
    ref FeatureEntry[]? FeatureSlot { get; }
}
