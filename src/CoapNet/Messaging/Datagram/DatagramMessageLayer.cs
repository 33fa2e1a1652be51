using System.Buffers;
using System.Buffers.Binary;
using System.Net;
using CoapNet.Channels;
using CoapNet.Diagnostics;
using CoapNet.Messages;
using CoapNet.Messaging.Retransmission;
using CoapNet.Serialization;
using CoapNet.Transports;
using Microsoft.Extensions.Logging;

namespace CoapNet.Messaging.Datagram;

/// <summary>
/// The message layer of RFC 7252 section 4, for datagram transports only: Message IDs, deduplication,
/// CON/ACK/RST, retransmission with exponential back-off, CoAP ping, NSTART, and the empty ACK that
/// lets a slow handler answer separately. Above it the exchange layer sees only requests and
/// responses; below it the datagram channels turn bytes into messages.
/// </summary>
/// <remarks>
/// The coordinator of collaborators that each own one concern: <see cref="DeduplicationCache"/> (section 4.5),
/// <see cref="PeerMessageStateTable"/> (Message IDs, NSTART), <see cref="RetransmissionQueue"/> (section 4.2),
/// <see cref="SeparateAckWatch"/> (section 5.2.2) and <see cref="NonNotifications"/> (RFC 7641 section 3.6).
/// The first three have no lock of their own: this layer's lock guards them together, because the per-peer
/// retransmission policy and the endpoint's <see cref="Random"/> they share must be used under one lock (see
/// <see cref="RetransmissionQueue"/>); the last two each have their own leaf lock. Nothing is serialized or sent,
/// and no upper layer is called, while any of these locks is held. UDP sends complete without blocking, so sends
/// are synchronous: timers and the receive loop need no state machine per datagram.
/// </remarks>
internal sealed partial class DatagramMessageLayer : IMessageLayer, IDatagramChannelReceiver, IPeerTimeoutSource
{
    private readonly DatagramChannels _channels;
    private readonly CoapTransmissionParameters _parameters;
    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private readonly Random _random;
    private readonly long _exchangeLifetimeTicks;
    private readonly long _nonLifetimeTicks;

    // Guards _deduplication, _peers, _reliability and the state of each RequestState (see the remarks above).
    private readonly object _gate = new();
    private readonly DeduplicationCache _deduplication;
    private readonly PeerMessageStateTable _peers;
    private readonly RetransmissionQueue _reliability;
    private readonly NonNotifications _nonNotifications;
    private readonly SeparateAckWatch? _separateAcks;
    private readonly ITimer _sweepTimer;
    private readonly LogRateLimiter _malformedLog;
    private IExchangeLayer? _upper;
    private int _disposed;

    public DatagramMessageLayer(IDatagramTransport transport, CoapEndpointOptions options, ILogger logger)
    {
        _channels = new DatagramChannels(transport, options.MaxMessageSize, options.MaxOptionCount);
        _parameters = options.TransmissionParameters;
        _time = options.TimeProvider;
        _logger = logger;
        _random = options.Random ?? Random.Shared;
        _exchangeLifetimeTicks = ToTicks(_parameters.ExchangeLifetime);
        _nonLifetimeTicks = ToTicks(_parameters.NonLifetime);
        _deduplication = new DeduplicationCache(options.DeduplicationCapacity);
        // RFC 7252 section 9.1.2 matches an ACK or RST in the session of what it answers; another policy is an opt-in.
        SessionMatchingComparer? sessions = SessionMatchingComparer.For(options.SessionMatching);
        _peers = new PeerMessageStateTable(options.MaxPeers, _exchangeLifetimeTicks, _random, options.RetransmissionPolicy, _parameters, _time, sessions);
        _reliability = new RetransmissionQueue(this, _time, _random, sessions);
        _nonNotifications = new NonNotifications(sessions);
        _malformedLog = new LogRateLimiter(_time, options.MalformedLogLinesPerSecond);

        // Idle peers are swept once per ACK_TIMEOUT x 10; deduplication entries expire as new ones arrive.
        TimeSpan sweep = _parameters.AckTimeout * 10;
        _sweepTimer = _time.CreateTimer(static state => ((DatagramMessageLayer)state!).Sweep(), this, sweep, sweep);

        if (options.SeparateResponseDelay is TimeSpan delay)
        {
            // RFC 7252 section 5.2.2: a CON whose answer takes longer than this gets an empty ACK first.
            // Created after the sweep timer, as before the split, so timers due at one instant fire in the same order.
            _separateAcks = new SeparateAckWatch(_time, delay, _gate);
        }

        CoapInstrumentation.AddPeerTimeoutSource(this);
    }

