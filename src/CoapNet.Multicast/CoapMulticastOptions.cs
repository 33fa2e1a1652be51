namespace CoapNet.Multicast;

/// <summary>
/// How a server takes part in CoAP group communication (RFC 7252 section 8, draft-ietf-core-groupcomm-bis): the groups
/// it joins and where, how long it waits before answering a group request, and how many group requests one source may make.
/// </summary>
public sealed class CoapMulticastOptions
{
    /// <summary>DEFAULT_LEISURE, 5 seconds (RFC 7252 section 4.8.2): the leisure when nothing better is known (section 8.2).</summary>
    public static readonly TimeSpan DefaultLeisure = TimeSpan.FromSeconds(5);

    /// <summary>
    /// The UDP port the groups are served on, and the endpoint's unicast port (default 5683, RFC 7252 section 6.1). 0
    /// lets the OS pick one, which only a test wants: a group request needs a port its clients know.
    /// </summary>
    public int Port { get; set; } = 5683;

    /// <summary>
    /// The groups to join (default: All CoAP Nodes, 224.0.1.187, ff02::fd and ff05::fd, RFC 7252 section 12.8). Any
    /// multicast address may be added; a request sent to a group not listed here is dropped.
    /// </summary>
    public IList<System.Net.IPAddress> Groups { get; } =
        [CoapGroups.AllCoapNodesIPv4, CoapGroups.AllCoapNodesLinkLocal, CoapGroups.AllCoapNodesSiteLocal];

    /// <summary>
    /// The network interfaces, by name ("eth0"), the groups are joined on; empty (the default) for every interface that is
    /// up and can multicast, loopback aside.
    /// </summary>
    public IList<string> Interfaces { get; } = [];

    /// <summary>
    /// The leisure: a response to a group request is sent at a random point within it, so the members of a group do not all
    /// answer at once (RFC 7252 section 8.2). Null (the default) computes it with section 8.2's formula, S * G / R, from
    /// <see cref="GroupSizeEstimate"/>, <see cref="EstimatedResponseSize"/> and <see cref="DataRate"/> when the group's
    /// size is estimated, and is <see cref="DefaultLeisure"/> when it is not. <see cref="TimeSpan.Zero"/> answers at once.
    /// </summary>
    public TimeSpan? Leisure { get; set; }

    /// <summary>G in RFC 7252 section 8.2: how many servers are expected to answer; null (the default) when unknown.</summary>
    public int? GroupSizeEstimate { get; set; }

    /// <summary>S in RFC 7252 section 8.2: the expected size of a response in bytes (default 100).</summary>
    public int EstimatedResponseSize { get; set; } = 100;

    /// <summary>R in RFC 7252 section 8.2: the data rate the responses may take together, in bytes per second (default 1250, 10 kbit/s).</summary>
    public int DataRate { get; set; } = 1250;

    /// <summary>
    /// How many group requests per second one source may make before the server stops answering it, so that a forged
    /// source cannot turn the group into an amplifier (draft-ietf-core-groupcomm-bis, security considerations); default 2.
    /// A source is an IPv4 address or an IPv6 /64 (one host commonly holds a whole /64, RFC 4291 section 2.5.1), and the
    /// rate is shared by every group of the server. Requests above the rate are dropped unanswered.
    /// </summary>
    public double RequestsPerSecond { get; set; } = 2;

    /// <summary>How many group requests a source may make at once before the rate applies (default 4).</summary>
    public int Burst { get; set; } = 4;

    /// <summary>
    /// How many sources the rate limit tracks at most (default 4096). At the bound the source seen longest ago is
    /// forgotten once its bucket has refilled; while it is still limited, a new source is not answered.
    /// </summary>
    public int MaxTrackedSources { get; set; } = 4096;

    /// <summary>The leisure in force: <see cref="Leisure"/>, or RFC 7252 section 8.2's estimate, or <see cref="DefaultLeisure"/>.</summary>
    /// <returns>The leisure.</returns>
    public TimeSpan EffectiveLeisure()
        => Leisure ?? (GroupSizeEstimate is int size
            ? TimeSpan.FromSeconds((double)EstimatedResponseSize * size / DataRate)
            : DefaultLeisure);

    /// <summary>Checks the settings.</summary>
    /// <exception cref="ArgumentException">A setting is out of range; the message names it.</exception>
    internal void Validate()
    {
        if (Port is < 0 or > 65535)
        {
            throw new ArgumentException("Port must be 0 to 65535.", nameof(Port));
        }

        if (Groups.Count == 0)
        {
            throw new ArgumentException("Groups must name at least one group.", nameof(Groups));
        }

        foreach (System.Net.IPAddress group in Groups)
        {
            if (group is null || !CoapGroups.IsGroup(group))
            {
                throw new ArgumentException($"Groups holds {group?.ToString() ?? "null"}, which is not a multicast address.", nameof(Groups));
            }
        }

        if (Leisure < TimeSpan.Zero)
        {
            throw new ArgumentException("Leisure must not be negative.", nameof(Leisure));
        }

        if (GroupSizeEstimate < 1 || EstimatedResponseSize < 1 || DataRate < 1)
        {
            throw new ArgumentException("GroupSizeEstimate, EstimatedResponseSize and DataRate must be positive.", nameof(GroupSizeEstimate));
        }

        if (!(RequestsPerSecond > 0) || Burst < 1 || MaxTrackedSources < 1)
        {
            throw new ArgumentException("RequestsPerSecond, Burst and MaxTrackedSources must be positive.", nameof(RequestsPerSecond));
        }
    }
}
