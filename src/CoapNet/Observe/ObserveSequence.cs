namespace CoapNet.Observe;

/// <summary>The 24-bit Observe sequence and its freshness rule (RFC 7641 sections 3.4 and 4.4).</summary>
internal static class ObserveSequence
{
    /// <summary>The values wrap at 2^24.</summary>
    public const uint Modulus = 1 << 24;

    /// <summary>Half the space: a later value within it counts as newer (RFC 7641 section 3.4).</summary>
    private const uint Half = 1 << 23;

    /// <summary>The value after <paramref name="value"/>, wrapping at 2^24 (section 4.4).</summary>
    public static uint Next(uint value) => (value + 1) & (Modulus - 1);

    /// <summary>
    /// RFC 7641 section 3.4: a notification (V2, T2) is newer than the last one (V1, T1) when
    /// V1 &lt; V2 and V2 - V1 &lt; 2^23, or V1 &gt; V2 and V1 - V2 &gt; 2^23, or T2 &gt; T1 + 128 s.
    /// </summary>
    public static bool IsNewer(uint v1, long t1, uint v2, long t2, long ticks128Seconds)
        => (v1 < v2 && v2 - v1 < Half) || (v1 > v2 && v1 - v2 > Half) || t2 > t1 + ticks128Seconds;
}
