namespace CoapNet.Simulation;

/// <summary>
/// One direction of a simulated link, the way the NB-IoT experiment of seed 002 built it from two netem instances: a
/// bottleneck (a drop-tail buffer of <see cref="BufferBytes"/> in front of a transmitter of <see cref="BitsPerSecond"/>),
/// then the wireless hop (<see cref="Delay"/> plus a random extra delay, and <see cref="Loss"/>). A packet lost on the
/// wireless hop has used the bottleneck's capacity; a packet the full buffer refuses has not.
/// </summary>
/// <remarks>
/// Sizes are IPv4 packets: a datagram of n bytes is a packet of n + 28 (IPv4 and UDP headers); one larger than
/// <see cref="Mtu"/> is cut into IPv4 fragments (20-byte headers, data in multiples of 8), each queued, sent and lost on
/// its own, and the datagram arrives only when every fragment does. The link is first-in first-out: the random extra
/// delay never lets a packet overtake the one before it.
/// </remarks>
public sealed record LinkProfile
{
    /// <summary>The bytes of IPv4 and UDP headers around a datagram.</summary>
    public const int UdpIpv4Overhead = 28;

    /// <summary>The bytes of an IPv4 header, repeated in every fragment.</summary>
    public const int Ipv4HeaderBytes = 20;

    /// <summary>The bottleneck's rate in bits per second (default: no limit).</summary>
    public double BitsPerSecond { get; init; } = double.PositiveInfinity;

    /// <summary>The one-way propagation delay of the wireless hop.</summary>
    public TimeSpan Delay { get; init; }

    /// <summary>The least random extra delay per packet (the rest of the path); uniform up to <see cref="ExtraDelayMax"/>.</summary>
    public TimeSpan ExtraDelayMin { get; init; }

    /// <summary>The most random extra delay per packet.</summary>
    public TimeSpan ExtraDelayMax { get; init; }

    /// <summary>The largest IPv4 packet, in bytes (default 1500); larger datagrams are fragmented.</summary>
    public int Mtu { get; init; } = 1500;

    /// <summary>The bottleneck buffer in bytes, the packet in transmission included (default: no limit); a packet that does not fit is dropped.</summary>
    public long BufferBytes { get; init; } = long.MaxValue;

    /// <summary>Loss on the wireless hop (default none).</summary>
    public GilbertElliott Loss { get; init; } = GilbertElliott.None;

    /// <summary>How long a packet of <paramref name="bytes"/> takes to leave the bottleneck.</summary>
    /// <param name="bytes">The packet's size.</param>
    /// <returns>The transmission time (zero without a rate limit).</returns>
    public TimeSpan TransmissionTime(int bytes)
        => double.IsPositiveInfinity(BitsPerSecond) ? TimeSpan.Zero : TimeSpan.FromTicks((long)Math.Round(bytes * 8 * TimeSpan.TicksPerSecond / BitsPerSecond));

    /// <summary>Checks the parameters.</summary>
    /// <exception cref="ArgumentException">A parameter is out of range; the message names it.</exception>
    public void Validate()
    {
        if (!(BitsPerSecond > 0))
        {
            throw new ArgumentException("BitsPerSecond must be positive.", nameof(BitsPerSecond));
        }

        if (Delay < TimeSpan.Zero || ExtraDelayMin < TimeSpan.Zero || ExtraDelayMax < ExtraDelayMin)
        {
            throw new ArgumentException("Delay and ExtraDelayMin must not be negative, and ExtraDelayMax must not be below ExtraDelayMin.", nameof(ExtraDelayMax));
        }

        // The smallest MTU IPv4 allows (RFC 791): a header and 8 bytes of data per fragment.
        if (Mtu < 68)
        {
            throw new ArgumentException("Mtu must be at least 68 bytes (RFC 791).", nameof(Mtu));
        }

        if (BufferBytes < 1)
        {
            throw new ArgumentException("BufferBytes must be positive.", nameof(BufferBytes));
        }

        ArgumentNullException.ThrowIfNull(Loss);
        Loss.Validate();
    }
}
