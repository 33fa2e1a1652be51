using System.Security.Cryptography;
using CoapNet.Channels;
using CoapNet.Messages;
using Microsoft.Extensions.Logging;

namespace CoapNet.Messaging;

/// <summary>
/// The exchange layer, shared by every transport: tokens, matching responses to requests by peer and
/// token (RFC 7252 section 5.3.2, RFC 8323 section 3.3), response timeouts, and the hand-off of
/// received requests to the stages and the request handler. It knows nothing of Message IDs,
/// acknowledgements or connections: those belong to the layer below.
/// </summary>
/// <remarks>One lock guards the table of outstanding requests; no lower layer is called while it is held.</remarks>
internal sealed partial class ExchangeLayer : IExchangeLayer
{
    private readonly IMessageLayer _lower;
    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private readonly int _tokenLength;
    private readonly CoapPaths _paths;
    private readonly TimeSpan _responseTimeout;
    private readonly CoapStage[] _stages;
    private readonly string[] _names;

    /// <summary>True when requests and responses pass through stages (block-wise, Observe) here.</summary>
    internal bool HasStages => _stages.Length > 0;

    // The continuation each stage calls, built once: a lambda per request and stage cost two allocations
    // (closure and delegate) per stage on each of the four paths, a quarter of a request's bytes (issue 11).
    private readonly Action<CoapExchange>[] _receiveNext;
    private readonly Action<CoapExchange, CoapMessage>[] _sendNext;
    private readonly Action<CoapClientCall, CoapMessage>[] _requestNext;
    private readonly Action<CoapClientCall, CoapMessage>[] _responseNext;

    // From each position, the nearest stage that takes received requests going up (-1: none, the handler next) and the
    // nearest that takes responses going down (the chain's length: none, the layer below next): a built-in stage that
    // would only pass them on is gone past without its hop (CoapStage.UsedServerPaths).
    private readonly int[] _requestsFrom;
    private readonly int[] _responsesFrom;
    private readonly object _gate = new();
    private readonly Dictionary<TokenKey, ClientExchange> _exchanges;

    // Random bytes for tokens, drawn from the system's CSPRNG 256 at a time (see NextRandom); guarded by _gate.
    private readonly byte[] _random = new byte[256];
    private int _randomLeft;

    // The sequence number of the next short token (a path's TokenLength below 4, RFC 9175 section 4.2); guarded by _gate.
    private ulong _nextShortToken;
    private int _disposed;

    /// <param name="lower">The layer below.</param>
    /// <param name="options">Token length, response timeout, clock.</param>
    /// <param name="logger">Where handler and stage failures are logged.</param>
    /// <param name="stages">The chain, from the application down; each stage joins this layer's chain, once.</param>
    /// <param name="names">Each stage's name, for the error that refuses a stage already in a chain.</param>
    /// <exception cref="ArgumentException">A stage is already in a chain (this one's or another endpoint's).</exception>
    public ExchangeLayer(IMessageLayer lower, CoapEndpointOptions options, ILogger logger, CoapStage[] stages, string[] names)
    {
        _lower = lower;
        _time = options.TimeProvider;
        _logger = logger;
        _tokenLength = options.TokenLength;
        _paths = CoapPaths.From(options.Paths);
        _responseTimeout = options.ResponseTimeout ?? options.TransmissionParameters.MaxTransmitWait;
        _stages = stages;
        _names = names;

        // RFC 7252 section 9.1.2: a response matches in its request's session; another policy is an opt-in. Strict keeps
        // the default equality, so the default path costs what it always did.
        _exchanges = SessionMatchingComparer.For(options.SessionMatching) is { } sessions ? new(new PeerScopedKeyComparer<TokenKey>(sessions)) : [];
        _receiveNext = new Action<CoapExchange>[stages.Length];
        _sendNext = new Action<CoapExchange, CoapMessage>[stages.Length];
        _requestNext = new Action<CoapClientCall, CoapMessage>[stages.Length];
        _responseNext = new Action<CoapClientCall, CoapMessage>[stages.Length];
        for (int i = 0; i < stages.Length; i++)
        {
            stages[i].Join(this, i, names[i]);
            int index = i;
            _receiveNext[i] = next => ReceiveThroughStages(index - 1, next);
            _sendNext[i] = (e, r) => SendResponseThroughStages(index + 1, e, r);
            _requestNext[i] = (call, r) => SendRequestThroughStages(index + 1, (ClientExchange)call, r);
            _responseNext[i] = (call, r) => ReceiveResponseThroughStages(index - 1, (ClientExchange)call, r);
        }

        _requestsFrom = new int[stages.Length];
        _responsesFrom = new int[stages.Length];
        for (int i = 0, up = -1; i < stages.Length; i++)
        {
            up = stages[i].UsedServerPaths(lower.IsReliable).HasFlag(ServerPaths.Requests) ? i : up;
            _requestsFrom[i] = up;
        }

        for (int i = stages.Length - 1, down = stages.Length; i >= 0; i--)
        {
            down = stages[i].UsedServerPaths(lower.IsReliable).HasFlag(ServerPaths.Responses) ? i : down;
            _responsesFrom[i] = down;
        }
    }

