using System.Buffers.Binary;
using System.Net;
using System.Security.Cryptography;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Serialization;
using CoapNet.Transports;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace CoapNet.Messaging;

/// <summary>Handles a request received by a <see cref="CoapEndpoint"/>; answer through the exchange.</summary>
/// <param name="exchange">The request and the way to answer it.</param>
/// <remarks>
/// Runs on the transport's receive loop: answer at once, or hand the exchange to other threads
/// (call <see cref="CoapExchange.Accept"/> first when the answer will take a while). An exception
/// is logged and answered with 5.00.
/// </remarks>
public delegate void CoapRequestHandler(CoapExchange exchange);

/// <summary>
/// The CoAP messaging layer over a datagram transport (RFC 7252 section 4): confirmable delivery
/// with exponential back-off, deduplication, Message ID and token matching, piggybacked and
/// separate responses, Reset, CoAP ping and NSTART. The client and the server both stand on it.
/// </summary>
/// <remarks>
/// The endpoint owns its transport and disposes it. Every timer goes through the configured
/// <see cref="TimeProvider"/>. UDP sends complete without blocking, so the endpoint sends
/// synchronously: timers and the receive loop never need a state machine per datagram.
/// </remarks>
public sealed partial class CoapEndpoint : IDatagramReceiver, IAsyncDisposable, IDisposable
{
    private static readonly CoapMessageSerializer Serializer = CoapMessageSerializer.Udp;

    private readonly CoapMessageSerializer _sendSerializer;
    private readonly IDatagramTransport _transport;
    private readonly CoapTransmissionParameters _parameters;
    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private readonly Random _random;
    private readonly int _tokenLength;
    private readonly TimeSpan _responseTimeout;
    private readonly long _exchangeLifetimeTicks;
    private readonly long _nonLifetimeTicks;
    private readonly object _gate = new();
    private readonly DeduplicationCache _deduplication;
    private readonly CoapChannelTable _channels;
    private readonly Dictionary<MessageKey, Transmission> _unacknowledged = [];
    private readonly Dictionary<TokenKey, ClientExchange> _exchanges = [];
    private readonly ITimer _sweepTimer;
    private int _started;
    private int _disposed;

    /// <summary>Creates an endpoint over <paramref name="transport"/>; call <see cref="Start"/> to begin receiving.</summary>
    /// <param name="transport">The transport; the endpoint owns it from now on.</param>
    /// <param name="options">Parameters, limits, clock and logging; null for the defaults.</param>
    /// <exception cref="ArgumentException">An option is out of range; the message names it.</exception>
    public CoapEndpoint(IDatagramTransport transport, CoapEndpointOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(transport);
        options ??= new CoapEndpointOptions();
        options.Validate();
        _transport = transport;
        _sendSerializer = new CoapMessageSerializer(CoapFraming.Datagram, new CoapSerializerOptions { MaxMessageSize = options.MaxMessageSize });
        _parameters = options.TransmissionParameters;
        _time = options.TimeProvider;
        _logger = (options.LoggerFactory ?? NullLoggerFactory.Instance).CreateLogger("CoapNet.Messaging.CoapEndpoint");
        _random = options.Random ?? Random.Shared;
        _tokenLength = options.TokenLength;
        _responseTimeout = options.ResponseTimeout ?? _parameters.MaxTransmitWait;
        _exchangeLifetimeTicks = ToTicks(_parameters.ExchangeLifetime);
        _nonLifetimeTicks = ToTicks(_parameters.NonLifetime);
        _deduplication = new DeduplicationCache(options.DeduplicationCapacity);
        _channels = new CoapChannelTable(options.MaxPeers, _exchangeLifetimeTicks, _random);

        // Idle peers are swept once per ACK_TIMEOUT x 10; deduplication entries expire as new ones arrive.
        TimeSpan sweep = _parameters.AckTimeout * 10;
        _sweepTimer = _time.CreateTimer(static state => ((CoapEndpoint)state!).Sweep(), this, sweep, sweep);
    }

    /// <summary>The local endpoint of the transport.</summary>
    public IPEndPoint LocalEndPoint => _transport.LocalEndPoint;

    /// <summary>The transmission parameters in force.</summary>
    public CoapTransmissionParameters TransmissionParameters => _parameters;

    /// <summary>Receives requests; when null, confirmable requests are answered with RST.</summary>
    public CoapRequestHandler? RequestHandler { get; set; }

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

