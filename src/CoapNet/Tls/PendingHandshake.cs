using System.Net;
using CoapNet.Transports;

namespace CoapNet.Tls;

/// <summary>
/// The place one connection holds among a TLS listener's <see cref="TlsServerOptions.MaxPendingHandshakes"/>, from its
/// accept until the server takes it up: counted against its address, and ranked for eviction by what its peer has
/// said. A TLS client speaks first (its ClientHello, RFC 8446 section 4.1.2), so a connection that never sent a byte is
/// evicted before any that did, the one open longest first; one that spoke only once it has been silent for a second.
/// </summary>
internal sealed class PendingHandshake : IAdmissionEntry, IDisposable
{
    private readonly long _acceptedAt;
    private readonly long _stalledAfterTicks;
    private readonly TimeProvider _time;
    private readonly CancellationTokenSource _evicted = new();
    private long _lastReceived;
    private volatile bool _spoke;
    private volatile bool _completed;

    public PendingHandshake(IPEndPoint remote, TimeProvider time)
    {
        Remote = remote;
        Group = AddressGroup.Of(remote.Address);
        _time = time;
        _acceptedAt = time.GetTimestamp();
        _stalledAfterTicks = time.TimestampFrequency;
        OnReceived = () =>
        {
            Volatile.Write(ref _lastReceived, _time.GetTimestamp());
            _spoke = true;
        };
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

    /// <inheritdoc/>
    public long EvictionOrder(long now)
    {
        if (_completed)
        {
            return long.MaxValue;
        }

        if (!_spoke)
        {
            // Never spoke: ahead of every connection that did, the one open longest first.
            return (long.MinValue / 2) + _acceptedAt;
        }

        long received = Volatile.Read(ref _lastReceived);
        return now - received >= _stalledAfterTicks ? received : long.MaxValue;
    }

    /// <summary>The handshake completed: the connection waits to be taken up and is not evicted any more.</summary>
    public void Complete() => _completed = true;

    /// <summary>Ends the handshake for a newcomer.</summary>
    public void Evict() => _evicted.Cancel();

    /// <inheritdoc/>
    public void Dispose() => _evicted.Dispose();
}
