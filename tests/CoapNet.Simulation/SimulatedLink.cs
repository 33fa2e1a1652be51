namespace CoapNet.Simulation;

/// <summary>What happened to a datagram on a <see cref="SimulatedLink"/>.</summary>
public enum LinkDrop
{
    /// <summary>Delivered (or not on a simulated link).</summary>
    None,

    /// <summary>A drop filter of the <see cref="NetworkLink"/> discarded it (a test's choice).</summary>
    Filter,

    /// <summary>A packet of it found the bottleneck buffer full (congestion).</summary>
    Buffer,

    /// <summary>A packet of it was lost on the wireless hop (the loss model).</summary>
    Loss,
}

/// <summary>
/// The state of one direction of a simulated link (<see cref="LinkProfile"/>): the bottleneck's queue and the time its
/// transmitter is busy until, the loss model's state, and its own seeded random sources, so a run is the same for the
/// same seed. Attached to a <see cref="NetworkLink"/> with <see cref="NetworkLink.Simulate"/>; the network calls it under
/// its lock.
/// </summary>
public sealed class SimulatedLink
{
    private readonly Queue<(TimeSpan Done, int Bytes)> _queue = new();
    private readonly Random _lossRandom;
    private readonly Random _delayRandom;
    private long _queuedBytes;
    private TimeSpan _busyUntil;
    private TimeSpan _lastArrival;
    private bool _bad;

    internal SimulatedLink(LinkProfile profile, int seed)
    {
        ArgumentNullException.ThrowIfNull(profile);
        profile.Validate();
        Profile = profile;

        // Separate streams for loss and delay, so changing one parameter does not reshuffle the other's draws.
        _lossRandom = new Random(Seeds.Derive(seed, 1));
        _delayRandom = new Random(Seeds.Derive(seed, 2));
        _bad = profile.Loss.BadShare > 0 && _lossRandom.NextDouble() < profile.Loss.BadShare;
    }

    /// <summary>The link's parameters.</summary>
    public LinkProfile Profile { get; }

    /// <summary>What the link carried and dropped so far.</summary>
    public LinkStatistics Statistics { get; } = new();

    /// <summary>
    /// Carries a datagram of <paramref name="length"/> bytes offered at <paramref name="now"/>: queues, transmits and
    /// delays each of its packets, and draws their loss.
    /// </summary>
    /// <returns>When the datagram arrives whole, or why it does not.</returns>
    internal (TimeSpan ArrivesAt, LinkDrop Drop) Carry(int length, TimeSpan now)
    {
        Statistics.Datagrams++;
        LinkDrop drop = LinkDrop.None;
        TimeSpan arrival = now;
        int ipBytes = length + LinkProfile.UdpIpv4Overhead;
        if (ipBytes <= Profile.Mtu)
        {
            Send(ipBytes, now, ref drop, ref arrival);
        }
        else
        {
            // RFC 791: each fragment repeats the IPv4 header and carries a multiple of 8 bytes of the UDP datagram.
            int perFragment = (Profile.Mtu - LinkProfile.Ipv4HeaderBytes) / 8 * 8;
            for (int data = ipBytes - LinkProfile.Ipv4HeaderBytes; data > 0; data -= perFragment)
            {
                Send(LinkProfile.Ipv4HeaderBytes + Math.Min(data, perFragment), now, ref drop, ref arrival);
            }
        }

        if (drop == LinkDrop.None)
        {
            Statistics.DatagramsDelivered++;
        }

        return (arrival, drop);
    }

    private void Send(int bytes, TimeSpan now, ref LinkDrop drop, ref TimeSpan arrival)
    {
        Statistics.Packets++;
        while (_queue.TryPeek(out (TimeSpan Done, int Bytes) head) && head.Done <= now)
        {
            _queue.Dequeue();
            _queuedBytes -= head.Bytes;
        }

        if (_queuedBytes + bytes > Profile.BufferBytes)
        {
            // Drop-tail: the full buffer refuses the packet, which uses none of the link.
            Statistics.BufferDrops++;
            drop = LinkDrop.Buffer;
            return;
        }

        TimeSpan start = _busyUntil > now ? _busyUntil : now;
        TimeSpan sent = start + Profile.TransmissionTime(bytes);
        _busyUntil = sent;
        _queue.Enqueue((sent, bytes));
        _queuedBytes += bytes;
        Statistics.MaxQueuedBytes = Math.Max(Statistics.MaxQueuedBytes, _queuedBytes);
        Statistics.Bytes += bytes;

        // The wireless hop: the packet used the bottleneck whether or not it survives.
        if (LoseNext())
        {
            Statistics.Losses++;
            drop = drop == LinkDrop.None ? LinkDrop.Loss : drop;
            return;
        }

        TimeSpan extra = Profile.ExtraDelayMin + ((Profile.ExtraDelayMax - Profile.ExtraDelayMin) * _delayRandom.NextDouble());
        TimeSpan at = sent + Profile.Delay + extra;
        if (at < _lastArrival)
        {
            at = _lastArrival;
        }

        _lastArrival = at;
        Statistics.Delivered++;
        Statistics.TotalDelay += at - now;
        Statistics.TotalQueueing += start - now;
        if (at > arrival)
        {
            arrival = at;
        }
    }

    // netem's gemodel order: the packet's fate in the current state, then the chain's step.
    private bool LoseNext()
    {
        GilbertElliott model = Profile.Loss;
        double loss = _bad ? model.BadLoss : model.GoodLoss;
        bool lost = loss > 0 && _lossRandom.NextDouble() < loss;
        if (_bad)
        {
            Statistics.PacketsInBadState++;
        }

        if (model.GoodToBad > 0)
        {
            _bad = _lossRandom.NextDouble() < (_bad ? 1 - model.BadToGood : model.GoodToBad);
        }

        return lost;
    }
}
