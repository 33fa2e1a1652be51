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

    /// <summary>
    /// How long ending a group observation waits for the members to confirm their deregistration (default 2 seconds,
    /// RFC 7252's ACK_TIMEOUT): a member that answers the GET with Observe 1 no longer observes; one that sends another
    /// notification meanwhile is answered with a Reset, which ends its observation too (RFC 7641 section 3.6). After it
    /// the socket closes, and a member that heard neither stops at its next confirmable notification.
    /// </summary>
    public TimeSpan DeregistrationTimeout { get; set; } = TimeSpan.FromSeconds(2);
}
