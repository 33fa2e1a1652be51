using CoapNet.Transports;

namespace CoapNet.Channels;

/// <summary>
/// Who a peer is across its sessions and addresses, for what is bounded per device rather than per session: the identity
/// its secure transport authenticated (<see cref="CoapPeer.Identity"/>, equal across sessions), or for an unsecured peer
/// its source (<see cref="AddressGroup"/>: an IPv4 address or an IPv6 /64), which is all that is known of it.
/// </summary>
internal readonly struct PeerIdentityKey : IEquatable<PeerIdentityKey>
{
    private readonly CoapPeerIdentity? _identity;
    private readonly AddressGroup _source;

    private PeerIdentityKey(CoapPeerIdentity? identity, AddressGroup source)
    {
        _identity = identity;
        _source = source;
    }

    /// <summary>The key of <paramref name="peer"/>: its identity, or its source when it has none.</summary>
    public static PeerIdentityKey Of(CoapPeer peer)
        => peer.Identity is { } identity ? new PeerIdentityKey(identity, default) : new PeerIdentityKey(null, AddressGroup.Of(peer.EndPoint.Address));

    /// <inheritdoc/>
    public bool Equals(PeerIdentityKey other)
        => _identity is null ? other._identity is null && _source == other._source : _identity.Equals(other._identity);

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is PeerIdentityKey other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => _identity?.GetHashCode() ?? _source.GetHashCode();
}