    /// <summary>Starts receiving. Call once.</summary>
    /// <exception cref="InvalidOperationException">The endpoint was already started.</exception>
    public void Start()
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        if (Interlocked.Exchange(ref _started, 1) != 0)
        {
            throw new InvalidOperationException("The endpoint is already started.");
        }

        _transport.Start(this);
    }

    /// <summary>
    /// Sends a request and waits for its response, synchronously. The endpoint assigns the Message ID
    /// and, when the request has none, a fresh random token.
    /// </summary>
    /// <param name="request">A CON or NON request.</param>
    /// <param name="remote">The server.</param>
    /// <param name="cancellationToken">Cancels the wait; the exchange is abandoned.</param>
    /// <returns>The response (piggybacked or separate).</returns>
    /// <exception cref="ArgumentException">The message is not a CON or NON request, or its token is in use toward this peer.</exception>
    /// <exception cref="CoapTimeoutException">No ACK after MAX_RETRANSMIT retransmissions, or no response within the response timeout.</exception>
    /// <exception cref="CoapResetException">The server answered with RST.</exception>
    /// <exception cref="OperationCanceledException">The token was canceled.</exception>
    public CoapMessage SendRequest(CoapMessage request, IPEndPoint remote, CancellationToken cancellationToken = default)
    {
        ClientExchange exchange = BeginRequest(request, remote, cancellationToken);

        // Not sync-over-async: the wait is for a completion that the receive loop or a timer signals,
        // on pool threads that never need the caller's synchronization context.
        return exchange.Completion.GetAwaiter().GetResult();
    }

    /// <inheritdoc cref="SendRequest(CoapMessage, IPEndPoint, CancellationToken)"/>
    public Task<CoapMessage> SendRequestAsync(CoapMessage request, IPEndPoint remote, CancellationToken cancellationToken = default)
        => BeginRequest(request, remote, cancellationToken).Completion;

    /// <summary>Sends a CoAP ping (an empty CON) and waits for the RST that answers it (RFC 7252 section 4.3).</summary>
    /// <param name="remote">The peer.</param>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <returns>The round-trip time.</returns>
    /// <exception cref="CoapTimeoutException">No answer after MAX_RETRANSMIT retransmissions.</exception>
    /// <exception cref="OperationCanceledException">The token was canceled.</exception>
    public TimeSpan Ping(IPEndPoint remote, CancellationToken cancellationToken = default)
        => BeginPing(remote, cancellationToken).GetAwaiter().GetResult();

    /// <inheritdoc cref="Ping(IPEndPoint, CancellationToken)"/>
    public Task<TimeSpan> PingAsync(IPEndPoint remote, CancellationToken cancellationToken = default)
        => BeginPing(remote, cancellationToken);

    /// <summary>Stops receiving, fails pending exchanges with <see cref="ObjectDisposedException"/> and closes the transport.</summary>
    public void Dispose()
    {
        if (BeginDispose())
        {
            _transport.Dispose();
        }
    }

    /// <inheritdoc cref="Dispose"/>
    /// <returns>A task that completes when the transport is closed.</returns>
    public async ValueTask DisposeAsync()
    {
        if (BeginDispose())
        {
            await _transport.DisposeAsync().ConfigureAwait(false);
        }
    }

    void IDatagramReceiver.OnDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote)
    {
        try
        {
            if (!Serializer.TryDeserialize(datagram, out CoapMessage? message, out CoapFormatError error))
            {
                RejectMalformed(datagram, remote, error);
                return;
            }

            Log.Received(_logger, remote, message);
            Dispatch(message, remote);
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            // Nothing a peer sends may stop the receive loop.
            _logger.LogError(e, "Processing a datagram from {Remote} failed", remote);
        }
    }

    internal static byte[] SerializeEmpty(CoapMessageType type, ushort messageId)
    {
        byte[] bytes = new byte[4];
        bytes[0] = (byte)(0x40 | ((int)type << 4));
        BinaryPrimitives.WriteUInt16BigEndian(bytes.AsSpan(2), messageId);
        return bytes;
    }

    internal byte[] SerializeForSend(CoapMessage message) => _sendSerializer.Serialize(message);

    internal void RecordReply(DeduplicationCache.Entry entry, byte[] reply)
    {
        lock (_gate)
        {
            entry.Reply = reply;
        }
    }

    internal void SendRaw(byte[] datagram, IPEndPoint remote, CoapMessage? message)
    {
        if (!TrySend(datagram, remote))
        {
            return;
        }

        if (message is not null)
        {
            Log.Sent(_logger, remote, message);
        }
        else if (_logger.IsEnabled(LogLevel.Debug))
        {
            Log.Sent(_logger, remote, Serializer.Deserialize(datagram));
        }
    }

    // A failed send is logged, never thrown: the retransmission timer (for CON) is the recovery.
    private bool TrySend(byte[] datagram, IPEndPoint remote)
    {
        try
        {
            _transport.Send(datagram, remote);
            return true;
        }
        catch (Exception e) when (e is System.Net.Sockets.SocketException or ObjectDisposedException)
        {
            Log.SendFailed(_logger, e, remote);
            return false;
        }
    }

    /// <summary>A separate response (CON, retransmitted until acknowledged) or a response to a NON request.</summary>
    internal void SendSeparateResponse(CoapMessage response, IPEndPoint remote)
    {
        byte[] bytes;
        lock (_gate)
        {
            response.MessageId = _channels.GetOrCreate(remote, _time.GetTimestamp()).NextMessageId();
            bytes = _sendSerializer.Serialize(response);
            if (response.Type == CoapMessageType.Confirmable)
            {
                StartTransmission(new MessageKey(remote, response.MessageId), bytes, new ServerResponseOwner(this, remote, response.MessageId));
            }
        }

        SendRaw(bytes, remote, response);
    }

    private long ToTicks(TimeSpan span) => (long)(span.TotalSeconds * _time.TimestampFrequency);

    private bool BeginDispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return false;
        }

        _sweepTimer.Dispose();
        List<ClientExchange> pending;
        List<PingOwner> pings = [];
        lock (_gate)
        {
            pending = [.. _exchanges.Values];
            foreach (Transmission transmission in _unacknowledged.Values)
            {
                transmission.Done = true;
                transmission.Timer?.Dispose();
                if (transmission.Owner is PingOwner ping)
                {
                    pings.Add(ping);
                }
            }

            _unacknowledged.Clear();
        }

        foreach (ClientExchange exchange in pending)
        {
            exchange.Fail(new ObjectDisposedException(nameof(CoapEndpoint), "The endpoint was disposed before the response arrived."));
        }

        // A pending ping is not in _exchanges; nothing else could ever complete it now.
        foreach (PingOwner ping in pings)
        {
            ping.Fail(new ObjectDisposedException(nameof(CoapEndpoint), "The endpoint was disposed before the ping was answered."));
        }

        return true;
    }

    private void Sweep()
    {
        lock (_gate)
        {
            _channels.Sweep(_time.GetTimestamp());
        }
    }

    /// <summary>RFC 7252 sections 4.2 and 4.3: a malformed CON is rejected with RST; anything else malformed is dropped.</summary>
    private void RejectMalformed(ReadOnlySpan<byte> datagram, IPEndPoint remote, CoapFormatError error)
    {
        // RFC 7252 section 3: a message with an unknown version is silently ignored, so no RST.
        bool confirmable = error.Reason != CoapFormatErrorReason.UnsupportedVersion
            && datagram.Length >= 4 && datagram[0] >> 6 == 1 && ((datagram[0] >> 4) & 3) == (int)CoapMessageType.Confirmable;
        Log.Malformed(_logger, datagram.Length, remote, error, confirmable ? "RST" : "silence");
        if (confirmable)
        {
            SendRaw(SerializeEmpty(CoapMessageType.Reset, BinaryPrimitives.ReadUInt16BigEndian(datagram[2..])), remote, null);
        }
    }

    private void Dispatch(CoapMessage message, IPEndPoint remote)
    {
        CoapCode code = message.Code;
        switch (message.Type)
        {
            case CoapMessageType.Confirmable when code.IsEmpty:
                // RFC 7252 section 4.3: an empty CON is a ping; the answer is RST.
                SendRaw(SerializeEmpty(CoapMessageType.Reset, message.MessageId), remote, null);
                break;
            case CoapMessageType.Confirmable or CoapMessageType.NonConfirmable when code.IsRequest:
                OnRequest(message, remote);
                break;
            case CoapMessageType.Confirmable or CoapMessageType.NonConfirmable when code.IsResponse:
                OnResponse(message, remote);
                break;
            case CoapMessageType.Confirmable:
                // A signaling or reserved-class code cannot be processed over UDP.
                SendRaw(SerializeEmpty(CoapMessageType.Reset, message.MessageId), remote, null);
                break;
            case CoapMessageType.Acknowledgement when !code.IsRequest:
            case CoapMessageType.Reset when code.IsEmpty:
                OnAcknowledgementOrReset(message, remote);
                break;
            default:
                Log.Ignored(_logger, message, remote, "no processing rule applies (RFC 7252 section 4)");
                break;
        }
    }

    private void OnRequest(CoapMessage request, IPEndPoint remote)
    {
        bool confirmable = request.Type == CoapMessageType.Confirmable;
        DeduplicationCache.Entry entry;
        byte[]? reply;
        bool duplicate;
        lock (_gate)
        {
            duplicate = _deduplication.TryGetOrAdd(remote, request.MessageId, _time.GetTimestamp(), confirmable ? _exchangeLifetimeTicks : _nonLifetimeTicks, out entry);
            reply = entry.Reply;
        }

        // Sent outside the lock, like every send.
        if (duplicate)
        {
            if (confirmable && reply is not null)
            {
                // RFC 7252 section 4.5: a duplicate CON gets the same ACK (or RST) again, and no second handler call.
                Log.Duplicate(_logger, remote, request.MessageId);
                SendRaw(reply, remote, null);
            }

            return;
        }

        CoapRequestHandler? handler = RequestHandler;
        if (handler is null)
        {
            if (confirmable)
            {
                reply = SerializeEmpty(CoapMessageType.Reset, request.MessageId);
                RecordReply(entry, reply);
                SendRaw(reply, remote, null);
            }

            return;
        }

        CoapExchange exchange = new(this, request, remote, entry);
        try
        {
            handler(exchange);
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            Log.HandlerFailed(_logger, e, request, remote);
            if (!exchange.HasResponded)
            {
                exchange.Respond(new CoapMessage { Code = CoapCode.InternalServerError });
            }
        }
    }

    private void OnResponse(CoapMessage response, IPEndPoint remote)
    {
        bool confirmable = response.Type == CoapMessageType.Confirmable;
        ClientExchange? exchange;
        byte[]? reply = null;
        bool duplicate;
        lock (_gate)
        {
            duplicate = _deduplication.TryGetOrAdd(remote, response.MessageId, _time.GetTimestamp(), confirmable ? _exchangeLifetimeTicks : _nonLifetimeTicks, out DeduplicationCache.Entry entry);
            if (duplicate)
            {
                reply = confirmable ? entry.Reply : null;
                exchange = null;
            }
            else
            {
                _exchanges.TryGetValue(TokenKey.From(remote, response.Token.Span), out exchange);
                if (confirmable)
                {
                    // RFC 7252 section 5.3.2: a CON response that matches no request is rejected with RST; otherwise ACKed.
                    reply = SerializeEmpty(exchange is null ? CoapMessageType.Reset : CoapMessageType.Acknowledgement, response.MessageId);
                    entry.Reply = reply;
                }
            }
        }

        // Sent outside the lock, like every send.
        if (duplicate)
        {
            if (reply is not null)
            {
                Log.Duplicate(_logger, remote, response.MessageId);
                SendRaw(reply, remote, null);
            }

            return;
        }

        if (reply is not null)
        {
            SendRaw(reply, remote, null);
        }

        if (exchange is null)
        {
            Log.Ignored(_logger, response, remote, "no request with this token is outstanding");
            return;
        }

        exchange.OnResponse(response);
    }

    private void OnAcknowledgementOrReset(CoapMessage message, IPEndPoint remote)
    {
        Transmission? transmission;
        lock (_gate)
        {
            if (_unacknowledged.TryGetValue(new MessageKey(remote, message.MessageId), out transmission))
            {
                StopTransmission(transmission);
            }
        }

        if (transmission is null)
        {
            // RFC 7252 section 4.2: an ACK or RST that matches nothing is silently ignored.
            Log.Ignored(_logger, message, remote, "it matches no outstanding confirmable message");
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

    private ClientExchange BeginRequest(CoapMessage request, IPEndPoint remote, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(request);
        ArgumentNullException.ThrowIfNull(remote);
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        if (!request.Code.IsRequest)
        {
            throw new ArgumentException($"{request.Code} is not a request method.", nameof(request));
        }

        if (request.Type is not (CoapMessageType.Confirmable or CoapMessageType.NonConfirmable))
        {
            throw new ArgumentException("A request is sent as CON or NON (RFC 7252 section 2.1).", nameof(request));
        }

        // Fail fast, on the caller's thread, for a message that cannot be serialized (too large, ...).
        _sendSerializer.GetSerializedLength(request);

        ClientExchange exchange;
        bool startNow;
        lock (_gate)
        {
            long now = _time.GetTimestamp();
            CoapChannel channel = _channels.GetOrCreate(remote, now);
            TokenKey key;
            if (request.Token.IsEmpty)
            {
                // RFC 9175 section 4.2: tokens are random and never reused while in use.
                byte[] token = new byte[_tokenLength];
                do
                {
                    RandomNumberGenerator.Fill(token);
                    key = TokenKey.From(remote, token);
                }
                while (_exchanges.ContainsKey(key));
                request.Token = token;
            }
            else
            {
                key = TokenKey.From(remote, request.Token.Span);
                if (_exchanges.ContainsKey(key))
                {
                    throw new ArgumentException("A request with this token is already outstanding toward this peer (RFC 7252 section 5.3.1).", nameof(request));
                }
            }

            exchange = new ClientExchange(this, request, remote, channel, key);
            _exchanges.Add(key, exchange);
            startNow = channel.TryTakeSlot(_parameters.NStart, exchange.StartAction);
        }

        exchange.RegisterCancellation(cancellationToken);
        if (startNow)
        {
            exchange.StartAction();
        }

        return exchange;
    }

    private Task<TimeSpan> BeginPing(IPEndPoint remote, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(remote);
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        PingOwner ping;
        byte[] bytes;
        lock (_gate)
        {
            ushort messageId = _channels.GetOrCreate(remote, _time.GetTimestamp()).NextMessageId();
            bytes = SerializeEmpty(CoapMessageType.Confirmable, messageId);
            ping = new PingOwner(this, remote, messageId, _time.GetTimestamp());
            StartTransmission(new MessageKey(remote, messageId), bytes, ping);
        }

        ping.RegisterCancellation(cancellationToken);
        if (!ping.Completion.IsCompleted)
        {
            // Not when the token was already canceled: the registration has just ended the ping.
            SendRaw(bytes, remote, null);
        }

        return ping.Completion;
    }

    /// <summary>Registers a CON and arms its first timeout, random in [ACK_TIMEOUT, ACK_TIMEOUT x ACK_RANDOM_FACTOR] (RFC 7252 section 4.2). Caller holds the lock.</summary>
    private Transmission StartTransmission(MessageKey key, byte[] datagram, ITransmissionOwner owner)
    {
        TimeSpan initial = _parameters.AckTimeout * (1 + (_random.NextDouble() * (_parameters.AckRandomFactor - 1)));
        Transmission transmission = new(key, datagram, owner, initial);
        _unacknowledged[key] = transmission;
        transmission.Timer = _time.CreateTimer(
            static state =>
            {
                (CoapEndpoint endpoint, Transmission t) = ((CoapEndpoint, Transmission))state!;
                endpoint.Retransmit(t);
            },
            (this, transmission),
            initial,
            Timeout.InfiniteTimeSpan);
        return transmission;
    }

    private void Retransmit(Transmission transmission)
    {
        bool gaveUp = false;
        lock (_gate)
        {
            if (transmission.Done)
            {
                return;
            }

            if (transmission.Retransmissions >= _parameters.MaxRetransmit)
            {
                StopTransmission(transmission);
                gaveUp = true;
            }
            else
            {
                // RFC 7252 section 4.2: retransmit and double the timeout.
                transmission.Retransmissions++;
                transmission.Timeout *= 2;
                transmission.Timer?.Change(transmission.Timeout, Timeout.InfiniteTimeSpan);
            }
        }

        if (gaveUp)
        {
            Log.GaveUp(_logger, transmission.Key.MessageId, transmission.Key.Remote, transmission.Retransmissions);
            transmission.Owner.OnGaveUp(transmission.Retransmissions);
            return;
        }

        Log.Retransmitted(_logger, transmission.Key.Remote, transmission.Retransmissions, _parameters.MaxRetransmit, transmission.Key.MessageId);
        TrySend(transmission.Datagram, transmission.Key.Remote);
    }

    /// <summary>Ends a transmission: acknowledged, reset, given up, or its exchange completed or was canceled. Caller holds the lock.</summary>
    private void StopTransmission(Transmission? transmission)
    {
        if (transmission is null || transmission.Done)
        {
            return;
        }

        transmission.Done = true;
        transmission.Timer?.Dispose();
        _unacknowledged.Remove(transmission.Key);
    }
}