    /// <inheritdoc/>
    public string Scheme => _channels.Scheme;

    /// <inheritdoc/>
    public IPEndPoint LocalEndPoint => _channels.LocalEndPoint;

    /// <summary>The number of messages the deduplication cache currently remembers.</summary>
    public int DeduplicationCount
    {
        get
        {
            lock (_gate)
            {
                return _deduplication.Count;
            }
        }
    }

    /// <inheritdoc/>
    public IExchangeLayer? Upper => _upper;

    /// <inheritdoc/>
    public void Start(IExchangeLayer upper)
    {
        _upper = upper;
        _channels.Start(this);
    }

    /// <inheritdoc/>
    public void CheckSendable(CoapPeer peer, CoapMessage message, int tokenLength) => _channels.CheckSendable(message, tokenLength);

    /// <inheritdoc/>
    public int BertBlockSize(CoapPeer peer) => 0;

    /// <inheritdoc/>
    public bool IsReliable => false;

    /// <inheritdoc/>
    public bool LimitsKnown(CoapPeer peer, Action<Exception?> known) => true;

    /// <inheritdoc/>
    public bool Fits(CoapPeer peer, CoapMessage message, int tokenLength)
    {
        try
        {
            _channels.CheckSendable(message, tokenLength);
            return true;
        }
        catch (ArgumentException)
        {
            return false;
        }
    }

    /// <inheritdoc/>
    public void SendRequest(OutgoingRequest request)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        RequestState state = new(this, request, _channels.Get(request.Peer));
        request.LowerState = state;
        bool startNow;
        bool paced = request.PacedAbove && request.Request.Type == CoapMessageType.NonConfirmable;
        lock (_gate)
        {
            state.Peer = _peers.GetOrCreate(request.Peer, _time.GetTimestamp());
            startNow = paced || state.Peer.TryTakeSlot(state);
        }

