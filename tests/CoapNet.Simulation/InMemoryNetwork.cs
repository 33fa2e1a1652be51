using System.Net;
using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Simulation;

/// <summary>
/// A deterministic datagram network in memory. Its transports have made-up addresses (10.0.0.1:5683
/// and the like) that never reach a socket. Every send is recorded (time, from, to, bytes, parsed
/// message) and passes the link's drop filters; what survives is queued until the test pumps it
/// with <see cref="DeliverNext"/> or <see cref="DeliverAll"/>, or, with <see cref="DeliversImmediately"/>,
/// handed to the destination's receiver inside the send call. A link given a model with <see cref="NetworkLink.Simulate"/>
/// (or both directions with <see cref="Connect"/>) carries its datagrams in virtual time instead: rate, delay, MTU,
/// bottleneck buffer and loss decide whether and when each arrives, and a timer on the clock delivers it.
/// </summary>
/// <remarks>
/// Delivery gives the receiver a scratch copy of the bytes that is overwritten after the call, as a
/// socket's receive buffer would be, so a receiver that keeps the span past the call is caught.
/// A datagram to an address without a started transport is recorded and lost.
/// </remarks>
public sealed class InMemoryNetwork
{
    // Pumping more than this in one DeliverAll means two parties answer each other forever.
    private const int MaxDeliveriesPerPump = 1_000_000;

    private readonly object _gate = new();
    private readonly TimeProvider _time;
    private readonly long _startTimestamp;
    private readonly Dictionary<IPEndPoint, InMemoryTransport> _transports = [];
    private readonly Dictionary<(IPEndPoint From, IPEndPoint To), NetworkLink> _links = [];
    private readonly List<Datagram> _sent = [];
    private readonly Queue<Datagram> _inFlight = new();

    /// <summary>Creates a network that stamps datagrams with <paramref name="time"/> (the system clock when null).</summary>
    /// <param name="time">The clock; pass the endpoints' <see cref="ManualTimeProvider"/>.</param>
    public InMemoryNetwork(TimeProvider? time = null)
    {
        _time = time ?? TimeProvider.System;
        _startTimestamp = _time.GetTimestamp();
    }

    /// <summary>When true, a send delivers at once, re-entrantly, on the sender's thread; when false (the default) the test pumps.</summary>
    public bool DeliversImmediately { get; init; }

    /// <summary>
    /// True (the default) to keep every datagram sent, parsed, for <see cref="Sent"/>; false for a long simulation of many
    /// endpoints that reads only the links' statistics, so that its memory does not grow with every datagram.
    /// </summary>
    public bool RecordsDatagrams { get; init; } = true;

    /// <summary>A snapshot of every datagram sent so far, in order, dropped ones included.</summary>
    public IReadOnlyList<Datagram> Sent
    {
        get
        {
            lock (_gate)
            {
                return [.. _sent];
            }
        }
    }

    /// <summary>How many datagrams wait to be delivered.</summary>
    public int InFlightCount
    {
        get
        {
            lock (_gate)
            {
                return _inFlight.Count;
            }
        }
    }

    /// <summary>Parses "10.0.0.1:5683" or "10.0.0.1" (port 5683).</summary>
    /// <param name="address">The address, with or without a port.</param>
    /// <returns>The endpoint.</returns>
    public static IPEndPoint EndPoint(string address)
        => IPEndPoint.TryParse(address, out IPEndPoint? endPoint) && endPoint.Port != 0
            ? endPoint
            : new IPEndPoint(IPAddress.Parse(address), 5683);

    /// <summary>Creates a transport bound to <paramref name="address"/> on this network.</summary>
    /// <param name="address">"10.0.0.1" or "10.0.0.1:5683".</param>
    /// <returns>The transport, not started.</returns>
    public InMemoryTransport CreateTransport(string address) => CreateTransport(EndPoint(address));

    /// <summary>Creates a transport bound to <paramref name="local"/> on this network.</summary>
    /// <param name="local">The address; no other live transport may hold it.</param>
    /// <returns>The transport, not started.</returns>
    public InMemoryTransport CreateTransport(IPEndPoint local)
    {
        ArgumentNullException.ThrowIfNull(local);
        lock (_gate)
        {
            if (_transports.ContainsKey(local))
            {
                throw new InvalidOperationException($"{local} is already bound on this network.");
            }

            InMemoryTransport transport = new(this, local);
            _transports.Add(local, transport);
            return transport;
        }
    }

