namespace CoapNet.Channels;

/// <summary>
/// An anti-replay window over the sequence numbers of one sender: the sliding window of RFC 4303 section 3.4.3, which DTLS
/// uses for the records of an epoch (RFC 6347 section 4.1.2.6) and OSCORE for the requests of a Recipient Context
/// (RFC 8613 section 7.4). It holds the highest number accepted and a bitmap of the <see cref="Size"/> numbers below it. A
/// number is fresh when it is above the highest, or inside the window and not accepted yet; one older than the window is
/// refused, as a replay may be.
/// </summary>
/// <remarks>Not thread-safe: its owner (a DTLS record layer, an OSCORE context) uses it under a lock of its own.</remarks>
public sealed class CoapReplayWindow
{
    private long _highest;
    private ulong _seen;

    /// <summary>
    /// A window of <paramref name="size"/> numbers that counts every number up to and including <paramref name="highest"/>
    /// as seen: -1 for a sender not heard from yet; a higher one to accept only what comes after it (a DTLS epoch whose
    /// earlier records were read in a handshake, an OSCORE window set from a request that echoed a fresh value, RFC 8613
    /// Appendix B.1.2).
    /// </summary>
    /// <param name="size">How many numbers below the highest the window remembers: 1 to 64 (RFC 8613 and DTLS use 32 or 64).</param>
    /// <param name="highest">The highest number counted as seen, or -1 for none.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="size"/> is not 1 to 64, or <paramref name="highest"/> is below -1.</exception>
    public CoapReplayWindow(int size, long highest = -1)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(size, 1);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(size, 64);
        ArgumentOutOfRangeException.ThrowIfLessThan(highest, -1);
        Size = size;
        _highest = highest;

        // Every number at or below the start counts as seen; bits for numbers below 0 are never asked for.
        _seen = ulong.MaxValue;
    }

    /// <summary>How many numbers below <see cref="Highest"/> the window remembers.</summary>
    public int Size { get; }

    /// <summary>The highest number accepted (or counted as seen from the start); -1 for none.</summary>
    public long Highest => _highest;

    /// <summary>True when <paramref name="sequence"/> is new: above <see cref="Highest"/>, or inside the window and not accepted yet.</summary>
    /// <param name="sequence">A sequence number, 0 or more.</param>
    /// <returns>False for a number accepted before or older than the window.</returns>
    public bool IsFresh(long sequence)
    {
        if (sequence > _highest)
        {
            return true;
        }

        long behind = _highest - sequence;
        return behind < Size && (_seen & (1UL << (int)behind)) == 0;
    }

    /// <summary>
    /// Records <paramref name="sequence"/> as accepted: call once its message has been authenticated, after
    /// <see cref="IsFresh"/> said true, so a forged number never moves the window.
    /// </summary>
    /// <param name="sequence">An authenticated, fresh sequence number.</param>
    /// <returns>True when it is the newest yet (RFC 9146 section 6 moves a DTLS peer's address only then).</returns>
    public bool Accept(long sequence)
    {
        if (sequence > _highest)
        {
            long shift = sequence - _highest;
            _seen = shift >= 64 ? 1UL : (_seen << (int)shift) | 1UL;
            _highest = sequence;
            return true;
        }

        long behind = _highest - sequence;
        if (behind < Size)
        {
            _seen |= 1UL << (int)behind;
        }

        return false;
    }
}
