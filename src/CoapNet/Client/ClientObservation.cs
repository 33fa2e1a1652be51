using System.Threading.Channels;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.Client;

/// <summary>
/// A client's observation of one resource (RFC 7641 section 3): the registration (a GET with
/// Observe=0), the notifications in arrival order (stale ones already dropped by the Observe stage),
/// re-registration with the same token when notifications stop for longer than Max-Age plus a margin
/// (section 3.3.1) or the path to the server is lost, and deregistration at the end (section 3.6:
/// the exchange is dropped, so a further notification gets RST, and a GET with Observe=1 is sent).
/// </summary>
/// <remarks>
/// <para>
/// Each registration first asks the client for its path to the server: over DTLS the session (RFC 7252 section 9.1:
/// the established one, or a new handshake when the last one ended), over UDP and TCP the peer itself; the connection
/// layer opens a lost TCP or TLS connection again by itself. A new registration is a new exchange, so the Observe
/// stage's sequence check starts again with its first notification (RFC 7641 section 3.4).
/// </para>
/// <para>
/// One policy for every transport when the path is lost (a connection closed, a DTLS session ended) after the server
/// accepted the observation: register again at once, on a new path. A registration that then loses its path too, or
/// fails otherwise (the handshake or the connection fails: the server is gone), ends the observation with that error.
/// A registration lost while it waited for its answer counts as the loss itself: the re-registration that finds a DTLS
/// session dead (its server restarted) goes once more, in a new session. Leaving after a loss, before a registration
/// on a new path was accepted, sends no deregistration: the server's registration went with the path, and nothing is
/// opened or handshaken just to say so.
/// </para>
/// <para>
/// Notifications wait for the reader in a small buffer that drops the oldest: only the latest state
/// matters (section 1.3), so a slow reader costs no memory. The last one (an error, or a response
/// without Observe) is never dropped: it is written last.
/// </para>
/// </remarks>
internal sealed class ClientObservation : IDisposable
{
    private const int Buffered = 16;
    private readonly ExchangeLayer _exchanges;
    private readonly CoapMessage _template;
    private readonly Func<CoapPeer, CancellationToken, ValueTask<CoapPeer>> _path;
    private readonly TimeProvider _time;
    private readonly TimeSpan _margin;
    private readonly Channel<CoapResponse> _channel = Channel.CreateBounded<CoapResponse>(
        new BoundedChannelOptions(Buffered) { FullMode = BoundedChannelFullMode.DropOldest, SingleReader = true });

    private readonly object _gate = new();

    // Orders the writes of the first response and the notifications to the channel; taken before _gate, never inside it.
    private readonly object _delivery = new();

    // The deregistration sent when the observation ended (null inside when none was): set once, by End.
    private readonly TaskCompletionSource<Task<CoapMessage>?> _deregistration = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private CancellationTokenSource? _current;
    private ITimer? _silence;
    private ReadOnlyMemory<byte> _token;
    private bool _firstDelivered;
    private CoapMessage? _early;
    private bool _accepted;
    private bool _ended;

    // The server, in the session of the last registration sent (over DTLS); guarded by _gate.
    private CoapPeer _peer;

    // The path of the accepted registration was lost and no registration on a new one has been accepted since.
    private bool _pathLost;

    /// <param name="exchanges">The exchange layer of the endpoint that speaks the peer's scheme.</param>
    /// <param name="request">The registration, Observe=0 set; copied for each registration.</param>
    /// <param name="peer">The server as addressed.</param>
    /// <param name="path">Finds the path for a registration: the peer in its DTLS session (made when there is none), or the peer itself.</param>
    /// <param name="time">The clock of the silence timer.</param>
    /// <param name="margin">How long past Max-Age silence means the observation may be lost.</param>
    public ClientObservation(ExchangeLayer exchanges, CoapMessage request, CoapPeer peer, Func<CoapPeer, CancellationToken, ValueTask<CoapPeer>> path, TimeProvider time, TimeSpan margin)
    {
        _exchanges = exchanges;
        _template = request;
        _peer = peer;
        _path = path;
        _time = time;
        _margin = margin;
    }

    /// <summary>The notifications, the registration's response first; completes after the last one, or with the failure.</summary>
    public ChannelReader<CoapResponse> Reader => _channel.Reader;

    /// <summary>True once the server accepted the registration (a response with Observe), until the observation ends.</summary>
    public bool IsActive
    {
        get
        {
            lock (_gate)
            {
                return _accepted && !_ended;
            }
        }
    }