    /// <summary>Receives requests; when null, requests are rejected by the layer below (RST for a CON over UDP).</summary>
    public CoapRequestHandler? RequestHandler { get; set; }

    /// <summary>The number of requests awaiting a response.</summary>
    public int OutstandingCount
    {
        get
        {
            lock (_gate)
            {
                return _exchanges.Count;
            }
        }
    }

    /// <summary>Sends a request through the layers below; completes with the response.</summary>
    public Task<CoapMessage> SendAsync(CoapMessage request, CoapPeer peer, CancellationToken cancellationToken)
        => SendAsync(request, peer, null, cancellationToken);

    /// <summary>Sends a request whose block-wise transfer streams its body or reports progress (<paramref name="transfer"/>); completes with the response.</summary>
    public Task<CoapMessage> SendAsync(CoapMessage request, CoapPeer peer, Blockwise.BlockTransfer? transfer, CancellationToken cancellationToken)
    {
        Validate(request, peer);
        return Begin(request, peer, null, cancellationToken, null, null, null, CoapExpectedResponses.One, transfer).Completion;
    }

    /// <summary>
    /// Sends a request whose exchange carries more than one response (RFC 7641 notifications): the task
    /// completes with the first; every later response with the same token passes the stages and goes to
    /// <paramref name="laterResponses"/> until <paramref name="cancellationToken"/> ends the exchange,
    /// after which a further response matches nothing (and a CON one gets RST below). A failure after
    /// the first response (the connection lost, a stage failing) goes to <paramref name="failedLater"/>.
    /// </summary>
    public Task<CoapMessage> SendForManyResponsesAsync(CoapMessage request, CoapPeer peer, Action<CoapMessage> laterResponses, CancellationToken cancellationToken, Action<Exception>? failedLater = null)
    {
        Validate(request, peer);
        ArgumentNullException.ThrowIfNull(laterResponses);
        ClientExchange exchange = Begin(request, peer, new ManyResponses(laterResponses, failedLater), cancellationToken, null, null, null, CoapExpectedResponses.Several);
        return exchange.Completion;
    }

    /// <inheritdoc/>
    public void OnRequest(CoapExchange exchange)
    {
        CoapRequestHandler? handler = RequestHandler;
        if (handler is null)
        {
            _lower.Reject(exchange);
            return;
        }

        if (_stages.Length > 0)
        {
            try
            {
                ReceiveThroughStages(_stages.Length - 1, exchange);
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                // A stage that fails on a request fails that request, as a handler's exception does, never the receive loop.
                Log.StageFailed(_logger, e, exchange.Request, exchange.Peer);
                AnswerFailure(exchange);
            }

            return;
        }

        Invoke(handler, exchange);
    }

