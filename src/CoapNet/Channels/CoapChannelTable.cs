using System.Net;

namespace CoapNet.Channels;

/// <summary>
/// The channels of one endpoint, bounded: idle channels expire after EXCHANGE_LIFETIME (after
/// which a fresh random Message ID start is safe, RFC 7252 section 4.4), and when the table is
/// full the least recently used idle channel makes room. Not thread-safe: the endpoint's lock guards it.
/// </summary>
internal sealed class CoapChannelTable
{
    private readonly Dictionary<IPEndPoint, CoapChannel> _channels = [];
    private readonly int _capacity;
    private readonly long _idleLifetimeTicks;
    private readonly Random _random;

    public CoapChannelTable(int capacity, long idleLifetimeTicks, Random random)
    {
        _capacity = capacity;
        _idleLifetimeTicks = idleLifetimeTicks;
        _random = random;
    }

    public int Count => _channels.Count;

    public CoapChannel GetOrCreate(IPEndPoint remote, long now)
    {
        if (_channels.TryGetValue(remote, out CoapChannel? channel))
        {
            channel.LastUsed = now;
            return channel;
        }

        if (_channels.Count >= _capacity)
        {
            Sweep(now);
            if (_channels.Count >= _capacity)
            {
                EvictLeastRecentlyUsedIdle();
            }
        }

        channel = new CoapChannel(remote, (ushort)_random.Next(0, 65536), now);
        _channels[remote] = channel;
        return channel;
    }

    /// <summary>Drops channels idle for longer than their lifetime.</summary>
    public void Sweep(long now)
    {
        List<IPEndPoint>? expired = null;
        foreach (KeyValuePair<IPEndPoint, CoapChannel> pair in _channels)
        {
            if (pair.Value.IsIdle && now - pair.Value.LastUsed > _idleLifetimeTicks)
            {
                (expired ??= []).Add(pair.Key);
            }
        }

        if (expired is not null)
        {
            foreach (IPEndPoint key in expired)
            {
                _channels.Remove(key);
            }
        }
    }

    private void EvictLeastRecentlyUsedIdle()
    {
        CoapChannel? oldest = null;
        foreach (CoapChannel channel in _channels.Values)
        {
            if (channel.IsIdle && (oldest is null || channel.LastUsed < oldest.LastUsed))
            {
                oldest = channel;
            }
        }

        if (oldest is not null)
        {
            _channels.Remove(oldest.Remote);
        }
    }
}
