namespace CoapNet.RateLimiting;

/// <summary>
/// How fast one device may send requests to a server (<see cref="CoapRateLimitEndpointOptionsExtensions.UseIdentityRateLimit"/>):
/// a token bucket per identity, so a device that misbehaves (a firmware loop, a stolen key) costs the server its own
/// answers and not the fleet's.
/// </summary>
/// <remarks>
/// A device is the identity its secure transport authenticated (<see cref="Channels.CoapPeer.Identity"/>: the same across
/// reconnections and address changes), or for an unsecured peer its source (an IPv4 address, an IPv6 /64), so every client
/// behind one address shares a bucket.
/// </remarks>
public sealed class CoapIdentityRateLimitOptions
{
    /// <summary>Requests a device may send per second, on average (default 1: a device reporting once a minute has room to spare).</summary>
    public double RequestsPerSecond { get; set; } = 1;

    /// <summary>Requests a device may send at once after a quiet spell (default 10): a report, its retransmissions and a few block-wise blocks.</summary>
    public int Burst { get; set; } = 10;

    /// <summary>
    /// How many devices the table tracks at most (default 200,000, above <c>DtlsOptions.MaxSessions</c>). A device whose
    /// bucket has refilled is forgotten (it would start full anyway), so a fleet whose devices sleep between reports holds
    /// only those that spoke within the last <see cref="Burst"/> / <see cref="RequestsPerSecond"/> seconds; at the bound, a
    /// device the table has no room for is refused as one past its rate, until a bucket refills.
    /// </summary>
    public int MaxIdentities { get; set; } = 200_000;

    /// <summary>Checks the settings.</summary>
    /// <exception cref="ArgumentException">A setting is out of range; the message names it.</exception>
    internal void Validate()
    {
        if (!(RequestsPerSecond > 0) || double.IsInfinity(RequestsPerSecond))
        {
            throw new ArgumentException("RequestsPerSecond must be positive and finite.", nameof(RequestsPerSecond));
        }

        if (Burst < 1 || MaxIdentities < 1)
        {
            throw new ArgumentException("Burst and MaxIdentities must be at least 1.", Burst < 1 ? nameof(Burst) : nameof(MaxIdentities));
        }
    }
}
