using System.Diagnostics.Metrics;
using CoapNet.Channels;
using CoapNet.Messaging.Retransmission;

namespace CoapNet.Messaging.Datagram;

/// <summary>
/// The per-peer message state of one datagram endpoint, bounded: idle peers expire after EXCHANGE_LIFETIME (after
/// which a fresh random Message ID start is safe, RFC 7252 section 4.4), and when the table is
/// full the least recently used idle peer makes room. Not thread-safe: the message layer's lock guards it.
/// </summary>
internal sealed class PeerMessageStateTable
{
    private readonly Dictionary<CoapPeer, PeerMessageState> _peers;
    private readonly int _capacity;
    private readonly long _idleLifetimeTicks;
    private readonly Random _random;
    private readonly CoapRetransmissionPolicy _policy;
    private readonly CoapTransmissionParameters _parameters;
    private readonly TimeProvider _time;

    /// <param name="capacity">How many peers it keeps.</param>
    /// <param name="idleLifetimeTicks">How long an idle peer is kept.</param>
    /// <param name="random">Draws each peer's first Message ID.</param>
    /// <param name="policy">Makes each peer's retransmission state.</param>
    /// <param name="parameters">The transmission parameters.</param>
    /// <param name="time">The clock.</param>
    /// <param name="peers">
    /// Which peers share one state (<see cref="SessionMatchingComparer"/>): the sessions whose ACKs match each other's
    /// messages draw their Message IDs from one sequence, so no two of their messages in flight have the same key. Null
    /// for one state per session.
    /// </param>
    public PeerMessageStateTable(int capacity, long idleLifetimeTicks, Random random, CoapRetransmissionPolicy policy, CoapTransmissionParameters parameters, TimeProvider time, SessionMatchingComparer? peers)
    {
        _peers = peers is null ? [] : new(peers);
        _time = time;
        _capacity = capacity;
        _idleLifetimeTicks = idleLifetimeTicks;
        _random = random;
        _policy = policy;
        _parameters = parameters;
    }

    public int Count => _peers.Count;

    public PeerMessageState GetOrCreate(CoapPeer peer, long now)
    {
        if (_peers.TryGetValue(peer, out PeerMessageState? state))
        {
            state.LastUsed = now;
            return state;
        }

        if (_peers.Count >= _capacity)
        {
            Sweep(now);
            if (_peers.Count >= _capacity)
            {
                EvictLeastRecentlyUsedIdle();
            }
        }

        state = new PeerMessageState(peer, (ushort)_random.Next(0, 65536), now, _policy.CreatePeerState(peer, _parameters, _time));
        _peers[peer] = state;
        return state;
    }

    /// <summary>Drops channels idle for longer than their lifetime.</summary>
    public void Sweep(long now)
    {
        List<CoapPeer>? expired = null;
        foreach (KeyValuePair<CoapPeer, PeerMessageState> pair in _peers)
        {
            if (pair.Value.IsIdle && now - pair.Value.LastUsed > _idleLifetimeTicks)
            {
                (expired ??= []).Add(pair.Key);
            }
        }

        if (expired is not null)
        {
            foreach (CoapPeer key in expired)
            {
                _peers.Remove(key);
            }
        }
    }

    /// <summary>One measurement of the RTO estimate per peer whose policy keeps one, for the coap.peer.rto gauge.</summary>
    public void ReportTimeouts(List<Measurement<double>> measurements)
    {
        foreach (PeerMessageState state in _peers.Values)
        {
            if (state.Retransmission.RetransmissionTimeout is TimeSpan rto)
            {
                CoapPeer peer = state.Peer;
                measurements.Add(new Measurement<double>(
                    rto.TotalSeconds,
                    new KeyValuePair<string, object?>("network.peer.address", peer.EndPoint.Address.ToString()),
                    new KeyValuePair<string, object?>("network.peer.port", peer.EndPoint.Port),
                    new KeyValuePair<string, object?>("url.scheme", peer.Scheme)));
            }
        }
    }

    private void EvictLeastRecentlyUsedIdle()
    {
        PeerMessageState? oldest = null;
        foreach (PeerMessageState candidate in _peers.Values)
        {
            if (candidate.IsIdle && (oldest is null || candidate.LastUsed < oldest.LastUsed))
            {
                oldest = candidate;
            }
        }

        if (oldest is not null)
        {
            _peers.Remove(oldest.Peer);
        }
    }
}