    /// <summary>The link from <paramref name="from"/> to <paramref name="to"/>, to set drop filters on.</summary>
    /// <param name="from">The sender.</param>
    /// <param name="to">The destination.</param>
    /// <returns>The link (created on first use).</returns>
    public NetworkLink Link(IPEndPoint from, IPEndPoint to)
    {
        lock (_gate)
        {
            return GetLink(from, to);
        }
    }

    /// <summary>
    /// Simulates the duplex link between <paramref name="a"/> and <paramref name="b"/>: each direction gets its own
    /// <see cref="SimulatedLink"/> (its own bottleneck and loss), seeded from <paramref name="seed"/>.
    /// </summary>
    /// <param name="a">One end (the client, say).</param>
    /// <param name="b">The other end.</param>
    /// <param name="aToB">The direction from <paramref name="a"/> (the uplink).</param>
    /// <param name="bToA">The direction from <paramref name="b"/> (the downlink).</param>
    /// <param name="seed">The seed both directions' random sources derive from.</param>
    /// <returns>The two directions.</returns>
    public (SimulatedLink AToB, SimulatedLink BToA) Connect(IPEndPoint a, IPEndPoint b, LinkProfile aToB, LinkProfile bToA, int seed)
        => Share([a], b, aToB, bToA, seed);

    /// <summary>
    /// Simulates one bottleneck shared by every path between <paramref name="clients"/> and <paramref name="server"/>, as a
    /// radio cell and its backhaul are: all the clients' datagrams to the server queue in one buffer and cross one link
    /// (<paramref name="up"/>), all the server's to them in another (<paramref name="down"/>), each first in, first out,
    /// with one loss process per direction. With one client it is <see cref="Connect"/>.
    /// </summary>
    /// <param name="clients">The clients.</param>
    /// <param name="server">The server.</param>
    /// <param name="up">The direction toward the server.</param>
    /// <param name="down">The direction toward the clients.</param>
    /// <param name="seed">The seed both directions' random sources derive from.</param>
    /// <returns>The two directions.</returns>
    public (SimulatedLink Up, SimulatedLink Down) Share(IReadOnlyList<IPEndPoint> clients, IPEndPoint server, LinkProfile up, LinkProfile down, int seed)
    {
        ArgumentNullException.ThrowIfNull(clients);
        SimulatedLink upModel = new(up, Seeds.Derive(seed, 0));
        SimulatedLink downModel = new(down, Seeds.Derive(seed, 1));
        foreach (IPEndPoint client in clients)
        {
            Link(client, server).Attach(upModel);
            Link(server, client).Attach(downModel);
        }

        return (upModel, downModel);
    }

    /// <summary>The datagrams sent from <paramref name="from"/> to <paramref name="to"/>, dropped ones included.</summary>
    /// <param name="from">The sender.</param>
    /// <param name="to">The destination.</param>
    /// <returns>A snapshot, in order.</returns>
    public IReadOnlyList<Datagram> SentBetween(IPEndPoint from, IPEndPoint to)
    {
        lock (_gate)
        {
            return _sent.FindAll(d => d.From.Equals(from) && d.To.Equals(to));
        }
    }

    /// <summary>Delivers the oldest queued datagram (which may cause new sends, queued behind the rest).</summary>
    /// <returns>False when nothing was queued.</returns>
    public bool DeliverNext()
    {
        Datagram? datagram;
        InMemoryTransport? target;
        lock (_gate)
        {
            if (!_inFlight.TryDequeue(out datagram))
            {
                return false;
            }

            _transports.TryGetValue(datagram.To, out target);
        }

        target?.Deliver(datagram);
        return true;
    }

    /// <summary>Delivers queued datagrams, and the ones their delivery causes, until none is left.</summary>
    /// <returns>How many were delivered.</returns>
    public int DeliverAll()
    {
        int delivered = 0;
        while (DeliverNext())
        {
            if (++delivered > MaxDeliveriesPerPump)
            {
                throw new InvalidOperationException("The network never went quiet: two parties answer each other forever.");
            }
        }

        return delivered;
    }

