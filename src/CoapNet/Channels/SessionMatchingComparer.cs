namespace CoapNet.Channels;

/// <summary>
/// Peers as a <see cref="CoapSessionMatching"/> policy other than <see cref="CoapSessionMatching.Strict"/> matches them:
/// equal as <see cref="CoapPeer"/>s are, or both secured with the same scheme, host name and identity (and, for
/// <see cref="CoapSessionMatching.Relaxed"/>, endpoint). Strict has no comparer (<see cref="For"/> is null): its tables
/// keep the default equality, so the default path costs what it always did.
/// </summary>
internal sealed class SessionMatchingComparer : IEqualityComparer<CoapPeer>
{
    private static readonly SessionMatchingComparer RelaxedComparer = new(sameAddress: true);
    private static readonly SessionMatchingComparer PrincipalComparer = new(sameAddress: false);

    private readonly bool _sameAddress;

    private SessionMatchingComparer(bool sameAddress) => _sameAddress = sameAddress;

    /// <summary>The comparer of <paramref name="matching"/>; null for <see cref="CoapSessionMatching.Strict"/>, whose tables use <see cref="CoapPeer"/>'s own equality.</summary>
    public static SessionMatchingComparer? For(CoapSessionMatching matching) => matching switch
    {
        CoapSessionMatching.Relaxed => RelaxedComparer,
        CoapSessionMatching.Principal => PrincipalComparer,
        _ => null,
    };

    /// <inheritdoc/>
    public bool Equals(CoapPeer? x, CoapPeer? y)
    {
        if (x is null || y is null)
        {
            return ReferenceEquals(x, y);
        }

        if (x.Equals(y))
        {
            return true;
        }

        return x.SecurityContext is { } a && y.SecurityContext is { } b
            && string.Equals(x.Scheme, y.Scheme, StringComparison.Ordinal)
            && string.Equals(x.HostName, y.HostName, StringComparison.OrdinalIgnoreCase)
            && (!_sameAddress || x.EndPoint.Equals(y.EndPoint))
            && a.Identity.Equals(b.Identity);
    }

    /// <inheritdoc/>
    /// <remarks>
    /// A secured peer hashes by its scheme and identity only: peers this comparer finds equal must hash alike, and one
    /// session is one peer wherever its Connection ID has moved it (<see cref="CoapPeer.Equals(CoapPeer?)"/>).
    /// </remarks>
    public int GetHashCode(CoapPeer peer)
        => peer.SecurityContext is { } context
            ? HashCode.Combine(StringComparer.Ordinal.GetHashCode(peer.Scheme), context.Identity)
            : peer.GetHashCode();
}

/// <summary>A key made of a peer and something of its own (a Message ID, a token), for <see cref="PeerScopedKeyComparer{TKey}"/>.</summary>
internal interface IPeerScopedKey
{
    /// <summary>The peer.</summary>
    CoapPeer Peer { get; }

    /// <summary>The rest of the key: equal keys have equal rests.</summary>
    (ulong Value, int Length) Local { get; }
}

/// <summary>Keys equal when their rests are, and their peers are by <paramref name="peers"/>.</summary>
/// <typeparam name="TKey">The key.</typeparam>
internal sealed class PeerScopedKeyComparer<TKey>(IEqualityComparer<CoapPeer> peers) : IEqualityComparer<TKey>
    where TKey : struct, IPeerScopedKey
{
    /// <inheritdoc/>
    public bool Equals(TKey x, TKey y) => x.Local == y.Local && peers.Equals(x.Peer, y.Peer);

    /// <inheritdoc/>
    public int GetHashCode(TKey key) => HashCode.Combine(peers.GetHashCode(key.Peer), key.Local);
}
