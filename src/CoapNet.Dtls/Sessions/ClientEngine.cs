using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.Net;
using System.Security.Authentication;
using CoapNet.Channels;
using CoapNet.Dtls.Credentials;
using CoapNet.Transports;
using Org.BouncyCastle.Tls;

namespace CoapNet.Dtls.Sessions;

/// <summary>The client's engine: one session per server, made on demand, shared by every request to it.</summary>
internal sealed class ClientEngine : DtlsEngine
{
    /// <summary>
    /// How many times one connection attempt starts over when the server refuses its cookie: once covers a server that
    /// restarted mid-handshake; more than a few means something answers for the server that never will accept one.
    /// </summary>
    private const int MaxCookieRestarts = 3;

    private readonly DtlsClientOptions _options;
    private readonly object _connectGate = new();
    private readonly Dictionary<DtlsSession, TaskCompletionSource<CoapSecurityContext>> _waiting = [];

    private readonly DtlsCredentials _credentials;

    public ClientEngine(IDatagramTransport network, DtlsClientOptions options, DtlsCredentials credentials)
        : base(network, options)
    {
        _options = options;
        _credentials = credentials;
    }

    /// <summary>The established or pending session with <paramref name="remote"/>, or a new handshake.</summary>
    public Task<CoapSecurityContext> ConnectAsync(IPEndPoint remote, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(remote);
        ObjectDisposedException.ThrowIf(IsDisposed, this);
        StartReceiving();
        Task<CoapSecurityContext> connected;
        lock (_connectGate)
        {
            if (TryJoin(remote, out Task<CoapSecurityContext>? pending))
            {
                connected = pending;
            }
            else
            {
                TaskCompletionSource<CoapSecurityContext> outcome = new(TaskCreationOptions.RunContinuationsAsynchronously);
                if (!TryHandshake(remote, outcome, cookieRestarts: 0))
                {
                    return Task.FromException<CoapSecurityContext>(Refused(remote));
                }

                connected = outcome.Task;
            }
        }

        return cancellationToken.CanBeCanceled ? connected.WaitAsync(cancellationToken) : connected;
    }

    protected override string PeerName => "the server";

