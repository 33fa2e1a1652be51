namespace CoapNet.Oscore.Protection;

/// <summary>
/// A Recipient Context's replay window (RFC 8613 section 7.4): the highest Partial IV accepted and a bitmap of the 32
/// below it, as the sliding window of RFC 4303 section 3.4.3. A number is fresh when it is above the highest or in the
/// window and not yet seen; below the window it is refused, as a replay may be.
/// </summary>
/// <remarks>Not thread-safe: its context calls it under its own lock.</remarks>
internal sealed class ReplayWindow
{
    public const int Size = 32;

    private long _highest = -1;
    private uint _seen;

    /// <summary>True when <paramref name="number"/> was not accepted before and is not below the window.</summary>
    public bool IsFresh(long number)
    {
        if (number > _highest)
        {
            return true;
        }

        long offset = _highest - number;
        return offset < Size && (_seen & (1u << (int)offset)) == 0;
    }

    /// <summary>Records <paramref name="number"/> as accepted; call after <see cref="IsFresh"/> said true and the message verified.</summary>
    public void Accept(long number)
    {
        if (number > _highest)
        {
            long shift = number - _highest;
            _seen = shift >= Size ? 0 : _seen << (int)shift;
            _seen |= 1;
            _highest = number;
            return;
        }

        _seen |= 1u << (int)(_highest - number);
    }
}