    /// <summary>Loses every queued datagram, as if the network dropped them in transit.</summary>
    /// <returns>How many were lost.</returns>
    public int DiscardInFlight()
    {
        lock (_gate)
        {
            int count = _inFlight.Count;
            _inFlight.Clear();
            return count;
        }
    }

    /// <summary>
    /// Waits, in real time, until at least <paramref name="count"/> datagrams were sent in total:
    /// for tests where another thread sends (a blocking call). Not a sleep: it returns as soon as they are.
    /// </summary>
    /// <param name="count">The total to wait for.</param>
    /// <param name="timeout">A bound that only a broken test reaches.</param>
    /// <returns>False when the bound was reached first.</returns>
    public bool WaitForSent(int count, TimeSpan timeout)
    {
        DateTime deadline = DateTime.UtcNow + timeout;
        lock (_gate)
        {
            while (_sent.Count < count)
            {
                TimeSpan remaining = deadline - DateTime.UtcNow;
                if (remaining <= TimeSpan.Zero || !Monitor.Wait(_gate, remaining))
                {
                    return _sent.Count >= count;
                }
            }

            return true;
        }
    }

    internal void Transmit(InMemoryTransport from, byte[] bytes, IPEndPoint to)
    {
        Datagram datagram;
        InMemoryTransport? target = null;
        lock (_gate)
        {
            NetworkLink link = GetLink(from.LocalEndPoint, to);
            CoapMessage? message = RecordsDatagrams && CoapMessageSerializer.Udp.TryDeserialize(bytes.AsSpan(), out CoapMessage? parsed, out _) ? parsed : null;
            TimeSpan now = _time.GetElapsedTime(_startTimestamp);
            datagram = new Datagram(_sent.Count + 1, now, from.LocalEndPoint, to, link.Count(), bytes, message, Dropped: false);
            if (link.ShouldDrop(datagram))
            {
                datagram = datagram with { Dropped = true, Drop = LinkDrop.Filter };
            }
            else if (link.Model is { } model)
            {
                (TimeSpan arrivesAt, LinkDrop drop) = model.Carry(bytes.Length, now);
                datagram = drop == LinkDrop.None ? datagram with { ArrivesAt = arrivesAt } : datagram with { Dropped = true, Drop = drop };
            }

            if (RecordsDatagrams)
            {
                _sent.Add(datagram);
                Monitor.PulseAll(_gate);
            }
            if (datagram.Dropped)
            {
                return;
            }

            if (datagram.ArrivesAt is TimeSpan at)
            {
                // A simulated link delivers on the clock, never through the pump.
                DeliverLater(datagram, at - now);
                return;
            }

            if (!DeliversImmediately)
            {
                _inFlight.Enqueue(datagram);
                return;
            }

            _transports.TryGetValue(to, out target);
        }

        target?.Deliver(datagram);
    }

    // Caller holds the lock. The timer is created under it, so deliveries scheduled at the same instant keep their send order.
    private void DeliverLater(Datagram datagram, TimeSpan delay)
    {
        Delivery delivery = new(this, datagram);
        delivery.Timer = _time.CreateTimer(static state => ((Delivery)state!).Run(), delivery, delay, Timeout.InfiniteTimeSpan);
    }

    internal void Unbind(InMemoryTransport transport)
    {
        lock (_gate)
        {
            if (_transports.TryGetValue(transport.LocalEndPoint, out InMemoryTransport? bound) && ReferenceEquals(bound, transport))
            {
                _transports.Remove(transport.LocalEndPoint);
            }
        }
    }

    /// <summary>A datagram on its way over a simulated link, and the timer that delivers it.</summary>
    private sealed class Delivery(InMemoryNetwork network, Datagram datagram)
    {
        public ITimer? Timer { get; set; }

        public void Run()
        {
            Timer?.Dispose();
            InMemoryTransport? target;
            lock (network._gate)
            {
                network._transports.TryGetValue(datagram.To, out target);
            }

            target?.Deliver(datagram);
        }
    }

    // Caller holds the lock.
    private NetworkLink GetLink(IPEndPoint from, IPEndPoint to)
    {
        if (!_links.TryGetValue((from, to), out NetworkLink? link))
        {
            link = new NetworkLink(_gate, from, to);
            _links.Add((from, to), link);
        }

        return link;
    }
}