    protected override void OnUnknownDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote)
    {
        // A client answers nobody it did not call: stray datagrams are dropped.
    }

    /// <summary>
    /// A confirmable message in <paramref name="session"/> went unacknowledged through all its retransmissions: the
    /// server has evidently lost the session. A server that restarted knows nothing of it and drops its records
    /// unanswered (RFC 6347 section 4.1.2.7: invalid records are silently discarded), so silence is all the client can
    /// observe; an alert it might send in the clear would not authenticate, and must not end a session, or anyone could
    /// end it. The session is closed (close_notify, for a server that still has it), which fails what is pending in it
    /// and lets the next request handshake again, which a restarted server answers on the same address and port as a
    /// new association (section 4.2.8).
    /// </summary>
    protected override void OnUnacknowledged(DtlsSession session)
        => session.Close($"{PeerName} acknowledged no confirmable message through all its retransmissions (RFC 7252 section 4.2), so it has evidently lost the session (a restart, RFC 6347 section 4.2.8); the next request makes a new one", SessionEnd.Unacknowledged);

    protected override void OnEstablished(DtlsSession session)
    {
        if (Take(session) is { } outcome)
        {
            outcome.TrySetResult(session.Context!);
        }
    }

    protected override void OnHandshakeFailed(DtlsSession session, Exception error)
    {
        if (error is CookieRefusedException && session.CookieRestarts < MaxCookieRestarts)
        {
            // The server lost the cookie's secret (a restart between its HelloVerifyRequest and our answer): a new
            // handshake from the start gets a cookie it accepts, and the waiters move to it.
            lock (_connectGate)
            {
                if (Take(session) is not { } waiting)
                {
                    return;
                }

                if (TryJoin(session.Remote, out Task<CoapSecurityContext>? pending))
                {
                    // Another request began a handshake with the server meanwhile: its outcome is these waiters' too.
                    _ = pending.ContinueWith(
                        static (task, state) => Complete((TaskCompletionSource<CoapSecurityContext>)state!, task),
                        waiting,
                        CancellationToken.None,
                        TaskContinuationOptions.ExecuteSynchronously,
                        TaskScheduler.Default);
                }
                else if (!TryHandshake(session.Remote, waiting, session.CookieRestarts + 1))
                {
                    waiting.TrySetException(Refused(session.Remote));
                }
            }

            return;
        }

        if (Take(session) is { } outcome)
        {
            outcome.TrySetException(error switch
            {
                CookieRefusedException => new AuthenticationException($"The server at {session.Remote} refused the cookie of {session.CookieRestarts + 1} handshakes in a row (RFC 6347 section 4.2.1): {error.Message}", error),

                // Said by Explain on the handshake's thread, which knew what the server had sent.
                AuthenticationException or TimeoutException => error,
                _ => new AuthenticationException($"The DTLS handshake with {session.Remote} failed: {error.Message}", error),
            });
        }
    }

    /// <summary>
    /// What a failed handshake means, from what the server sent before it failed: an alert it received is the server's
    /// refusal, named with its likely cause; a timeout after the server's hello is, with a pre-shared key, most likely a
    /// wrong key (the server could not verify our Finished, and drops a record it cannot verify unanswered, RFC 6347
    /// section 4.1.2.7); a timeout before it is no answer at all. Null leaves the error as it is.
    /// </summary>
    private Exception? Explain(Exception error, CoapDtlsClient client, IPEndPoint remote)
    {
        string within = $"within {_options.HandshakeTimeout.TotalSeconds.ToString("0.###", CultureInfo.InvariantCulture)} s";
        return error switch
        {
            TlsFatalAlertReceived received
                => new AuthenticationException($"The server at {remote} refused the DTLS handshake: {DtlsAlerts.Explain(received.AlertDescription)}.", error),
            TlsFatalAlert raised
                => new AuthenticationException($"The DTLS handshake with {remote} failed: we ended it with {DtlsAlerts.Name(raised.AlertDescription)}{Detail(raised)}.", error),
            TlsTimeoutException when client.ServerAnswered && client.OffersPsk
                => new AuthenticationException($"The server at {remote} answered the DTLS handshake but did not finish it {within} (wrong key?).", error),
            TlsTimeoutException when client.ServerAnswered
                => new TimeoutException($"The server at {remote} answered the DTLS handshake but did not finish it {within}.", error),
            TlsTimeoutException
                => new TimeoutException($"The DTLS handshake with {remote} got no answer {within}: nothing answers DTLS at that address and port.", error),
            _ => null,
        };

        // BouncyCastle's message is the alert's text, then "; " and what raised it, when something said.
        static string Detail(TlsFatalAlert alert)
        {
            int detail = alert.Message.IndexOf("; ", StringComparison.Ordinal);
            return detail >= 0 ? ": " + alert.Message[(detail + 2)..] : alert.InnerException is { } cause ? ": " + cause.Message : string.Empty;
        }
    }

    /// <summary>
    /// Starts a handshake with <paramref name="remote"/> whose outcome completes <paramref name="outcome"/>; false when
    /// the bounds refuse it. Call holding the connect gate.
    /// </summary>
    private bool TryHandshake(IPEndPoint remote, TaskCompletionSource<CoapSecurityContext> outcome, int cookieRestarts)
    {
        bool started = TryStartHandshake(remote, s =>
        {
            // Set on the handshake's own thread before its first datagram, and read there when it fails.
            s.WatchesCookies = true;
            s.CookieRestarts = cookieRestarts;
            CoapDtlsClient client = new(CryptoFor(s), _options, _credentials);
            DtlsClientProtocol protocol = new();
            try
            {
                Org.BouncyCastle.Tls.DtlsTransport transport = protocol.Connect(client, s);
                return (transport, client.PeerIdentity, client.Protection);
            }
            catch (Exception e) when (Explain(e, client, s.Remote) is { } explained)
            {
                throw explained;
            }
        }, out DtlsSession? session);
        if (!started)
        {
            return false;
        }

        session!.Connected = outcome.Task;
        lock (_waiting)
        {
            _waiting[session] = outcome;
        }

        // The handshake thread may have finished before the waiter was recorded. Every failed path sets Failure before
        // it tells OnHandshakeFailed, so a session closed without one is still failing on its thread (BouncyCastle closes
        // the transport on the server's alert before its exception reaches RunHandshake), which will tell the waiter
        // with what the server said; Take makes sure only one of the two completes it.
        if (session.IsEstablished)
        {
            OnEstablished(session);
        }
        else if (session.Failure is { } failure)
        {
            OnHandshakeFailed(session, failure);
        }

        return true;
    }

    /// <summary>The outcome of the established or pending session with <paramref name="remote"/>, if it has one.</summary>
    private bool TryJoin(IPEndPoint remote, [NotNullWhen(true)] out Task<CoapSecurityContext>? pending)
    {
        pending = TryGetSession(remote, out DtlsSession? existing) && !existing!.IsClosed ? existing.Connected : null;
        return pending is not null;
    }

    private static void Complete(TaskCompletionSource<CoapSecurityContext> waiting, Task<CoapSecurityContext> outcome)
    {
        if (outcome.IsCompletedSuccessfully)
        {
            waiting.TrySetResult(outcome.Result);
        }
        else if (outcome.Exception is { } failed)
        {
            waiting.TrySetException(failed.InnerExceptions);
        }
        else
        {
            waiting.TrySetCanceled();
        }
    }

    private AuthenticationException Refused(IPEndPoint remote)
        => new($"No DTLS handshake with {remote} could start: {_options.MaxConcurrentHandshakes} handshakes already run, or {_options.MaxSessions} sessions exist (DtlsClientOptions).");

    private TaskCompletionSource<CoapSecurityContext>? Take(DtlsSession session)
    {
        lock (_waiting)
        {
            return _waiting.Remove(session, out TaskCompletionSource<CoapSecurityContext>? outcome) ? outcome : null;
        }
    }
}
