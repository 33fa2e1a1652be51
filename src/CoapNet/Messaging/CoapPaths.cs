using System.Net;
using System.Net.Sockets;
using CoapNet.Channels;

namespace CoapNet.Messaging;

/// <summary>
/// An endpoint's configured paths (<see cref="CoapEndpointOptions.Paths"/>), copied when the endpoint is made: which one a
/// peer is on (the longest prefix that contains its address), and what that path allows a CoAP message to be.
/// </summary>
/// <remarks>Immutable, so every layer and stage of an endpoint reads it without a lock; empty (and free) without paths.</remarks>
internal sealed class CoapPaths
{
    /// <summary>No path configured: every peer is on the general Internet.</summary>
    public static readonly CoapPaths None = new([]);

    // Longest prefix first, so the first match is the most specific.
    private readonly Entry[] _entries;

    private CoapPaths(Entry[] entries) => _entries = entries;

    /// <summary>True when no path is configured.</summary>
    public bool IsEmpty => _entries.Length == 0;

    /// <summary>The paths of <paramref name="options"/>, checked (<see cref="CoapEndpointOptions.Validate"/> checked them already).</summary>
    public static CoapPaths From(IList<CoapPathOptions>? options)
    {
        if (options is null || options.Count == 0)
        {
            return None;
        }

        Entry[] entries = new Entry[options.Count];
        for (int i = 0; i < entries.Length; i++)
        {
            CoapPathOptions path = options[i] ?? throw new ArgumentException($"Paths[{i}] is null.", nameof(options));
            entries[i] = new Entry(path.Validate(), path.Mtu, path.TokenLength);
        }

        // A stable sort: of two prefixes of one length (which Validate refuses when equal), the first configured wins.
        Entry[] sorted = [.. entries.OrderByDescending(static e => e.Network.PrefixLength)];
        return new CoapPaths(sorted);
    }

    /// <summary>The path <paramref name="peer"/> is on, or null for the general Internet.</summary>
    public Entry? Find(CoapPeer peer) => _entries.Length == 0 ? null : Find(peer.EndPoint.Address);

    /// <summary>The length of the tokens of requests to <paramref name="peer"/> its path sets, or null for the endpoint's.</summary>
    public int? TokenLength(CoapPeer peer) => Find(peer)?.TokenLength;

    /// <summary>
    /// The largest CoAP message to <paramref name="peer"/> that fits one IP packet of its path's MTU: the MTU less the IP
    /// and UDP headers of the peer's address family and, for coaps, a DTLS record; null when its path sets no MTU.
    /// </summary>
    public int? MessageBudget(CoapPeer peer)
    {
        if (_entries.Length == 0 || Find(peer.EndPoint.Address) is not { Mtu: int mtu })
        {
            return null;
        }

        IPAddress address = CoapPathOptions.Unmapped(peer.EndPoint.Address);
        int framing = address.AddressFamily == AddressFamily.InterNetworkV6 ? CoapPathOptions.UdpIpv6Framing : CoapPathOptions.UdpIpv4Framing;
        if (string.Equals(peer.Scheme, CoapPeer.DtlsScheme, StringComparison.Ordinal))
        {
            framing += CoapPathOptions.DtlsFraming;
        }

        return mtu - framing;
    }

    private Entry? Find(IPAddress address)
    {
        address = CoapPathOptions.Unmapped(address);
        foreach (Entry entry in _entries)
        {
            if (entry.Network.Contains(address))
            {
                return entry;
            }
        }

        return null;
    }

    /// <summary>One configured path: its prefix and what it sets.</summary>
    public sealed record Entry(IPNetwork Network, int? Mtu, int? TokenLength);
}