    /// <inheritdoc/>
    public bool OnResponse(CoapPeer peer, CoapMessage response)
    {
        ClientExchange? exchange;
        lock (_gate)
        {
            _exchanges.TryGetValue(TokenKey.From(peer, response.Token.Span), out exchange);
        }

        if (exchange is null)
        {
            return false;
        }

        if (FindUnprocessedCriticalOption(response) is CoapOptionNumber unprocessed)
        {
            // RFC 7252 section 5.4.1: such a response is rejected (RST for a CON, below) and the caller told why.
            exchange.Fail(new CoapBadOptionException(
                $"{peer.EndPoint} answered {exchange.Request.Code} with {response.Code} carrying critical option {Describe(unprocessed)}, which this client does not process; the response was rejected (RFC 7252 section 5.4.1).",
                unprocessed,
                peer.EndPoint));
            return false;
        }

        exchange.OnResponse(response);
        return true;
    }

    /// <inheritdoc/>
    public void OnPeerLost(CoapPeer peer, Exception reason)
    {
        List<ClientExchange> lost = [];
        lock (_gate)
        {
            foreach (KeyValuePair<TokenKey, ClientExchange> pair in _exchanges)
            {
                if (pair.Key.Peer.Equals(peer))
                {
                    lost.Add(pair.Value);
                }
            }
        }

        foreach (ClientExchange exchange in lost)
        {
            exchange.Fail(reason);
        }

        foreach (CoapStage stage in _stages)
        {
            stage.OnPeerLost(peer);
        }
    }

    /// <summary>
    /// Sends a response down through the stages to the layer below: from the application's side, or, for a stage's
    /// own answer, through the stages below <paramref name="from"/> only.
    /// </summary>
    public void SendResponse(CoapExchange exchange, CoapMessage response, CoapStage? from = null)
        => SendResponseThroughStages(from is null ? 0 : IndexOf(from) + 1, exchange, response);

    /// <summary>The position of <paramref name="stage"/> in this layer's chain, from the application down.</summary>
    /// <param name="stage">A stage a caller named.</param>
    /// <param name="parameter">The caller's name for it, for the error.</param>
    /// <exception cref="ArgumentException">The stage is null or not one of this layer's.</exception>
    internal int IndexOf(CoapStage stage, string parameter = "stage")
    {
        ArgumentNullException.ThrowIfNull(stage, parameter);
        return ReferenceEquals(stage.Layer, this)
            ? stage.Index
            : throw new ArgumentException($"The stage {stage.GetType().Name} is not one of the stages of the endpoint this call goes through.", parameter);
    }

    /// <summary>The stage registered as <paramref name="name"/> in this layer's chain, for tests inside the library.</summary>
    /// <exception cref="ArgumentException">No stage has that name here (Q-Block when it is off, or a name never added).</exception>
    internal CoapStage StageNamed(string name)
    {
        int index = Array.IndexOf(_names, name);
        return index >= 0 ? _stages[index] : throw new ArgumentException($"No stage named '{name}' in this chain.", nameof(name));
    }

    /// <summary>Fails every outstanding request with <see cref="ObjectDisposedException"/>; later sends throw it.</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        List<ClientExchange> pending;
        lock (_gate)
        {
            pending = [.. _exchanges.Values];
        }

