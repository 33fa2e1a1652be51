using System.Diagnostics.Metrics;

namespace CoapNet.Diagnostics;

/// <summary>Something that keeps per-peer retransmission state: a datagram endpoint's message layer.</summary>
internal interface IPeerTimeoutSource
{
    /// <summary>Adds one measurement per peer whose policy holds an RTO estimate; called by the gauge's collection.</summary>
    void ReportTimeouts(List<Measurement<double>> measurements);
}

// The coap.peer.rto gauge reads the live endpoints when a listener collects, so nothing is measured otherwise.
public static partial class CoapInstrumentation
{
    private static readonly List<IPeerTimeoutSource> PeerTimeoutSources = [];

    /// <summary>Lets the gauge read <paramref name="source"/> until <see cref="RemovePeerTimeoutSource"/>.</summary>
    internal static void AddPeerTimeoutSource(IPeerTimeoutSource source)
    {
        // Touching the gauge here creates the meter's instruments before the first endpoint exists to report.
        _ = PeerTimeoutGauge;
        lock (PeerTimeoutSources)
        {
            PeerTimeoutSources.Add(source);
        }
    }

    /// <summary>Stops reading <paramref name="source"/> (its endpoint was disposed).</summary>
    internal static void RemovePeerTimeoutSource(IPeerTimeoutSource source)
    {
        lock (PeerTimeoutSources)
        {
            PeerTimeoutSources.Remove(source);
        }
    }

    private static List<Measurement<double>> ObservePeerTimeouts()
    {
        IPeerTimeoutSource[] sources;
        lock (PeerTimeoutSources)
        {
            sources = [.. PeerTimeoutSources];
        }

        // Each source takes its own lock while it reads; none is held here, so an endpoint is never blocked on another.
        List<Measurement<double>> measurements = [];
        foreach (IPeerTimeoutSource source in sources)
        {
            source.ReportTimeouts(measurements);
        }

        return measurements;
    }
}
