using System.Net;

namespace CoapNet.Simulation;

/// <summary>
/// The one-way path from one address to another in an <see cref="InMemoryNetwork"/>, and its drop
/// filters. Filters add up: a datagram is dropped when any of them says so.
/// </summary>
public sealed class NetworkLink
{
    private readonly object _gate;
    private readonly HashSet<int> _dropOrdinals = [];
    private readonly List<Func<Datagram, bool>> _predicates = [];
    private bool _dropAll;
    private int _dropNext;
    private int _count;

    internal NetworkLink(object gate, IPEndPoint from, IPEndPoint to)
    {
        _gate = gate;
        From = from;
        To = to;
    }

    /// <summary>The sending side.</summary>
    public IPEndPoint From { get; }

    /// <summary>The receiving side.</summary>
    public IPEndPoint To { get; }

    /// <summary>How many datagrams were sent over the link so far, dropped or not.</summary>
    public int DatagramCount
    {
        get
        {
            lock (_gate)
            {
                return _count;
            }
        }
    }

    /// <summary>Drops every datagram from now on (until <see cref="Restore"/>).</summary>
    /// <returns>This link.</returns>
    public NetworkLink DropAll()
    {
        lock (_gate)
        {
            _dropAll = true;
        }

        return this;
    }

    /// <summary>Drops the datagrams with these 1-based send ordinals on the link, counted since the network was created.</summary>
    /// <param name="ordinals">The ordinals; 1 is the first datagram ever sent over the link.</param>
    /// <returns>This link.</returns>
    public NetworkLink DropNth(params int[] ordinals)
    {
        lock (_gate)
        {
            _dropOrdinals.UnionWith(ordinals);
        }

        return this;
    }

    /// <summary>Drops the next <paramref name="count"/> datagrams sent over the link.</summary>
    /// <param name="count">How many.</param>
    /// <returns>This link.</returns>
    public NetworkLink DropNext(int count = 1)
    {
        lock (_gate)
        {
            _dropNext += count;
        }

        return this;
    }

    /// <summary>Drops every datagram for which <paramref name="predicate"/> is true (it sees the datagram before the drop decision).</summary>
    /// <param name="predicate">The filter.</param>
    /// <returns>This link.</returns>
    public NetworkLink DropWhere(Func<Datagram, bool> predicate)
    {
        ArgumentNullException.ThrowIfNull(predicate);
        lock (_gate)
        {
            _predicates.Add(predicate);
        }

        return this;
    }

    /// <summary>The simulated link model of this path, when <see cref="Simulate"/> attached one.</summary>
    public SimulatedLink? Model { get; private set; }

    /// <summary>
    /// Carries every later datagram over a simulated link with <paramref name="profile"/> instead of the queue the test
    /// pumps: each is delivered when its time comes, by a timer on the network's clock (advance it to move the datagrams),
    /// or dropped by the bottleneck or the loss model. Drop filters still apply first.
    /// </summary>
    /// <param name="profile">Rate, delays, MTU, buffer and loss.</param>
    /// <param name="seed">The seed of the link's random sources (loss and extra delay).</param>
    /// <returns>The link model, whose statistics tell what it carried.</returns>
    /// <exception cref="ArgumentException">The profile is out of range.</exception>
    public SimulatedLink Simulate(LinkProfile profile, int seed) => Attach(new SimulatedLink(profile, seed));

    /// <summary>Carries every later datagram over <paramref name="model"/>, which other paths may share: one bottleneck for several senders.</summary>
    internal SimulatedLink Attach(SimulatedLink model)
    {
        lock (_gate)
        {
            Model = model;
        }

        return model;
    }

    /// <summary>Removes every drop filter.</summary>
    /// <returns>This link.</returns>
    public NetworkLink Restore()
    {
        lock (_gate)
        {
            _dropAll = false;
            _dropNext = 0;
            _dropOrdinals.Clear();
            _predicates.Clear();
        }

        return this;
    }

    /// <summary>Counts a datagram and returns its ordinal on the link. Caller holds the network's lock.</summary>
    internal int Count() => ++_count;

    /// <summary>Decides the fate of a datagram. Caller holds the network's lock.</summary>
    internal bool ShouldDrop(Datagram datagram)
    {
        bool drop = _dropAll || _dropOrdinals.Contains(datagram.LinkOrdinal);
        if (!drop && _dropNext > 0)
        {
            _dropNext--;
            drop = true;
        }

        foreach (Func<Datagram, bool> predicate in _predicates)
        {
            drop |= predicate(datagram);
        }

        return drop;
    }
}
