namespace CoapNet.Messaging;

/// <summary>
/// Limits of a <see cref="CoapEndpoint"/> over a connection transport (CoAP over TCP, RFC 8323):
/// how many connections, how large a message, how many requests at once, and how long to wait.
/// </summary>
/// <remarks>Every limit applies per endpoint or per connection, so one bad peer never affects the others.</remarks>
public sealed class CoapConnectionOptions
{
    /// <summary>The Max-Message-Size a peer may assume before our CSM arrives, and ours before its CSM does: 1152 bytes (RFC 8323 section 5.3.1).</summary>
    public const int BaseMaxMessageSize = 1152;

    /// <summary>
    /// How many connections the endpoint holds at once (default 1000). At it a server releases its idlest
    /// connection (the longest without a message either way, and with none in flight; RFC 8323 section 5.5 Release
    /// once established) to admit a new one, and closes the new one at once only when every connection is busy; a
    /// client fails a request that would need one more.
    /// </summary>
    public int MaxConnections { get; set; } = 1000;

    /// <summary>
    /// How many of a server's <see cref="MaxConnections"/> one address may hold (default 100): an IPv4 address, or an
    /// IPv6 /64. Generous, since clients behind carrier-grade NAT share addresses; at the bound a new connection from that
    /// address takes the place of its idlest one, so one address cannot crowd others out with connections it keeps busy.
    /// </summary>
    public int MaxConnectionsPerAddress { get; set; } = 100;

    /// <summary>
    /// How long a connection may go without traffic while nothing is in flight before the endpoint
    /// releases it (RFC 8323 section 5.5) and closes it (default 5 minutes); <see cref="Timeout.InfiniteTimeSpan"/> keeps it open.
    /// </summary>
    public TimeSpan IdleTimeout { get; set; } = TimeSpan.FromMinutes(5);

    /// <summary>
    /// The largest message we accept, in bytes including the frame header (default 65536): announced
    /// in our CSM's Max-Message-Size option (RFC 8323 section 5.3.1) and enforced on every frame we read,
    /// before anything is allocated for it. At least 1152 (the size every peer may send before our CSM).
    /// </summary>
    public int MaxMessageSize { get; set; } = 64 * 1024;

    /// <summary>
    /// How many requests received on one connection may be unanswered at once (default 128); the next
    /// one is answered with 5.03 Service Unavailable at once instead of reaching the handler.
    /// </summary>
    public int MaxRequestsInFlight { get; set; } = 128;

    /// <summary>
    /// How long a new connection waits for the peer's CSM, which must be its first message (default 10
    /// seconds); without one it is aborted with 7.05 (RFC 8323 section 5.3).
    /// </summary>
    public TimeSpan CsmTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// How long a write may wait for a peer that stops reading (default 30 seconds) before the
    /// connection is aborted; until then the writes wait, they do not buffer without bound.
    /// </summary>
    public TimeSpan SendTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>How long a client waits to open a connection (default 10 seconds) before its requests fail.</summary>
    public TimeSpan ConnectTimeout { get; set; } = TimeSpan.FromSeconds(10);

    internal void Validate()
    {
        if (MaxConnections < 1)
        {
            throw new ArgumentException("MaxConnections must be at least 1.", nameof(MaxConnections));
        }

        if (MaxConnectionsPerAddress < 1)
        {
            throw new ArgumentException("MaxConnectionsPerAddress must be at least 1.", nameof(MaxConnectionsPerAddress));
        }

        if (MaxMessageSize < BaseMaxMessageSize)
        {
            throw new ArgumentException($"MaxMessageSize must be at least {BaseMaxMessageSize} bytes (RFC 8323 section 5.3.1).", nameof(MaxMessageSize));
        }

        if (MaxRequestsInFlight < 1)
        {
            throw new ArgumentException("MaxRequestsInFlight must be at least 1.", nameof(MaxRequestsInFlight));
        }

        CheckTimeout(IdleTimeout, nameof(IdleTimeout), allowInfinite: true);
        CheckTimeout(CsmTimeout, nameof(CsmTimeout), allowInfinite: false);
        CheckTimeout(SendTimeout, nameof(SendTimeout), allowInfinite: false);
        CheckTimeout(ConnectTimeout, nameof(ConnectTimeout), allowInfinite: false);
    }

    private static void CheckTimeout(TimeSpan value, string name, bool allowInfinite)
    {
        if (value <= TimeSpan.Zero && !(allowInfinite && value == Timeout.InfiniteTimeSpan))
        {
            throw new ArgumentException($"{name} must be positive{(allowInfinite ? " or infinite" : string.Empty)}.", name);
        }
    }
}
