namespace CoapNet.Oscore;

/// <summary>
/// Keeps a context's Sender Sequence Number safe across restarts (RFC 8613 section 7.5.1): before the sender uses a
/// number it reserves a range ahead of it, so a restart resumes after the range and never reuses a nonce, whatever was
/// sent since the reservation.
/// </summary>
public interface IOscoreSequenceStore
{
    /// <summary>The first number the sender may use after a start: the end of the last range reserved, 0 at first.</summary>
    /// <returns>The number to start from.</returns>
    long Load();

    /// <summary>Records that numbers below <paramref name="limit"/> may be in use, durably, before any of them is.</summary>
    /// <param name="limit">The end (exclusive) of the range reserved.</param>
    void Reserve(long limit);
}
