namespace CoapNet.Observe;

/// <summary>
/// The 24-bit Observe sequence and its freshness rule (RFC 7641 sections 3.4 and 4.4). Public so that a client of its
/// own (a group observation, CoapNet.Multicast) orders notifications by the rule <see cref="Client.CoapClient"/> uses.
/// </summary>
public static class ObserveSequence
{
    /// <summary>The values wrap at 2^24.</summary>
    internal const uint Modulus = 1 << 24;

    /// <summary>Half the space: a later value within it counts as newer (RFC 7641 section 3.4).</summary>
    private const uint Half = 1 << 23;

    /// <summary>128 seconds: a notification that arrives this long after the last one is newer whatever its value (RFC 7641 section 3.4).</summary>
    private static readonly TimeSpan Rollover = TimeSpan.FromSeconds(128);

    /// <summary>
    /// RFC 7641 section 3.4: whether a notification with Observe value <paramref name="value"/>, arriving
    /// <paramref name="sincePrevious"/> after the last one a client accepted (value <paramref name="previous"/>), is newer
    /// than it and so the current state; an older one arriving late is dropped.
    /// </summary>
    /// <param name="previous">The Observe value of the last notification accepted.</param>
    /// <param name="value">The Observe value of the notification that arrived.</param>
    /// <param name="sincePrevious">How long after the last one accepted it arrived.</param>
    /// <returns>True when it is newer.</returns>
    public static bool IsNewer(uint previous, uint value, TimeSpan sincePrevious)
        => IsNewerValue(previous, value) || sincePrevious > Rollover;

    /// <summary>The value after <paramref name="value"/>, wrapping at 2^24 (section 4.4).</summary>
    internal static uint Next(uint value) => (value + 1) & (Modulus - 1);

    /// <summary>
    /// RFC 7641 section 3.4: a notification (V2, T2) is newer than the last one (V1, T1) when
    /// V1 &lt; V2 and V2 - V1 &lt; 2^23, or V1 &gt; V2 and V1 - V2 &gt; 2^23, or T2 &gt; T1 + 128 s; times as timestamps.
    /// </summary>
    internal static bool IsNewer(uint v1, long t1, uint v2, long t2, long ticks128Seconds)
        => IsNewerValue(v1, v2) || t2 > t1 + ticks128Seconds;

    private static bool IsNewerValue(uint v1, uint v2) => (v1 < v2 && v2 - v1 < Half) || (v1 > v2 && v1 - v2 > Half);
}