    /// <summary>
    /// Completes when the observation has ended, with the GET carrying Observe=1 that ended it (its task completes with
    /// the server's answer), or with null when no deregistration was sent: the server ended the observation, it failed,
    /// or the server never accepted it.
    /// </summary>
    public Task<Task<CoapMessage>?> Deregistration => _deregistration.Task;

    /// <summary>The server the observation is with, in the session of its last registration.</summary>
    public CoapPeer Peer
    {
        get
        {
            lock (_gate)
            {
                return _peer;
            }
        }
    }

    /// <summary>Sends the registration.</summary>
    public void Start() => Register();

    /// <summary>Ends the observation: drops the exchange and deregisters with Observe=1 (RFC 7641 section 3.6). Idempotent.</summary>
    public void Dispose() => End(null, deregister: true);

    private void Register()
    {
        CancellationTokenSource cancel = new();
        CoapPeer peer;
        lock (_gate)
        {
            if (_ended)
            {
                cancel.Dispose();
                return;
            }

            _current?.Dispose();
            _current = cancel;
            _firstDelivered = false;
            _early = null;
            peer = _peer;
        }

        ValueTask<CoapPeer> path;
        try
        {
            path = _path(peer, cancel.Token);
        }
        catch (Exception e) when (e is ArgumentException or ObjectDisposedException)
        {
            End(e, deregister: false);
            return;
        }

        if (path.IsCompletedSuccessfully)
        {
            Send(path.Result, cancel);
            return;
        }

        // A handshake under way (coaps): the registration goes once the session is there.
        path.AsTask().ContinueWith(task => OnPath(task, cancel), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
    }

    private void OnPath(Task<CoapPeer> task, CancellationTokenSource cancel)
    {
        if (IsSuperseded(cancel))
        {
            return;
        }

        if (!task.IsCompletedSuccessfully)
        {
            // No path (the handshake failed: the server is gone, or refuses us): the observation ends with why.
            End(task.Exception?.InnerException ?? new OperationCanceledException(), deregister: false);
            return;
        }

        Send(task.Result, cancel);
    }

    private void Send(CoapPeer peer, CancellationTokenSource cancel)
    {
        CoapMessage request = CopyTemplate(_template, 0);
        lock (_gate)
        {
            if (!IsCurrent(cancel))
            {
                return;
            }

            _peer = peer;

            // RFC 7641 section 3.3.1: a re-registration uses the observation's token, so the server updates its entry.
            request.Token = _token;
        }

        Task<CoapMessage> first;
        try
        {
            first = _exchanges.SendForManyResponsesAsync(request, peer, m => OnLater(cancel, m), cancel.Token, e => OnLost(cancel, e));
        }
        catch (Exception e) when (e is ArgumentException or ObjectDisposedException)
        {
            End(e, deregister: false);
            return;
        }

        lock (_gate)
        {
            _token = request.Token;
        }

        first.ContinueWith(task => OnFirst(task, cancel), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
    }

    private bool IsSuperseded(CancellationTokenSource cancel)
    {
        lock (_gate)
        {
            return !IsCurrent(cancel);
        }
    }

    /// <summary>True while the registration of <paramref name="cancel"/> is the observation's live one. Call holding the gate.</summary>
    private bool IsCurrent(CancellationTokenSource cancel) => !_ended && ReferenceEquals(cancel, _current);

    private void OnFirst(Task<CoapMessage> task, CancellationTokenSource cancel)
    {
        if (!task.IsCompletedSuccessfully)
        {
            lock (_gate)
            {
                if (!IsCurrent(cancel))
                {
                    return;
                }

                _early = null;
            }

            Exception failure = task.Exception?.InnerException ?? new OperationCanceledException();
            if (TakeRetryAfterLoss(failure))
            {
                Reregister();
                return;
            }

            End(failure, deregister: false);
            return;
        }

        // The first response's task completes on a pool thread while the receive thread goes on to the next message: a
        // notification seen after _firstDelivered is set must not reach the channel before the first response does, so
        // marking it delivered and writing it (and an early notification after it) are one step (RFC 7641 section 3.4).
        bool ended;
        lock (_delivery)
        {
            CoapMessage? early;
            lock (_gate)
            {
                if (!IsCurrent(cancel))
                {
                    return;
                }

                _firstDelivered = true;
                early = _early;
                _early = null;
            }

            ended = Deliver(task.Result) || (early is not null && Deliver(early));
        }

        if (ended)
        {
            End(null, deregister: false);
        }
    }

    private void OnLater(CancellationTokenSource cancel, CoapMessage notification)
    {
        bool ended;
        lock (_delivery)
        {
            lock (_gate)
            {
                if (!IsCurrent(cancel))
                {
                    return;
                }

                if (!_firstDelivered)
                {
                    // A notification overtook the registration's response on its way to us: it follows it.
                    _early = notification;
                    return;
                }
            }

            ended = Deliver(notification);
        }

        if (ended)
        {
            End(null, deregister: false);
        }
    }

    /// <summary>The path to the server was lost after the registration (a connection closed, a DTLS session ended): register again.</summary>
    private void OnLost(CancellationTokenSource cancel, Exception reason)
    {
        lock (_gate)
        {
            if (!IsCurrent(cancel))
            {
                return;
            }

            _pathLost = true;
        }

        Reregister();
    }

    /// <summary>
    /// True when a registration that failed with <paramref name="failure"/> goes once more, on a new path: the observation
    /// was accepted, the failure is its path lost (<see cref="CoapConnectionException"/>: a connection, or a DTLS session
    /// whose server restarted), and no loss is being recovered from already. Notes the loss.
    /// </summary>
    private bool TakeRetryAfterLoss(Exception failure)
    {
        lock (_gate)
        {
            if (failure is not CoapConnectionException || !_accepted || _pathLost)
            {
                return false;
            }

            _pathLost = true;
            return true;
        }
    }

    /// <summary>
    /// Writes <paramref name="message"/> to the channel; true when it ends the observation (no Observe option), which the
    /// caller then does outside the delivery lock. Called holding <see cref="_delivery"/>.
    /// </summary>
    private bool Deliver(CoapMessage message)
    {
        CoapResponse response = new(message, Peer.EndPoint);
        if (message.Observe is null)
        {
            // RFC 7641 sections 3.2 and 4.2: a response without Observe (the server would not, or an error) ends the observation.
            _channel.Writer.TryWrite(response);
            return true;
        }

        lock (_gate)
        {
            if (_ended)
            {
                return false;
            }

            _accepted = true;
            _pathLost = false;

            // RFC 7641 section 3.3.1: silence past Max-Age (default 60 s) and a margin means the observation may be lost.
            TimeSpan due = TimeSpan.FromSeconds(message.MaxAge ?? 60) + _margin;
            _silence ??= _time.CreateTimer(static state => ((ClientObservation)state!).Reregister(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
            _silence.Change(due, Timeout.InfiniteTimeSpan);
        }

        _channel.Writer.TryWrite(response);
        return false;
    }

    private void Reregister()
    {
        CancellationTokenSource? old;
        lock (_gate)
        {
            if (_ended)
            {
                return;
            }

            old = _current;
        }

        // Dropping the old exchange frees the token for the new registration.
        old?.Cancel();
        Register();
    }

    private void End(Exception? failure, bool deregister)
    {
        CancellationTokenSource? current;
        bool sendDeregistration;
        ReadOnlyMemory<byte> token;
        CoapPeer peer;
        lock (_gate)
        {
            if (_ended)
            {
                return;
            }

            _ended = true;
            current = _current;
            _current = null;
            _silence?.Dispose();

            // After a loss the server's registration went with the path: nothing to deregister, no path to open for it.
            sendDeregistration = deregister && _accepted && !_pathLost;
            token = _token;
            peer = _peer;
        }

        current?.Cancel();
        current?.Dispose();
        _deregistration.TrySetResult(sendDeregistration ? Deregister(peer, token) : null);
        _channel.Writer.TryComplete(failure);
    }

    /// <summary>
    /// RFC 7641 section 3.6: a GET with Observe=1 and the observation's token. Nothing here waits for its answer; the
    /// task is kept for a caller that does (<see cref="CoapObservation.DeregisterAsync"/>). Null when it could not be sent.
    /// </summary>
    private Task<CoapMessage>? Deregister(CoapPeer peer, ReadOnlyMemory<byte> token)
    {
        CoapMessage request = CopyTemplate(_template, 1);
        request.Token = token;
        try
        {
            Task<CoapMessage> sent = _exchanges.SendAsync(request, peer, CancellationToken.None);

            // Observed here, so a failure nobody awaits is not reported as unobserved.
            _ = sent.ContinueWith(
                static task => _ = task.Exception,
                CancellationToken.None,
                TaskContinuationOptions.OnlyOnFaulted | TaskContinuationOptions.ExecuteSynchronously,
                TaskScheduler.Default);
            return sent;
        }
        catch (Exception e) when (e is ArgumentException or ObjectDisposedException)
        {
            // The client is closing, or the token is in use again: the server learns by RST on the next notification.
            return null;
        }
    }

    private static CoapMessage CopyTemplate(CoapMessage template, uint observe)
    {
        CoapMessage copy = template.CopyWithout(CoapOptionNumber.Observe);
        copy.Token = default;
        copy.Observe = observe;
        return copy;
    }
}
