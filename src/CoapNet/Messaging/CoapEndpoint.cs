using System.Net;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging.Datagram;
using CoapNet.Transports;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace CoapNet.Messaging;

/// <summary>Handles a request received by a <see cref="CoapEndpoint"/>; answer through the exchange.</summary>
/// <param name="exchange">The request and the way to answer it.</param>
/// <remarks>
/// Runs on the transport's receive path: answer at once, or hand the exchange to other threads
/// (call <see cref="CoapExchange.Accept"/> first when the answer will take a while). An exception
/// is logged and answered with 5.00.
/// </remarks>
public delegate void CoapRequestHandler(CoapExchange exchange);

/// <summary>
/// One local CoAP endpoint over one transport: the client and the server both stand on it. It is
/// the stack assembled: the exchange layer (tokens, matching, timeouts) and its stages over the
/// layer its transport needs; for a datagram transport that is the message layer of RFC 7252
/// section 4 (confirmable delivery with exponential back-off, deduplication, Message IDs, Reset,
/// ping, NSTART), over the datagram channels that parse and frame.
/// </summary>
/// <remarks>
/// The endpoint owns its transport and disposes it. Every timer goes through the configured
/// <see cref="TimeProvider"/>.
/// </remarks>
public sealed partial class CoapEndpoint : IAsyncDisposable, IDisposable
{
    private readonly IMessageLayer _lower;
    private readonly ExchangeLayer _exchanges;
    private readonly CoapTransmissionParameters _parameters;
    private readonly Blockwise.BlockwiseStage? _blockwise;
    private int _started;
    private int _disposed;

    /// <summary>Creates an endpoint over a datagram transport (UDP); call <see cref="Start"/> to begin receiving.</summary>
    /// <param name="transport">The transport; the endpoint owns it from now on.</param>
    /// <param name="options">Parameters, limits, clock and logging; null for the defaults.</param>
    /// <exception cref="ArgumentException">An option is out of range; the message names it.</exception>
    public CoapEndpoint(IDatagramTransport transport, CoapEndpointOptions? options = null)
        : this(CreateDatagramLayer(transport, ref options), options)
    {
    }

    /// <summary>Assembles the stack over <paramref name="lower"/>, the layer under the exchange layer.</summary>
    internal CoapEndpoint(IMessageLayer lower, CoapEndpointOptions? options)
    {
        ArgumentNullException.ThrowIfNull(lower);
        options ??= new CoapEndpointOptions();
        options.Validate();
        _lower = lower;
        _parameters = options.TransmissionParameters;
        ILogger logger = (options.LoggerFactory ?? NullLoggerFactory.Instance).CreateLogger("CoapNet.Messaging.CoapEndpoint");
        try
        {
            // Each endpoint makes its own stages: a stage keeps state for the exchanges of one endpoint only.
            (CoapStage[] stages, string[] names) = CoapStages.Create(options.StageRegistrations, new CoapStageContext(options, options.UploadCheck, options.Observers));
            _blockwise = Find<Blockwise.BlockwiseStage>(stages);
            _exchanges = new ExchangeLayer(lower, options, logger, stages, names);
        }
        catch
        {
            // The endpoint owns its transport from the start: a chain that cannot be made closes it.
            lower.Dispose();
            throw;
        }
    }

    /// <summary>The exchange layer, for the stages and tests inside the library.</summary>
    internal ExchangeLayer Exchanges => _exchanges;

    /// <summary>The block-wise stage (RFC 7959), for tests inside the library that look at what it holds.</summary>
    internal Blockwise.BlockwiseStage Blockwise => _blockwise ?? throw new InvalidOperationException("This endpoint has no block-wise stage.");

    /// <summary>The local endpoint of the transport.</summary>
    public IPEndPoint LocalEndPoint => _lower.LocalEndPoint;

    /// <summary>The URI scheme this endpoint speaks: "coap" over UDP, "coap+tcp" over TCP.</summary>
    public string Scheme => _lower.Scheme;

    /// <summary>The transmission parameters in force.</summary>
    public CoapTransmissionParameters TransmissionParameters => _parameters;