        if (startNow)
        {
            state.Start(holdsSlot: !paced);
        }
    }

    /// <inheritdoc/>
    public void EndRequest(OutgoingRequest request) => (request.LowerState as RequestState)?.End();

    /// <inheritdoc/>
    public void Acknowledge(CoapExchange exchange)
    {
        Span<byte> ack = WriteEmpty(stackalloc byte[EmptyLength], CoapMessageType.Acknowledgement, exchange.Request.MessageId);
        Settle(exchange, ack);
        SendRaw((DatagramChannel)exchange.LowerState, ack, null);
    }

    /// <inheritdoc/>
    public void EndWithoutResponse(CoapExchange exchange)
    {
        // After an empty ACK there is nothing left to send; a NON is simply not answered (its duplicates neither).
        if (exchange.IsConfirmable && !exchange.RespondsAfterAcknowledgement)
        {
            Acknowledge(exchange);
        }
    }

    /// <inheritdoc/>
    public void Reject(CoapExchange exchange)
    {
        if (exchange.Request.Type != CoapMessageType.Confirmable)
        {
            Settle(exchange, default);
            return;
        }

        Span<byte> reset = WriteEmpty(stackalloc byte[EmptyLength], CoapMessageType.Reset, exchange.Request.MessageId);
        Settle(exchange, reset);
        SendRaw((DatagramChannel)exchange.LowerState, reset, null);
    }

    /// <inheritdoc/>
    public void SendResponse(CoapExchange exchange, CoapMessage response)
    {
        // The response is a handler's message, which may be shared: it goes out with its request's token (RFC 7252
        // section 5.3.1) and the type and Message ID chosen here, written straight into the datagram (the message is
        // neither copied nor changed).
        DatagramChannel channel = (DatagramChannel)exchange.LowerState;
        bool confirmable = exchange.Request.Type == CoapMessageType.Confirmable;
        if (confirmable && !exchange.RespondsAfterAcknowledgement)
        {
            // RFC 7252 section 5.2.1: piggybacked in the ACK, with the request's Message ID. The datagram is a pooled
            // array: the deduplication cache keeps its own copy of the bytes for duplicates (issue 11).
            byte[] rented = channel.EncodeRented(response, new(CoapMessageType.Acknowledgement, exchange.Request.MessageId, exchange.Request.Token), out int length);
            SendRented(channel, rented, length, settles: exchange);
            return;
        }

        // RFC 7252 section 5.2.2 and 5.2.3: a separate response is CON (for a CON request, retransmitted
        // until acknowledged, so its datagram is kept) or NON (sent once from a pooled array), with a Message ID of our own.
        if (confirmable)
        {
            // As in Settle: only a watched (confirmable) request's answer takes the lock to stop watching it.
            if (SeparateAckWatch.IsWatched(exchange) && _separateAcks is { } watch)
            {
                lock (_gate)
                {
                    watch.ForgetLocked(exchange);
                }
            }

            (PeerMessageState peer, ushort messageId) = TakeMessageId(channel.Peer);
            byte[] datagram = channel.Encode(response, new(CoapMessageType.Confirmable, messageId, exchange.Request.Token));
            StartTransmission(new MessageKey(channel.Peer, messageId), channel, datagram, new ServerResponseOwner(this, channel.Peer, messageId), peer);
            SendRaw(channel, datagram, null);
            return;
        }

        if (response.Code == CoapCode.BadOption)
        {
            // RFC 7252 sections 5.4.1 and 4.3: a NON with a critical option nothing above processes is rejected, not
            // answered; apart from an optional RST it is silently ignored (as its duplicates are), and never gets a 4.02.
            Log.Ignored(_logger, exchange.Request, channel.Peer, "a non-confirmable request with a critical option nothing here processes is rejected without an answer (RFC 7252 sections 5.4.1, 4.3)");
            Reject(exchange);
            return;
        }

        // Nothing here waits for an answer to a NON (RFC 7252 section 4.3): it is only numbered under the lock.
        ushort nonMessageId = TakeMessageId(channel.Peer).MessageId;
        byte[] pooled = channel.EncodeRented(response, new(CoapMessageType.NonConfirmable, nonMessageId, exchange.Request.Token), out int pooledLength);
        SendRented(channel, pooled, pooledLength, settles: null);
    }

    /// <summary>
    /// The next Message ID toward <paramref name="remote"/> (RFC 7252 section 4.4), taken under the lock; the caller
    /// serializes outside it (serializing a large message would hold up every other exchange of the endpoint) and,
    /// for a CON, registers the transmission with <see cref="StartTransmission"/> before the first send. That order
    /// opens no race: a datagram is sent only after its transmission is registered, so its ACK or RST cannot arrive
    /// before; and a Message ID taken but not yet sent is one no peer has seen.
    /// </summary>
    private (PeerMessageState Peer, ushort MessageId) TakeMessageId(CoapPeer remote)
    {
        lock (_gate)
        {
            PeerMessageState peer = _peers.GetOrCreate(remote, _time.GetTimestamp());
            return (peer, peer.NextMessageId());
        }
    }

    /// <summary>
    /// Sends a datagram from an array rented from <see cref="ArrayPool{T}.Shared"/> and returns the array; first, when
    /// it is <paramref name="settles"/>'s own reply, records it for duplicates (the cache copies the bytes).
    /// </summary>
    private void SendRented(DatagramChannel channel, byte[] rented, int length, CoapExchange? settles)
    {
        try
        {
            ReadOnlySpan<byte> datagram = rented.AsSpan(0, length);
            if (settles is not null)
            {
                Settle(settles, datagram);
            }

            SendRaw(channel, datagram, null);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    /// <inheritdoc/>
    public void SendNotification(CoapExchange registration, CoapMessage notification, ICoapDeliveryListener owner)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        DatagramChannel channel = (DatagramChannel)registration.LowerState;
        bool confirmable = notification.Type == CoapMessageType.Confirmable;
        long now = _time.GetTimestamp();
        (PeerMessageState peer, ushort messageId) = TakeMessageId(channel.Peer);
        byte[] datagram = channel.Encode(notification, new(notification.Type, messageId, registration.Request.Token));
        MessageKey key = new(channel.Peer, messageId);
        if (confirmable)
        {
            StartTransmission(key, channel, datagram, new NotificationTransmissionOwner(owner), peer);
        }
        else
        {
            // RFC 7641 section 3.6: the observer may reject a NON notification with RST; remember its Message ID for that,
            // before the send, so the RST cannot come first. An observation has one notification in flight at a time
            // (Observation's queue of one, RFC 7641 section 4.5.2), so its entries are added in Message ID order.
            _nonNotifications.Add(key, owner, now + _nonLifetimeTicks);
        }

        SendRaw(channel, datagram, null);
        if (!confirmable)
        {
            owner.OnDelivered();
        }
    }

    /// <inheritdoc/>
    public Task<TimeSpan> PingAsync(CoapPeer peer, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(peer);
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        DatagramChannel channel = _channels.Get(peer);
        (PeerMessageState state, ushort messageId) = TakeMessageId(peer);
        byte[] bytes = SerializeEmpty(CoapMessageType.Confirmable, messageId);
        PingOwner ping = new(this, peer, messageId, _time.GetTimestamp());
        StartTransmission(new MessageKey(peer, messageId), channel, bytes, ping, state);
        ping.RegisterCancellation(cancellationToken);
        if (!ping.Completion.IsCompleted)
        {
            // Not when the token was already canceled: the registration has just ended the ping.
            SendRaw(channel, bytes, null);
        }

        return ping.Completion;
    }

    /// <summary>Stops the timers, ends every transmission (failing pending pings) and closes the transport.</summary>
    public void Dispose()
    {
        if (BeginDispose())
        {
            _channels.Transport.Dispose();
        }
    }

    /// <inheritdoc cref="Dispose"/>
    public async ValueTask DisposeAsync()
    {
        if (BeginDispose())
        {
            await _channels.Transport.DisposeAsync().ConfigureAwait(false);
        }
    }

    void IDatagramChannelReceiver.OnMessage(DatagramChannel channel, CoapMessage message)
    {
        try
        {
            Log.Received(_logger, channel.Peer, message);
            Dispatch(channel, message);
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            // Nothing a peer sends may stop the receive loop.
            Log.ProcessingFailed(_logger, e, channel.Peer);
        }
    }

    /// <summary>RFC 7252 sections 4.2 and 4.3: a malformed CON is rejected with RST; anything else malformed is dropped.</summary>
    void IDatagramChannelReceiver.OnMalformed(DatagramChannel channel, ReadOnlySpan<byte> datagram, CoapFormatError error)
    {
        // RFC 7252 section 3: a message with an unknown version is silently ignored, so no RST.
        bool confirmable = error.Reason != CoapFormatErrorReason.UnsupportedVersion
            && datagram.Length >= 4 && datagram[0] >> 6 == 1 && ((datagram[0] >> 4) & 3) == (int)CoapMessageType.Confirmable;
        if (_logger.IsEnabled(LogLevel.Warning) && _malformedLog.TryAcquire(out long suppressed))
        {
            if (suppressed > 0)
            {
                Log.MalformedSuppressed(_logger, suppressed);
            }

            Log.Malformed(_logger, datagram.Length, channel.Peer, error, confirmable ? "RST" : "silence");
        }

        CoapInstrumentation.MalformedCounter.Add(1, new KeyValuePair<string, object?>("url.scheme", _channels.Scheme));
        if (confirmable)
        {
            SendRaw(channel, WriteEmpty(stackalloc byte[EmptyLength], CoapMessageType.Reset, BinaryPrimitives.ReadUInt16BigEndian(datagram[2..])), null);
        }
    }

    /// <summary>
    /// The transport ended the peer's session (DTLS: close_notify, a fatal alert, ageing, or our own give-up below): no
    /// ACK, response or notification can come in it any more (RFC 7252 section 9.1.1). What this layer sends in it
    /// ends with <paramref name="reason"/>, and the exchange layer fails what waits above and forgets the peer.
    /// </summary>
    void IDatagramChannelReceiver.OnPeerLost(CoapPeer peer, Exception reason)
    {
        List<ITransmissionOwner> owners = [];
        lock (_gate)
        {
            _reliability.StopPeer(peer, owners);
        }

        foreach (ITransmissionOwner owner in owners)
        {
            owner.OnPeerLost(reason);
        }

        _upper?.OnPeerLost(peer, reason);
    }

    /// <summary>
    /// The request's own reply is decided: record it for duplicates (RFC 7252 section 4.5), stop
    /// watching it for the automatic empty ACK, and let the deduplication entry drop the exchange.
    /// </summary>
    /// <param name="exchange">The exchange.</param>
    /// <param name="reply">The ACK, RST or piggybacked response sent; empty when nothing is replayed for duplicates.</param>
    private void Settle(CoapExchange exchange, ReadOnlySpan<byte> reply)
    {
        // Only a confirmable request is watched (OnRequest); a NON's settling takes no lock at all when nothing is replayed.
        SeparateAckWatch? watch = SeparateAckWatch.IsWatched(exchange) ? _separateAcks : null;
        if (!reply.IsEmpty || watch is not null)
        {
            lock (_gate)
            {
                if (!reply.IsEmpty)
                {
                    _deduplication.Record(DeduplicationCache.Ticket.Unpack(exchange.LowerTicket), reply);
                }

                watch?.ForgetLocked(exchange);
            }
        }
    }

    /// <summary>The length of an Empty message: the 4-byte header alone (RFC 7252 section 4.1).</summary>
    private const int EmptyLength = 4;

    internal static byte[] SerializeEmpty(CoapMessageType type, ushort messageId)
    {
        byte[] bytes = new byte[EmptyLength];
        WriteEmpty(bytes, type, messageId);
        return bytes;
    }

    /// <summary>Writes an Empty message (version 1, TKL 0, code 0.00) into the first 4 bytes of <paramref name="destination"/>, for a send that keeps nothing.</summary>
    private static Span<byte> WriteEmpty(Span<byte> destination, CoapMessageType type, ushort messageId)
    {
        destination[0] = (byte)(0x40 | ((int)type << 4));
        destination[1] = 0;
        BinaryPrimitives.WriteUInt16BigEndian(destination[2..], messageId);
        return destination[..EmptyLength];
    }

    private void SendRaw(DatagramChannel channel, ReadOnlySpan<byte> datagram, CoapMessage? message)
    {
        // Logged before the send: on loopback the answer can arrive (and be logged) before the send returns.
        if (message is not null)
        {
            Log.Sent(_logger, channel.Peer, message);
        }
        else if (_logger.IsEnabled(LogLevel.Debug))
        {
            Log.Sent(_logger, channel.Peer, CoapMessageSerializer.Udp.Deserialize(datagram));
        }

        TrySend(channel, datagram);
    }

    // A failed send is logged, never thrown: the retransmission timer (for CON) is the recovery.
    private void TrySend(DatagramChannel channel, ReadOnlySpan<byte> datagram)
    {
        try
        {
            channel.Send(datagram);
        }
        catch (Exception e) when (e is System.Net.Sockets.SocketException or ObjectDisposedException)
        {
            Log.SendFailed(_logger, e, channel.Peer);
        }
    }

    private long ToTicks(TimeSpan span) => (long)(span.TotalSeconds * _time.TimestampFrequency);

    private bool BeginDispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return false;
        }

        _sweepTimer.Dispose();
        _separateAcks?.Dispose();
        CoapInstrumentation.RemovePeerTimeoutSource(this);
        List<ITransmissionOwner> owners = [];
        lock (_gate)
        {
            _reliability.StopAll(owners);
        }

        // A pending ping has no exchange above that could fail it; nothing else could ever complete it now.
        foreach (ITransmissionOwner owner in owners)
        {
            (owner as PingOwner)?.Fail(new ObjectDisposedException(nameof(CoapEndpoint), "The endpoint was disposed before the ping was answered."));
        }

        return true;
    }

    /// <inheritdoc/>
    void IPeerTimeoutSource.ReportTimeouts(List<System.Diagnostics.Metrics.Measurement<double>> measurements)
    {
        lock (_gate)
        {
            _peers.ReportTimeouts(measurements);
        }
    }

    private void Sweep()
    {
        long now = _time.GetTimestamp();
        lock (_gate)
        {
            _peers.Sweep(now);
        }

        _nonNotifications.Sweep(now);
    }

    private void Dispatch(DatagramChannel channel, CoapMessage message)
    {
        CoapCode code = message.Code;
        switch (message.Type)
        {
            case CoapMessageType.Confirmable when code.IsEmpty:
                // RFC 7252 section 4.3: an empty CON is a ping; the answer is RST.
                SendRaw(channel, WriteEmpty(stackalloc byte[EmptyLength], CoapMessageType.Reset, message.MessageId), null);
                break;
            case CoapMessageType.Confirmable or CoapMessageType.NonConfirmable when code.IsRequest:
                OnRequest(channel, message);
                break;
            case CoapMessageType.Confirmable or CoapMessageType.NonConfirmable when code.IsResponse:
                OnResponse(channel, message);
                break;
            case CoapMessageType.Confirmable:
                // A signaling or reserved-class code cannot be processed over UDP.
                SendRaw(channel, WriteEmpty(stackalloc byte[EmptyLength], CoapMessageType.Reset, message.MessageId), null);
                break;
            case CoapMessageType.Acknowledgement when !code.IsRequest:
            case CoapMessageType.Reset when code.IsEmpty:
                OnAcknowledgementOrReset(channel, message);
                break;
            default:
                Log.Ignored(_logger, message, channel.Peer, "no processing rule applies (RFC 7252 section 4)");
                break;
        }
    }

    private void OnRequest(DatagramChannel channel, CoapMessage request)
    {
        // One reading of the clock for the deduplication entry and the separate-response delay. In a receive thread's
        // batch, the reading the last inline handler call ended with serves (microseconds old against lifetimes of minutes
        // and a delay of a second), and a first reading is left for the batch's first call to start from: one reading
        // a request in all, not two (issue 39). Only a reading of this endpoint's clock is taken.
        if (!ReceiveContext.TryGetBatchClock(_time, out long now))
        {
            now = _time.GetTimestamp();
            ReceiveContext.SetBatchClock(_time, now);
        }

        // Made before the lookup, so a confirmable request's entry holds it from the start (a duplicate, rare, wastes it).
        bool confirmable = request.Type == CoapMessageType.Confirmable;
        CoapExchange exchange = new(request, channel);
        // A confirmable request is watched for the separate-response delay under the lock its entry is made in.
        if (IsDuplicate(channel, request, now, confirmable ? exchange : null, out DeduplicationCache.Ticket ticket))
        {
            return;
        }

        if (!confirmable)
        {
            exchange.LowerTicket = ticket.Packed;
        }

        _upper!.OnRequest(exchange);
    }

    /// <summary>
    /// RFC 7252 section 4.5: a CON or NON seen before (same peer and Message ID, within its lifetime)
    /// is a duplicate; a duplicate CON gets the recorded ACK, RST or piggybacked response again, and
    /// nothing above sees it twice. Sends outside the lock, like every send.
    /// </summary>
    private bool IsDuplicate(DatagramChannel channel, CoapMessage message, long now, CoapExchange? exchange, out DeduplicationCache.Ticket ticket)
    {
        bool confirmable = message.Type == CoapMessageType.Confirmable;
        bool duplicate;
        byte[]? reply;
        CoapExchange? inProgress;
        bool arm = false;
        lock (_gate)
        {
            duplicate = _deduplication.TryGetOrAdd(channel.Peer, message.MessageId, now, confirmable ? _exchangeLifetimeTicks : _nonLifetimeTicks, out ticket, out reply, out inProgress, exchange);
            if (!duplicate && exchange is not null && _separateAcks is { } watch)
            {
                arm = watch.WatchLocked(exchange, now);
            }
        }

        if (arm)
        {
            _separateAcks!.Arm();
        }

        if (!duplicate || !confirmable)
        {
            return duplicate;
        }

        CoapInstrumentation.DuplicateCounter.Add(1);
        if (reply is not null)
        {
            Log.Duplicate(_logger, channel.Peer, message.MessageId);
            SendRaw(channel, reply, null);
        }
        else if (inProgress is not null)
        {
            // RFC 7252 sections 4.5 and 5.2.2: the client retransmits because its request is not yet
            // acknowledged while the handler still works; acknowledge it now (an empty ACK, replayed for
            // later copies) and let the response follow separately, rather than leave it guessing.
            Log.Duplicate(_logger, channel.Peer, message.MessageId);
            inProgress.Accept();
        }

        return duplicate;
    }

    private void OnResponse(DatagramChannel channel, CoapMessage response)
    {
        if (IsDuplicate(channel, response, _time.GetTimestamp(), null, out DeduplicationCache.Ticket ticket))
        {
            return;
        }

        bool confirmable = response.Type == CoapMessageType.Confirmable;
        bool matched = _upper!.OnResponse(channel.Peer, response);
        if (!matched)
        {
            Log.Ignored(_logger, response, channel.Peer, "no outstanding request took it (an unknown token, or a critical option nothing processes)");
        }

        if (confirmable)
        {
            // RFC 7252 section 5.3.2: a CON response that matches no request is rejected with RST; otherwise ACKed.
            Span<byte> reply = WriteEmpty(stackalloc byte[EmptyLength], matched ? CoapMessageType.Acknowledgement : CoapMessageType.Reset, response.MessageId);
            lock (_gate)
            {
                _deduplication.Record(ticket, reply);
            }

            SendRaw(channel, reply, null);
        }
        else if (!matched && response.Observe is not null)
        {
            // RFC 7641 section 3.6: a NON notification nobody observes any longer may be rejected with RST, which ends the observation.
            SendRaw(channel, WriteEmpty(stackalloc byte[EmptyLength], CoapMessageType.Reset, response.MessageId), null);
        }
    }

    private void OnAcknowledgementOrReset(DatagramChannel channel, CoapMessage message)
    {
        Transmission? transmission;
        lock (_gate)
        {
            transmission = _reliability.Complete(new MessageKey(channel.Peer, message.MessageId), message.Type);
        }

        if (transmission is null && message.Type == CoapMessageType.Reset && _nonNotifications.Take(new MessageKey(channel.Peer, message.MessageId)) is { } observer)
        {
            // RFC 7641 section 3.6: the observer rejected a NON notification; it wants no more.
            observer.OnRejected();
            return;
        }

        if (transmission is null)
        {
            // RFC 7252 section 4.2: an ACK or RST that matches nothing is silently ignored.
            Log.Ignored(_logger, message, channel.Peer, "it matches no outstanding confirmable message");
            return;
        }

        if (message.Type == CoapMessageType.Reset)
        {
            transmission.Owner.OnReset();
        }
        else
        {
            transmission.Owner.OnAcknowledged(message);
        }
    }

    /// <summary>
    /// Registers a CON with <see cref="RetransmissionQueue"/> under the lock; the caller sends it afterwards, never
    /// before (see <see cref="TakeMessageId"/>).
    /// </summary>
    private Transmission StartTransmission(MessageKey key, DatagramChannel channel, byte[] datagram, ITransmissionOwner owner, PeerMessageState peer)
    {
        lock (_gate)
        {
            return _reliability.Start(key, channel, datagram, owner, peer.Retransmission);
        }
    }

    /// <summary>Ends the transmission with this key, if any (a canceled ping).</summary>
    private void StopTransmission(MessageKey key)
    {
        lock (_gate)
        {
            _reliability.Stop(key);
        }
    }

    /// <summary>The timer of a transmission fired: under the lock the queue decides; the send, the log and the owner run outside it.</summary>
    internal void Retransmit(Transmission transmission)
    {
        RetransmissionQueue.Step step;
        lock (_gate)
        {
            step = _reliability.Advance(transmission);
        }

        if (step == RetransmissionQueue.Step.None)
        {
            return;
        }

        if (step == RetransmissionQueue.Step.GaveUp)
        {
            Log.GaveUp(_logger, transmission.Key.MessageId, transmission.Key.Remote, transmission.Retransmissions);

            // Told first: a transport with sessions may end this one for it (a DTLS client whose server restarted),
            // and then what is pending in the session, this message's exchange with it, fails with that reason.
            transmission.Channel.ReportUnacknowledged();
            transmission.Owner.OnGaveUp(transmission.Retransmissions);
            return;
        }

        CoapInstrumentation.RetransmissionCounter.Add(1);
        Log.Retransmitted(_logger, transmission.Key.Remote, transmission.Retransmissions, transmission.Retransmission.MaxRetransmit, transmission.Key.MessageId);
        TrySend(transmission.Channel, transmission.Datagram);
    }
}
