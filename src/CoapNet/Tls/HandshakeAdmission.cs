using System.Net;
using CoapNet.Transports;

namespace CoapNet.Tls;

/// <summary>
/// Who may run a TLS handshake on a listener, and in what order. A connection first waits apart until its peer speaks
/// (a TLS client speaks first), so connections held open and silent never take a handshake place from one that
/// speaks; then it takes one of <see cref="TlsServerOptions.MaxPendingHandshakes"/> (within
/// <see cref="TlsServerOptions.MaxPendingHandshakesPerAddress"/> of its address) in the order it spoke, waiting while
/// every place is held by a handshake that moves, and taking the place of one whose peer has been silent for a second.
/// </summary>
/// <remarks>
/// Those waiting are bounded too, <see cref="WaitingFactor"/> times the handshake bounds: past them the one that never
/// spoke and has waited longest (or else the one that has waited longest) is closed for the newcomer. Every wait is
/// bounded by the handshake timeout, which runs from the accept. A timer on the listener's clock looks for stalled
/// handshakes while anyone waits for a place.
/// </remarks>
internal sealed class HandshakeAdmission : IDisposable
{
    /// <summary>How many times the handshake bounds may wait for their peer to speak or for a place (8: 1,024 by default).</summary>
    public const int WaitingFactor = 8;

    private static readonly TimeSpan PumpPeriod = TimeSpan.FromMilliseconds(250);

    private readonly object _gate = new();
    private readonly AdmissionTable<PendingHandshake> _waiting;
    private readonly AdmissionTable<PendingHandshake> _handshaking;
    private readonly LinkedList<(PendingHandshake Place, TaskCompletionSource Granted)> _queue = new();
    private readonly TimeProvider _time;
    private readonly Action<PendingHandshake, IPEndPoint> _onEvicted;
    private readonly ITimer _pump;

    /// <param name="options">The handshake bounds.</param>
    /// <param name="time">The listener's clock.</param>
    /// <param name="onEvicted">Told (outside the locks) of a handshake ended for a newcomer, after it was told to end.</param>
    public HandshakeAdmission(TlsServerOptions options, TimeProvider time, Action<PendingHandshake, IPEndPoint> onEvicted)
    {
        _time = time;
        _onEvicted = onEvicted;
        _handshaking = new AdmissionTable<PendingHandshake>(options.MaxPendingHandshakes, options.MaxPendingHandshakesPerAddress);
        _waiting = new AdmissionTable<PendingHandshake>(WaitingFactor * options.MaxPendingHandshakes, WaitingFactor * options.MaxPendingHandshakesPerAddress);
        _pump = time.CreateTimer(static state => ((HandshakeAdmission)state!).Pump(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
    }

    /// <summary>The most that may wait in all, and from one address.</summary>
    public (int Capacity, int PerSource) WaitingBounds => (_waiting.Capacity, _waiting.PerSource);

    /// <summary>
    /// Admits a connection just accepted among those waiting; <paramref name="evicted"/> is the one closed for it, if
    /// any (already told). Refused when every waiting place of its scope is held by one that spoke and waits for a
    /// handshake place, none of which is evicted for a connection that has not spoken.
    /// </summary>
    public AdmissionRefusal TryAdmit(PendingHandshake place, out PendingHandshake? evicted)
    {
        AdmissionRefusal refusal = _waiting.TryAdmit(place, _time.GetTimestamp(), out evicted);
        if (evicted is not null)
        {
            evicted.Evict();
        }

        return refusal;
    }

    /// <summary>Waits for a handshake place, in the order of asking; canceled with <paramref name="cancellationToken"/>.</summary>
    public async Task EnterHandshakeAsync(PendingHandshake place, CancellationToken cancellationToken)
    {
        TaskCompletionSource granted = new(TaskCreationOptions.RunContinuationsAsynchronously);
        LinkedListNode<(PendingHandshake, TaskCompletionSource)> node;
        lock (_gate)
        {
            node = _queue.AddLast((place, granted));
        }

        Pump();
        using CancellationTokenRegistration registration = cancellationToken.Register(() =>
        {
            lock (_gate)
            {
                if (node.List is not null)
                {
                    _queue.Remove(node);
                }
            }

            granted.TrySetCanceled(cancellationToken);
        });
        await granted.Task.ConfigureAwait(false);
    }

    /// <summary>Frees whatever place <paramref name="place"/> held (a no-op for one evicted) and lets the next one in.</summary>
    public void Leave(PendingHandshake place)
    {
        _waiting.Remove(place);
        bool freed = _handshaking.Remove(place);
        if (freed)
        {
            Pump();
        }
    }

    /// <inheritdoc/>
    public void Dispose() => _pump.Dispose();

    /// <summary>
    /// Grants handshake places to those waiting, first come first served: at a bound the handshake stalled longest
    /// gives its place up; a waiter whose address is at its own bound lets the next one pass.
    /// </summary>
    private void Pump()
    {
        List<(TaskCompletionSource Granted, PendingHandshake For, PendingHandshake? Evicted)>? granted = null;
        lock (_gate)
        {
            long now = _time.GetTimestamp();
            for (LinkedListNode<(PendingHandshake Place, TaskCompletionSource Granted)>? node = _queue.First; node is not null;)
            {
                LinkedListNode<(PendingHandshake Place, TaskCompletionSource Granted)>? next = node.Next;
                AdmissionRefusal refusal = _handshaking.TryAdmit(node.Value.Place, now, out PendingHandshake? evicted);
                if (refusal == AdmissionRefusal.None)
                {
                    node.Value.Place.EnterHandshake();
                    _waiting.Remove(node.Value.Place);
                    _queue.Remove(node);
                    (granted ??= []).Add((node.Value.Granted, node.Value.Place, evicted));
                }
                else if (refusal == AdmissionRefusal.Full)
                {
                    break;
                }

                node = next;
            }

            _pump.Change(_queue.Count > 0 ? PumpPeriod : Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        }

        if (granted is null)
        {
            return;
        }

        foreach ((TaskCompletionSource grant, PendingHandshake newcomer, PendingHandshake? evicted) in granted)
        {
            if (evicted is not null)
            {
                evicted.Evict();
                _onEvicted(evicted, newcomer.Remote);
            }

            grant.TrySetResult();
        }
    }
}