    /// <summary>Receives requests; when null, confirmable requests are answered with RST.</summary>
    public CoapRequestHandler? RequestHandler
    {
        get => _exchanges.RequestHandler;
        set => _exchanges.RequestHandler = value;
    }

    /// <summary>The number of messages the deduplication cache currently remembers (always 0 on a reliable transport, which needs none); for tests.</summary>
    internal int DeduplicationCount => _lower is DatagramMessageLayer datagrams ? datagrams.DeduplicationCount : 0;

    /// <summary>Starts receiving. Call once.</summary>
    /// <exception cref="InvalidOperationException">The endpoint was already started.</exception>
    public void Start()
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        if (Interlocked.Exchange(ref _started, 1) != 0)
        {
            throw new InvalidOperationException("The endpoint is already started.");
        }

        _lower.Start(_exchanges);
    }

    /// <summary>
    /// Sends a request and waits for its response, synchronously. The endpoint assigns the Message ID
    /// and, when the request has none, a fresh random token. A PUT, POST, FETCH, PATCH or iPATCH whose
    /// payload does not fit one message goes out in Block1 blocks (RFC 7959 section 2.5), and a response
    /// body that comes in Block2 blocks is joined; <paramref name="request"/> itself is then not sent or changed.
    /// </summary>
    /// <remarks>
    /// This returns the <see cref="CoapMessage"/> as the messaging layer matched it, where
    /// <see cref="Client.CoapClient.Send(CoapMessage, IPEndPoint, CancellationToken)"/> returns a
    /// <see cref="CoapResponse"/>, on purpose: the endpoint is the message layer the client and the server stand
    /// on, and its callers (a proxy, a gateway, a test peer) want the message itself (type, Message ID, token,
    /// every option) to inspect or forward. The client is the application's view: it wraps this message with the
    /// server's endpoint in a <see cref="CoapResponse"/> (<see cref="CoapResponse.Message"/> gives it back).
    /// </remarks>
    /// <param name="request">A CON or NON request.</param>
    /// <param name="remote">The server, reached over this endpoint's transport.</param>
    /// <param name="cancellationToken">Cancels the wait; the exchange is abandoned.</param>
    /// <returns>
    /// The response (piggybacked or separate). A request whose No-Response option suppresses every class
    /// (RFC 7967) completes once delivered with a 0.00 (Empty) message carrying its token: no response comes.
    /// </returns>
    /// <exception cref="ArgumentException">The message is not a CON or NON request, cannot be sent, or its token is in use toward this peer.</exception>
    /// <exception cref="CoapTimeoutException">No ACK after MAX_RETRANSMIT retransmissions, or no response within the response timeout.</exception>
    /// <exception cref="CoapResetException">The server answered with RST.</exception>
    /// <exception cref="OperationCanceledException">The token was canceled.</exception>
    public CoapMessage SendRequest(CoapMessage request, IPEndPoint remote, CancellationToken cancellationToken = default)
        => SendRequest(request, ToPeer(remote), cancellationToken);

    /// <inheritdoc cref="SendRequest(CoapMessage, IPEndPoint, CancellationToken)"/>
    public Task<CoapMessage> SendRequestAsync(CoapMessage request, IPEndPoint remote, CancellationToken cancellationToken = default)
        => SendRequestAsync(request, ToPeer(remote), cancellationToken);

    /// <summary>Sends a request to <paramref name="peer"/> and waits for its response, synchronously.</summary>
    /// <remarks>Returns the message, not a <see cref="CoapResponse"/>: see <see cref="SendRequest(CoapMessage, IPEndPoint, CancellationToken)"/>.</remarks>
    /// <param name="request">A CON or NON request.</param>
    /// <param name="peer">The server; its scheme must be this endpoint's.</param>
    /// <param name="cancellationToken">Cancels the wait; the exchange is abandoned.</param>
    /// <returns>The response; a 0.00 (Empty) message once delivered when the request's No-Response option suppresses every class (RFC 7967).</returns>
    /// <exception cref="ArgumentException">The message is not a CON or NON request, cannot be sent, its token is in use, or the peer's scheme is not this endpoint's.</exception>
    /// <exception cref="CoapTimeoutException">No acknowledgement or response in time.</exception>
    /// <exception cref="CoapResetException">The server answered with RST.</exception>
    /// <exception cref="OperationCanceledException">The token was canceled.</exception>
    public CoapMessage SendRequest(CoapMessage request, CoapPeer peer, CancellationToken cancellationToken = default)
    {
        // Not sync-over-async: the wait is for a completion that the receive loop or a timer signals,
        // on pool threads that never need the caller's synchronization context.
        return SendRequestAsync(request, peer, cancellationToken).GetAwaiter().GetResult();
    }

    /// <inheritdoc cref="SendRequest(CoapMessage, CoapPeer, CancellationToken)"/>
    public Task<CoapMessage> SendRequestAsync(CoapMessage request, CoapPeer peer, CancellationToken cancellationToken = default)
    {
        CheckPeer(peer);
        return _exchanges.SendAsync(request, peer, cancellationToken);
    }

    /// <summary>Sends a request whose block-wise transfer streams a body or reports progress (when <paramref name="transfer"/> is not null).</summary>
    internal Task<CoapMessage> SendRequestAsync(CoapMessage request, CoapPeer peer, Blockwise.BlockTransfer? transfer, CancellationToken cancellationToken)
    {
        CheckPeer(peer);
        return _exchanges.SendAsync(request, peer, transfer, cancellationToken);
    }

    /// <summary>
    /// Checks that a peer is alive: a CoAP ping (an empty CON answered by RST, RFC 7252 section 4.3)
    /// over UDP, a Ping signal answered by Pong (RFC 8323 section 5.4) over TCP.
    /// </summary>
    /// <param name="remote">The peer.</param>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <returns>The round-trip time.</returns>
    /// <exception cref="CoapTimeoutException">No answer in time.</exception>
    /// <exception cref="OperationCanceledException">The token was canceled.</exception>
    public TimeSpan Ping(IPEndPoint remote, CancellationToken cancellationToken = default)
        => PingAsync(remote, cancellationToken).GetAwaiter().GetResult();

    /// <inheritdoc cref="Ping(IPEndPoint, CancellationToken)"/>
    public Task<TimeSpan> PingAsync(IPEndPoint remote, CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        return _lower.PingAsync(ToPeer(remote), cancellationToken);
    }

    /// <summary>Pings <paramref name="peer"/>, in its session on a secure transport (the client's coaps ping).</summary>
    internal Task<TimeSpan> PingAsync(CoapPeer peer, CancellationToken cancellationToken)
    {
        CheckPeer(peer);
        return _lower.PingAsync(peer, cancellationToken);
    }

    /// <summary>Stops receiving, fails pending exchanges with <see cref="ObjectDisposedException"/> and closes the transport.</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            _exchanges.Dispose();
            _lower.Dispose();
        }
    }

    /// <inheritdoc cref="Dispose"/>
    /// <returns>A task that completes when the transport is closed.</returns>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            _exchanges.Dispose();
            await _lower.DisposeAsync().ConfigureAwait(false);
        }
    }

    private static T? Find<T>(CoapStage[] stages)
        where T : CoapStage
    {
        foreach (CoapStage stage in stages)
        {
            if (stage is T found)
            {
                return found;
            }
        }

        return null;
    }

    private static IMessageLayer CreateDatagramLayer(IDatagramTransport transport, ref CoapEndpointOptions? options)
    {
        ArgumentNullException.ThrowIfNull(transport);
        options ??= new CoapEndpointOptions();
        options.Validate();
        ILogger logger = (options.LoggerFactory ?? NullLoggerFactory.Instance).CreateLogger("CoapNet.Messaging.CoapEndpoint");
        return new DatagramMessageLayer(transport, options, logger);
    }

    private CoapPeer ToPeer(IPEndPoint remote)
    {
        ArgumentNullException.ThrowIfNull(remote);
        return new CoapPeer(_lower.Scheme, remote);
    }

    private void CheckPeer(CoapPeer peer)
    {
        ArgumentNullException.ThrowIfNull(peer);
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        if (!string.Equals(peer.Scheme, _lower.Scheme, StringComparison.Ordinal))
        {
            throw new ArgumentException($"This endpoint speaks {_lower.Scheme}; it cannot reach a {peer.Scheme} peer.", nameof(peer));
        }
    }
}
