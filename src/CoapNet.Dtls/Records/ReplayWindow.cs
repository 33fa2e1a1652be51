namespace CoapNet.Dtls.Records;

/// <summary>
/// The anti-replay window of one epoch (RFC 6347 section 4.1.2.6): the highest sequence number authenticated so far
/// and a 64-bit map of the ones just below it. A record older than the window, or seen already, is discarded.
/// </summary>
/// <remarks>Used under the session's receive lock only.</remarks>
internal struct ReplayWindow
{
    private const int Size = 64;

    private long _highest;
    private ulong _seen;

    /// <summary>A window that has seen every sequence number up to and including <paramref name="highest"/>.</summary>
    public ReplayWindow(long highest)
    {
        _highest = highest;
        _seen = ulong.MaxValue;
    }

    /// <summary>True when <paramref name="sequence"/> is new: above the window's top, or inside it and not seen yet.</summary>
    public readonly bool IsFresh(long sequence)
    {
        if (sequence > _highest)
        {
            return true;
        }

        long behind = _highest - sequence;
        return behind < Size && (_seen & (1UL << (int)behind)) == 0;
    }

    /// <summary>Records an authenticated <paramref name="sequence"/>; true when it is the newest yet (RFC 9146 section 6 moves the peer only then).</summary>
    public bool Accept(long sequence)
    {
        if (sequence > _highest)
        {
            long shift = sequence - _highest;
            _seen = shift >= Size ? 1UL : (_seen << (int)shift) | 1UL;
            _highest = sequence;
            return true;
        }

        _seen |= 1UL << (int)(_highest - sequence);
        return false;
    }
}
