namespace CoapNet.Simulation;

/// <summary>What one direction of a <see cref="SimulatedLink"/> carried: datagrams, their packets (fragments) and what became of them.</summary>
public sealed class LinkStatistics
{
    /// <summary>Datagrams offered to the link.</summary>
    public long Datagrams { get; internal set; }

    /// <summary>Datagrams whose every packet arrived.</summary>
    public long DatagramsDelivered { get; internal set; }

    /// <summary>Packets offered to the bottleneck (one per datagram, more for a fragmented one).</summary>
    public long Packets { get; internal set; }

    /// <summary>Packets the full bottleneck buffer refused.</summary>
    public long BufferDrops { get; internal set; }

    /// <summary>Packets lost on the wireless hop, after using the bottleneck.</summary>
    public long Losses { get; internal set; }

    /// <summary>Packets whose loss was drawn in the loss model's bad state.</summary>
    public long PacketsInBadState { get; internal set; }

    /// <summary>Packets that arrived.</summary>
    public long Delivered { get; internal set; }

    /// <summary>Bytes the bottleneck transmitted (lost packets included).</summary>
    public long Bytes { get; internal set; }

    /// <summary>The most bytes the bottleneck buffer held at once.</summary>
    public long MaxQueuedBytes { get; internal set; }

    /// <summary>The one-way delays of the packets that arrived, added up: from their datagram's offer to their arrival.</summary>
    public TimeSpan TotalDelay { get; internal set; }

    /// <summary>The time the packets that arrived waited in the buffer before their transmission started, added up.</summary>
    public TimeSpan TotalQueueing { get; internal set; }

    /// <summary>The share of packets that went through the bottleneck and were lost on the wireless hop.</summary>
    public double LossRate => Packets - BufferDrops == 0 ? 0 : (double)Losses / (Packets - BufferDrops);

    /// <summary>The mean one-way delay of the packets that arrived.</summary>
    public TimeSpan MeanDelay => Delivered == 0 ? TimeSpan.Zero : TotalDelay / Delivered;

    /// <inheritdoc/>
    public override string ToString()
        => $"{Datagrams} datagrams ({DatagramsDelivered} delivered), {Packets} packets: {BufferDrops} dropped at the buffer, {Losses} lost ({LossRate:P1}), mean delay {MeanDelay.TotalMilliseconds:0.0} ms";
}
