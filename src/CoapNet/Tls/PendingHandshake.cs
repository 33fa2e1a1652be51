using System.Net;
using CoapNet.Transports;

namespace CoapNet.Tls;

/// <summary>
/// One connection from its accept until the server takes it up after its TLS handshake: first among those waiting to
/// speak or for a handshake place, then among <see cref="TlsServerOptions.MaxPendingHandshakes"/>
/// (<see cref="HandshakeAdmission"/>), counted against its address and ranked for eviction by what its peer has said.
/// </summary>
internal sealed class PendingHandshake : IAdmissionEntry, IDisposable
{
    private readonly long _acceptedAt;
    private readonly long _stalledAfterTicks;
    private readonly TimeProvider _time;
    private readonly CancellationTokenSource _evicted = new();
    private long _lastReceived;
    private volatile bool _spoke;
    private volatile bool _handshaking;
    private volatile bool _completed;

    public PendingHandshake(IPEndPoint remote, TimeProvider time)
    {
        Remote = remote;
        Group = AddressGroup.Of(remote.Address);
        _time = time;
        _acceptedAt = time.GetTimestamp();
        _stalledAfterTicks = time.TimestampFrequency;
        OnReceived = MarkSpoke;
    }

    /// <summary>The peer.</summary>
    public IPEndPoint Remote { get; }

    /// <inheritdoc/>
    public AddressGroup Group { get; }

    /// <summary>Notes that the peer's bytes arrived (given to the handshake's stream).</summary>
    public Action OnReceived { get; }

    /// <summary>Canceled when the place is taken for a newcomer.</summary>
    public CancellationToken Evicted => _evicted.Token;

    /// <summary>True once evicted.</summary>
    public bool IsEvicted => _evicted.IsCancellationRequested;

    /// <summary>
    /// While it waits: one that never spoke first (the one open longest first; a TLS client speaks first, its
    /// ClientHello, RFC 8446 section 4.1.2), then one that spoke and waits for a handshake place. In a handshake: only
    /// once its peer has been silent for a second; never once handshaken.
    /// </summary>
    public long EvictionOrder(long now)
    {
        if (_completed)
        {
            return long.MaxValue;
        }

        if (!_handshaking)
        {
            return _spoke ? _acceptedAt : (long.MinValue / 2) + _acceptedAt;
        }

        long received = Volatile.Read(ref _lastReceived);
        return now - received >= _stalledAfterTicks ? received : long.MaxValue;
    }

    /// <summary>The peer's bytes arrived now.</summary>
    public void MarkSpoke()
    {
        Volatile.Write(ref _lastReceived, _time.GetTimestamp());
        _spoke = true;
    }

    /// <summary>It has a handshake place from now on.</summary>
    public void EnterHandshake() => _handshaking = true;

    /// <summary>The handshake completed: the connection waits to be taken up and is not evicted any more.</summary>
    public void Complete() => _completed = true;

    /// <summary>Ends the wait or the handshake for a newcomer.</summary>
    public void Evict()
    {
        try
        {
            _evicted.Cancel();
        }
        catch (ObjectDisposedException)
        {
            // It ended by itself between being chosen and being told: nothing left to end.
        }
    }

    /// <inheritdoc/>
    public void Dispose() => _evicted.Dispose();
}
