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
/// Notifications wait for the reader in a small buffer that drops the oldest: only the latest state
/// matters (section 1.3), so a slow reader costs no memory. The last one (an error, or a response
/// without Observe) is never dropped: it is written last.
/// </remarks>
internal sealed class ClientObservation : IDisposable
{
    private const int Buffered = 16;
    private readonly ExchangeLayer _exchanges;
    private readonly CoapMessage _template;
    private readonly CoapPeer _peer;
    private readonly TimeProvider _time;
    private readonly TimeSpan _margin;
    private readonly Channel<CoapResponse> _channel = Channel.CreateBounded<CoapResponse>(
        new BoundedChannelOptions(Buffered) { FullMode = BoundedChannelFullMode.DropOldest, SingleReader = true });

    private readonly object _gate = new();

    // The deregistration sent when the observation ended (null inside when none was): set once, by End.
    private readonly TaskCompletionSource<Task<CoapMessage>?> _deregistration = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private CancellationTokenSource? _current;
    private ITimer? _silence;
    private ReadOnlyMemory<byte> _token;
    private bool _firstDelivered;
    private CoapMessage? _early;
    private bool _accepted;
    private bool _ended;

    public ClientObservation(ExchangeLayer exchanges, CoapMessage request, CoapPeer peer, TimeProvider time, TimeSpan margin)
    {
        _exchanges = exchanges;
        _template = request;
        _peer = peer;
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

    /// <summary>The server the observation is with.</summary>
    public CoapPeer Peer => _peer;

    /// <summary>Sends the registration.</summary>
    public void Start() => Register();

    /// <summary>Ends the observation: drops the exchange and deregisters with Observe=1 (RFC 7641 section 3.6). Idempotent.</summary>
    public void Dispose() => End(null, deregister: true);

    private void Register()
    {
        CancellationTokenSource cancel = new();
        CoapMessage request = CopyTemplate(_template, 0);
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

            // RFC 7641 section 3.3.1: a re-registration uses the observation's token, so the server updates its entry.
            request.Token = _token;
        }

        Task<CoapMessage> first;
        try
        {
            first = _exchanges.SendForManyResponsesAsync(request, _peer, m => OnLater(cancel, m), cancel.Token, e => OnLost(cancel, e));
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

    private void OnFirst(Task<CoapMessage> task, CancellationTokenSource cancel)
    {
        CoapMessage? early;
        lock (_gate)
        {
            if (_ended || !ReferenceEquals(cancel, _current))
            {
                return;
            }

            if (task.IsCompletedSuccessfully)
            {
                _firstDelivered = true;
            }

            early = _early;
            _early = null;
        }

        if (!task.IsCompletedSuccessfully)
        {
            End(task.Exception?.InnerException ?? new OperationCanceledException(), deregister: false);
            return;
        }

        Deliver(task.Result);
        if (early is not null)
        {
            Deliver(early);
        }
    }

    private void OnLater(CancellationTokenSource cancel, CoapMessage notification)
    {
        lock (_gate)
        {
            if (_ended || !ReferenceEquals(cancel, _current))
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

        Deliver(notification);
    }

    /// <summary>The path to the server was lost after the registration (a connection closed): register again.</summary>
    private void OnLost(CancellationTokenSource cancel, Exception reason)
    {
        lock (_gate)
        {
            if (_ended || !ReferenceEquals(cancel, _current))
            {
                return;
            }
        }

        Reregister();
    }

    private void Deliver(CoapMessage message)
    {
        CoapResponse response = new(message, _peer.EndPoint);
        if (message.Observe is null)
        {
            // RFC 7641 sections 3.2 and 4.2: a response without Observe (the server would not, or an error) ends the observation.
            _channel.Writer.TryWrite(response);
            End(null, deregister: false);
            return;
        }

        lock (_gate)
        {
            if (_ended)
            {
                return;
            }

            _accepted = true;

            // RFC 7641 section 3.3.1: silence past Max-Age (default 60 s) and a margin means the observation may be lost.
            TimeSpan due = TimeSpan.FromSeconds(message.MaxAge ?? 60) + _margin;
            _silence ??= _time.CreateTimer(static state => ((ClientObservation)state!).Reregister(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
            _silence.Change(due, Timeout.InfiniteTimeSpan);
        }

        _channel.Writer.TryWrite(response);
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
            sendDeregistration = deregister && _accepted;
            token = _token;
        }

        current?.Cancel();
        current?.Dispose();
        _deregistration.TrySetResult(sendDeregistration ? Deregister(token) : null);
        _channel.Writer.TryComplete(failure);
    }

    /// <summary>
    /// RFC 7641 section 3.6: a GET with Observe=1 and the observation's token. Nothing here waits for its answer; the
    /// task is kept for a caller that does (<see cref="CoapObservation.DeregisterAsync"/>). Null when it could not be sent.
    /// </summary>
    private Task<CoapMessage>? Deregister(ReadOnlyMemory<byte> token)
    {
        CoapMessage request = CopyTemplate(_template, 1);
        request.Token = token;
        try
        {
            Task<CoapMessage> sent = _exchanges.SendAsync(request, _peer, CancellationToken.None);

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
