using CoapNet.Transports;

namespace CoapNet.Dtls.Sessions;

/// <summary>
/// The place a server's handshake holds among <see cref="DtlsOptions.MaxConcurrentHandshakes"/>: counted against its
/// source, watched for a stall (<see cref="DtlsServerOptions.HandshakeStallTimeout"/>, on the engine's clock), and
/// ranked for eviction by the last time its peer moved it forward.
/// </summary>
internal sealed class HandshakeSlot : IAdmissionEntry, IDisposable
{
    /// <summary>
    /// RFC 6347 section 4.2.4.1: the initial retransmission timer. A peer that has neither answered our flight nor
    /// retransmitted its own within it is late; until then a handshake is not taken from a peer that may be answering.
    /// </summary>
    private static readonly TimeSpan StalledAfter = TimeSpan.FromSeconds(1);

    private readonly TimeProvider _time;
    private readonly TimeSpan _stallTimeout;
    private readonly Action<HandshakeSlot> _onStalled;
    private readonly long _stalledAfterTicks;
    private ITimer? _timer;

    /// <param name="session">The handshake's session.</param>
    /// <param name="time">The engine's clock.</param>
    /// <param name="stallTimeout">How long the peer may leave it without progress.</param>
    /// <param name="onStalled">Called (on the timer) once it stalled for that long.</param>
    public HandshakeSlot(DtlsSession session, TimeProvider time, TimeSpan stallTimeout, Action<HandshakeSlot> onStalled)
    {
        Session = session;
        Group = AddressGroup.Of(session.Remote.Address);
        _time = time;
        _stallTimeout = stallTimeout;
        _onStalled = onStalled;
        _stalledAfterTicks = (long)(StalledAfter.TotalSeconds * time.TimestampFrequency);
    }

    /// <summary>The handshake's session.</summary>
    public DtlsSession Session { get; }

    /// <inheritdoc/>
    public AddressGroup Group { get; }

    /// <summary>The oldest progress first, and only once it is a second old (see <see cref="StalledAfter"/>).</summary>
    public long EvictionOrder(long now)
    {
        long progress = Session.LastProgress;
        return Session.IsHandshaking && now - progress >= _stalledAfterTicks ? progress : long.MaxValue;
    }

    /// <summary>Starts watching for a stall; the timer checks the session's progress when it fires and waits for the rest.</summary>
    public void Watch() => _timer = _time.CreateTimer(static state => ((HandshakeSlot)state!).Check(), this, _stallTimeout, Timeout.InfiniteTimeSpan);

    /// <inheritdoc/>
    public void Dispose() => _timer?.Dispose();

    private void Check()
    {
        if (!Session.IsHandshaking)
        {
            return;
        }

        TimeSpan quiet = _time.GetElapsedTime(Session.LastProgress);
        if (quiet >= _stallTimeout)
        {
            _onStalled(this);
        }
        else
        {
            _timer?.Change(_stallTimeout - quiet, Timeout.InfiniteTimeSpan);
        }
    }
}
