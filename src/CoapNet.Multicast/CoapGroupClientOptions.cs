namespace CoapNet.Multicast;

/// <summary>How a <see cref="CoapGroupClient"/> sends to a group.</summary>
public sealed class CoapGroupClientOptions
{
    /// <summary>
    /// The IPv4 TTL and IPv6 hop limit of group requests (default 1: the link and no further, so a request does not cross
    /// a router unless asked, RFC 7252 section 8.1 and draft-ietf-core-groupcomm-bis section 3.1).
    /// </summary>
    public int HopLimit { get; set; } = 1;

    /// <summary>
    /// The network interface, by name ("eth0"), group requests leave by; null (the default) for the one the OS routes the
    /// group to. A link-local IPv6 group takes its zone from the URI (coap://[ff02::fd%eth0], RFC 6874) when it has one.
    /// </summary>
    public string? Interface { get; set; }

    /// <summary>The largest response taken in, in bytes (default 1152, RFC 7252 section 4.6); a larger datagram is dropped.</summary>
    public int MaxMessageSize { get; set; } = 1152;
}