        foreach (ClientExchange exchange in pending)
        {
            exchange.Fail(new ObjectDisposedException(nameof(CoapEndpoint), "The endpoint was disposed before the response arrived."));
        }
    }

    /// <summary>
    /// The first critical option of <paramref name="response"/> that no layer or stage processes: the
    /// library's recognized critical options (<see cref="RecognizedOptions"/>; the request options among them
    /// are harmless in a response), and those a stage says it processes.
    /// </summary>
    private CoapOptionNumber? FindUnprocessedCriticalOption(CoapMessage response)
    {
        if (!response.HasOptions)
        {
            return null;
        }

        CoapOptionReader options = response.ReadOptions();
        while (options.MoveNext())
        {
            CoapOptionNumber number = options.Number;
            if (number.IsCritical() && !IsProcessed(number))
            {
                return number;
            }
        }

        return null;
    }

    private bool IsProcessed(CoapOptionNumber number)
    {
        if (RecognizedOptions.IsRecognizedCritical(number))
        {
            return true;
        }

        foreach (CoapStage stage in _stages)
        {
            if (stage.Processes(number))
            {
                return true;
            }
        }

        return false;
    }

    private static string Describe(CoapOptionNumber number)
        => CoapOptionDefinition.TryGet(number, out CoapOptionDefinition? definition)
            ? $"{definition.Name} ({(ushort)number})"
            : ((ushort)number).ToString(System.Globalization.CultureInfo.InvariantCulture);

    private static void Validate(CoapMessage request, CoapPeer peer)
    {
        ArgumentNullException.ThrowIfNull(request);
        ArgumentNullException.ThrowIfNull(peer);
        if (!request.Code.IsRequest)
        {
            throw new ArgumentException($"{request.Code} is not a request method.", nameof(request));
        }

        if (request.Type is not (CoapMessageType.Confirmable or CoapMessageType.NonConfirmable))
        {
            throw new ArgumentException("A request is sent as CON or NON (RFC 7252 section 2.1).", nameof(request));
        }
    }

    private void ReceiveThroughStages(int index, CoapExchange exchange)
    {
        if (index >= 0)
        {
            index = _requestsFrom[index];
        }

        if (index < 0)
        {
            // Read again rather than kept on every exchange: an endpoint's handler is set once, before it starts.
            if (RequestHandler is { } handler)
            {
                Invoke(handler, exchange);
            }
            else
            {
                _lower.Reject(exchange);
            }

            return;
        }

        _stages[index].ReceiveRequest(exchange, _receiveNext[index]);
    }

    private void SendResponseThroughStages(int index, CoapExchange exchange, CoapMessage response)
    {
        if (index < _stages.Length)
        {
            index = _responsesFrom[index];
        }

        if (index == _stages.Length)
        {
            exchange.SendBelowStages(response);
            return;
        }

        _stages[index].SendResponse(exchange, response, _sendNext[index]);
    }

    private void Invoke(CoapRequestHandler handler, CoapExchange exchange)
    {
        try
        {
            handler(exchange);
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            Log.HandlerFailed(_logger, e, exchange.Request, exchange.Peer);
            if (!exchange.HasResponded)
            {
                exchange.Respond(new CoapMessage { Code = CoapCode.InternalServerError });
            }
        }
    }

    /// <summary>5.00 for a request a stage failed on, unless it was answered; a stage that fails again on the way down is logged.</summary>
    private void AnswerFailure(CoapExchange exchange)
    {
        if (exchange.HasResponded)
        {
            return;
        }

        try
        {
            exchange.Respond(new CoapMessage { Code = CoapCode.InternalServerError });
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            Log.StageFailed(_logger, e, exchange.Request, exchange.Peer);
        }
    }

    /// <summary>
    /// Starts a request. Every request passes every stage below the one that sent it, in order: the caller's
    /// (and an observation's registration) all of them, a stage's follow-up those below that stage (block-wise
    /// may send only a first Block1 block, RFC 7959 section 2.5, and the rest as follow-ups); then it is
    /// registered under a fresh token (or its own) and handed to the layer below.
    /// </summary>
    private ClientExchange Begin(CoapMessage request, CoapPeer peer, ManyResponses? laterResponses, CancellationToken cancellationToken, ClientExchange? parent, CoapStage? origin, Action<CoapMessage>? onFollowUpResponse, CoapExpectedResponses expected, Blockwise.BlockTransfer? transfer = null)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, typeof(CoapEndpoint));
        int from = origin is null ? 0 : IndexOf(origin) + 1;
        ClientExchange exchange = new(this, request, peer, laterResponses, parent, from - 1, onFollowUpResponse, expected, cancellationToken);
        if (transfer is not null)
        {
            // What the caller asked of the transfer (a streamed body, progress) is a feature of the call; block-wise reads it.
            exchange.Features.Set(transfer);
        }

        if (expected == CoapExpectedResponses.Several)
        {
            parent?.AddOpenFollowUp(exchange);
        }

        if (parent is null && _stages.Length > 0 && MayNotFitBase(request, transfer)
            && !_lower.LimitsKnown(peer, failure => ResumeWhenLimitsKnown(exchange, request, failure)))
        {
            // RFC 8323 sections 5.3.1 and 6: the stages size a body by the peer's Max-Message-Size and BERT, which
            // its CSM tells; until it arrives the request waits here (it would wait for it below anyway).
            exchange.RegisterCancellation();
            return exchange;
        }

        SendRequestThroughStages(from, exchange, request);
        return exchange;
    }

    /// <summary>
    /// A body a connection may not take in one message before its peer's CSM says how much it takes: more than a
    /// Block1 block of 1024 bytes, or read from a stream. Everyday requests never wait, and over datagrams the layer
    /// below knows its limits at once.
    /// </summary>
    private static bool MayNotFitBase(CoapMessage request, Blockwise.BlockTransfer? transfer)
        => request.Payload.Length > 1024 || transfer?.Source is not null;

    /// <summary>A request that waited for its peer's limits goes on now, or fails with the connection's failure.</summary>
    private void ResumeWhenLimitsKnown(ClientExchange exchange, CoapMessage request, Exception? failure)
    {
        if (exchange.IsFinished)
        {
            // Canceled while it waited: nothing was registered or sent.
            return;
        }

        if (failure is not null)
        {
            exchange.Fail(failure);
            return;
        }

        try
        {
            SendRequestThroughStages(0, exchange, request);
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            // What the caller's thread would have been told at once (too large, disposed, ...) fails the call instead.
            exchange.Fail(e);
        }
    }

    private void SendRequestThroughStages(int index, ClientExchange exchange, CoapMessage request)
    {
        exchange.Passing(index, request);
        if (index == _stages.Length)
        {
            Register(exchange, request);
            return;
        }

        _stages[index].SendRequest(exchange, request, _requestNext[index]);
    }

    /// <summary>Registers <paramref name="request"/>, what goes on the wire for <paramref name="exchange"/>, and sends it.</summary>
    private void Register(ClientExchange exchange, CoapMessage request)
    {
        // Fail fast, on the caller's thread, for a message that cannot be sent (too large, ...).
        CheckSize(exchange.Peer, request, throwWhenTooLarge: true);
        lock (_gate)
        {
            if (exchange.IsFinished)
            {
                // Canceled before it was registered (while it waited for its peer's limits): nothing to register or send.
                return;
            }

            TokenKey key;
            if (request.Token.IsEmpty)
            {
                byte[] token;
                int length = _paths.TokenLength(exchange.Peer) ?? _tokenLength;
                do
                {
                    token = length < MinRandomTokenLength ? NextShortToken(length) : NextRandomToken(length);
                    key = TokenKey.From(exchange.Peer, token);
                }
                while (_exchanges.ContainsKey(key));
                request.Token = token;
            }
            else
            {
                key = TokenKey.From(exchange.Peer, request.Token.Span);
                if (_exchanges.ContainsKey(key))
                {
                    throw new ArgumentException("A request with this token is already outstanding toward this peer (RFC 7252 section 5.3.1).", nameof(request));
                }
            }

            exchange.Open(request, key);
            _exchanges.Add(key, exchange);
        }

        exchange.RegisterCancellation();
        if (!exchange.Completion.IsCompleted)
        {
            _lower.SendRequest(exchange);
        }
    }

    /// <summary>RFC 7252 section 5.3.1: a token on the general Internet carries at least 32 bits of randomness; shorter ones are counted.</summary>
    private const int MinRandomTokenLength = 4;

    /// <summary>The token length of the next request to <paramref name="peer"/>: its path's, the short counter's now, or the endpoint's.</summary>
    internal int TokenLengthFor(CoapPeer peer)
    {
        int length = _paths.TokenLength(peer) ?? _tokenLength;
        if (length >= MinRandomTokenLength)
        {
            return length;
        }

        lock (_gate)
        {
            return Math.Max(length, BytesOf(_nextShortToken));
        }
    }

    /// <summary>RFC 9175 section 4.2: a random token, never reused while in use (the caller checks the table).</summary>
    private byte[] NextRandomToken(int length)
    {
        byte[] token = new byte[length];
        NextRandom(token);
        return token;
    }

    /// <summary>
    /// A token too short to be unguessable: the next value of the endpoint's sequence number (RFC 9175 section 4.2 suggests
    /// one), big-endian in <paramref name="length"/> bytes or as many more as the value needs, so the counter never wraps:
    /// tokens of different lengths differ, and a 64-bit counter is not used up. No token is ever sent twice by this
    /// endpoint, and so never twice within a security session. Called under <c>_gate</c>.
    /// </summary>
    private byte[] NextShortToken(int length)
    {
        // Checked: after 2^64 tokens (centuries at any rate) the endpoint fails the request rather than reuse one.
        ulong value = _nextShortToken;
        _nextShortToken = checked(value + 1);
        byte[] token = new byte[Math.Max(length, BytesOf(value))];
        for (int i = token.Length - 1; i >= 0; i--, value >>= 8)
        {
            token[i] = (byte)value;
        }

        return token;
    }

    /// <summary>How many bytes <paramref name="value"/> takes, at least 1.</summary>
    private static int BytesOf(ulong value) => Math.Max(1, 8 - (System.Numerics.BitOperations.LeadingZeroCount(value) / 8));

    /// <summary>
    /// Fills <paramref name="destination"/> (at most 8 bytes, a token) with bytes from the system's CSPRNG, as
    /// RFC 7252 section 5.3.1 and RFC 9175 section 4.2 ask of tokens, drawn 256 at a time: one call per request
    /// cost 3-4% of a busy client's CPU in the CSPRNG's per-call setup (issue 11, RESULTS.md). Each byte is
    /// used once. Called under <c>_gate</c>.
    /// </summary>
    private void NextRandom(Span<byte> destination)
    {
        if (_randomLeft < destination.Length)
        {
            RandomNumberGenerator.Fill(_random);
            _randomLeft = _random.Length;
        }

        _random.AsSpan(_random.Length - _randomLeft, destination.Length).CopyTo(destination);
        _randomLeft -= destination.Length;
    }

    /// <summary>The layer below's size check, with a token still to be assigned counted at its full length.</summary>
    private bool CheckSize(CoapPeer peer, CoapMessage request, bool throwWhenTooLarge)
    {
        // Measured with the token it will carry: Register draws one when the request has none yet.
        int tokenLength = request.Token.IsEmpty ? TokenLengthFor(peer) : request.Token.Length;
        if (!throwWhenTooLarge)
        {
            return _lower.Fits(peer, request, tokenLength);
        }

        _lower.CheckSendable(peer, request, tokenLength);
        return true;
    }

    private void Remove(ClientExchange exchange)
    {
        lock (_gate)
        {
            _exchanges.Remove(exchange.Key);
        }
    }

    /// <summary>
    /// A response to one of our requests on its way up: through the stages, from the layer's side, to the caller, or,
    /// for a stage's follow-up, through the stages below that stage to it.
    /// </summary>
    private void ReceiveResponseThroughStages(ClientExchange exchange, CoapMessage response) => ReceiveResponseThroughStages(_stages.Length - 1, exchange, response);

    private void ReceiveResponseThroughStages(int index, ClientExchange exchange, CoapMessage response)
    {
        if (index <= exchange.Origin)
        {
            exchange.Complete(response);
            return;
        }

        try
        {
            _stages[index].ReceiveResponse(exchange, response, _responseNext[index]);
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            // A stage that cannot make sense of a response fails the request with its reason, never the receive loop.
            exchange.Fail(e);
        }
    }

    /// <summary>Where the later responses of an exchange that carries many go, and its failure after the first.</summary>
    private sealed record ManyResponses(Action<CoapMessage> Later, Action<Exception>? FailedLater);

    private static partial class Log
    {
        [LoggerMessage(7, LogLevel.Error, "The request handler failed for {Message} from {Peer}")]
        public static partial void HandlerFailed(ILogger logger, Exception exception, CoapMessage message, CoapPeer peer);

        [LoggerMessage(8, LogLevel.Error, "A stage failed on {Message} from {Peer}; the request is answered 5.00")]
        public static partial void StageFailed(ILogger logger, Exception exception, CoapMessage message, CoapPeer peer);
    }
}
