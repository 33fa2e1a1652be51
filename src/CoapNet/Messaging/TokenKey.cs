using CoapNet.Channels;

namespace CoapNet.Messaging;

/// <summary>Identifies a request by its peer and token (RFC 7252 section 5.3.2).</summary>
internal readonly record struct TokenKey(CoapPeer Peer, ulong Token, int Length) : IPeerScopedKey
{
    /// <inheritdoc/>
    (ulong Value, int Length) IPeerScopedKey.Local => (Token, Length);

    public static TokenKey From(CoapPeer peer, ReadOnlySpan<byte> token)
    {
        ulong value = 0;
        foreach (byte b in token)
        {
            value = (value << 8) | b;
        }

        return new TokenKey(peer, value, token.Length);
    }
}

