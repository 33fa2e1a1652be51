using System.Net;
using CoapNet.Messaging;
using CoapNet.Transports;

namespace CoapNet.Server;

/// <summary>
/// Settings of a <see cref="CoapServer"/>: where it listens (<see cref="Listen(string, Action{CoapListenOptions}?)"/>), the
/// settings of its endpoints (<see cref="Endpoint"/>), its transports and connections, and its own limits. Hosting binds it
/// from the "Coap" configuration section, its endpoints from "Coap:Endpoints:{name}".
/// </summary>
/// <remarks>Set it before the server is created; later changes are not guaranteed to be seen.</remarks>
public sealed class CoapServerOptions
{
    private readonly List<CoapListenOptions> _listeners = [];

    /// <summary>
    /// The endpoints the server listens on, in the order they were added (<see cref="Listen(string, Action{CoapListenOptions}?)"/>
    /// and its overloads, or configuration's "Coap:Endpoints"). None (the default): coap://[::]:5683, UDP on every
    /// interface, dual-stack where the OS allows.
    /// </summary>
    public IReadOnlyList<CoapListenOptions> ListenOptions => _listeners;

    /// <summary>
    /// The transports the endpoints' schemes find (<see cref="CoapTransportRegistry.CreateDefault"/>: coap, coaps, coap+tcp,
    /// coaps+tcp); a package adds its own here.
    /// </summary>
    public CoapTransportRegistry Transports { get; } = CoapTransportRegistry.CreateDefault();

    /// <summary>The limits of every connection (RFC 8323): count, message size, timeouts, requests in flight.</summary>
    public CoapConnectionOptions Connections { get; set; } = new();

    /// <summary>
    /// The settings of every endpoint the server listens on (transmission parameters and retransmission, limits,
    /// deduplication, separate responses, block-wise, Echo, the clock and logging): the same type a client takes.
    /// </summary>
    public CoapEndpointOptions Endpoint { get; set; } = new();

    /// <summary>How the UDP sockets of the coap and coaps endpoints are set up (buffer sizes, sockets per port).</summary>
    public UdpTransportOptions Udp { get; set; } = new();

    /// <summary>How the TCP listeners of the coap+tcp and coaps+tcp endpoints buffer and close their connections.</summary>
    public TcpTransportOptions Tcp { get; set; } = new();

    /// <summary>
    /// Adds an endpoint at <paramref name="url"/>, such as "coap://[::]:5683", "coap+tcp://0.0.0.0:5683" or
    /// "coaps+tcp://[::]:5684": its scheme picks the transport (<see cref="Transports"/>), its host is an IP address
    /// ([::] for every interface), and a port left out is the scheme's default. Nothing is bound until the server starts.
    /// </summary>
    /// <param name="url">The endpoint's address, without a path.</param>
    /// <param name="configure">Configures the endpoint: middleware such as <c>UseTls</c>, its own settings; null for none.</param>
    /// <returns>These options.</returns>
    /// <exception cref="FormatException">The URL is not an endpoint address; the message quotes it and says what is wrong where.</exception>
    public CoapServerOptions Listen(string url, Action<CoapListenOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(url);
        return CoapAddress.TryParse(url, Transports, addressOnly: true, out CoapAddress? address, out string? error)
            ? Add(new CoapListenOptions(address), configure)
            : throw new FormatException(error);
    }

    /// <summary>Adds an endpoint of <paramref name="scheme"/> at <paramref name="endPoint"/>; see <see cref="Listen(string, Action{CoapListenOptions}?)"/>.</summary>
    /// <param name="scheme">The scheme, such as "coap" or "coap+tcp".</param>
    /// <param name="endPoint">The local address and port (0 for a free one).</param>
    /// <param name="configure">Configures the endpoint; null for nothing more.</param>
    /// <returns>These options.</returns>
    /// <exception cref="ArgumentException">The scheme is not a URI scheme.</exception>
    public CoapServerOptions Listen(string scheme, IPEndPoint endPoint, Action<CoapListenOptions>? configure = null)
        => Add(new CoapListenOptions(new CoapAddress(scheme, endPoint)), configure);

    /// <summary>
    /// Adds an endpoint over a datagram transport made ready (the tests' in-memory network, a socket set up your own
    /// way): it serves the transport's scheme at its local endpoint. The server owns it from its start on, starts it
    /// and disposes it.
    /// </summary>
    /// <param name="transport">The transport, not started.</param>
    /// <param name="configure">Configures the endpoint (middleware, its own settings); null for nothing more.</param>
    /// <returns>These options.</returns>
    public CoapServerOptions Listen(IDatagramTransport transport, Action<CoapListenOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(transport);
        return Add(new CoapListenOptions(transport), configure);
    }

    /// <summary>Adds an endpoint over a connection listener made ready, as <see cref="Listen(IDatagramTransport, Action{CoapListenOptions}?)"/> does a datagram transport.</summary>
    /// <param name="listener">The listener.</param>
    /// <param name="configure">Configures the endpoint; null for nothing more.</param>
    /// <returns>These options.</returns>
    public CoapServerOptions Listen(IConnectionListener listener, Action<CoapListenOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(listener);
        return Add(new CoapListenOptions(listener), configure);
    }

    /// <summary>
    /// How many requests may wait in or be processed by the pipeline at once (default 1024). Past it
    /// the server sheds load: a CON request gets 5.03 Service Unavailable with Max-Age
    /// <see cref="LoadSheddingMaxAge"/>, a NON request is dropped (RFC 7252 section 5.9.3.4).
    /// </summary>
    public int MaxPendingRequests { get; set; } = 1024;

    /// <summary>
    /// How many calls of one synchronous handler run at once (default: the number of processors). They
    /// may block their thread, so each route's synchronous handler runs on threads of its own (started as
    /// needed, ended when idle), never on the thread pool's: a route whose handler blocks queues only its
    /// own requests, and those that wait past the separate-response delay get an empty ACK and a
    /// separate response (<see cref="CoapEndpointOptions.SeparateResponseDelay"/>). Asynchronous handlers are bounded only by <see cref="MaxPendingRequests"/>,
    /// since one that awaits holds no thread.
    /// </summary>
    /// <remarks>
    /// A handler, synchronous or not, that has returned within 1 ms on each of its last calls (16 at first) runs where its
    /// request was routed instead of being handed on: on the UDP receive thread while nothing is queued, which wakes no
    /// other thread, else on the dispatch block; at most this many of its calls at once, and only while none waits on its
    /// lane. A call that takes longer sends it back to its lane until it has shown twice as many quick calls; a handler
    /// that blocks never leaves it.
    /// </remarks>
    public int MaxDegreeOfParallelism { get; set; } = Environment.ProcessorCount;

    /// <summary>The Max-Age of a 5.03 sent when shedding load: when the client may try again (default 5 s).</summary>
    public TimeSpan LoadSheddingMaxAge { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>Observe (RFC 7641): the bounds on observations and the type of notifications.</summary>
    public CoapNet.Observe.ObserveOptions Observe { get; set; } = new();

    /// <summary>
    /// Where the server's own work runs, for tests inside the library: null (always, outside them) runs the dispatch
    /// block on the thread pool and each route's blocking lane on threads of its own (<see cref="BlockingHandlerScheduler"/>).
    /// Set, it runs the dispatch block, every blocking lane and the continuation of an awaited async handler, so a test
    /// with a scheduler that runs its queue on demand and the in-memory network serves requests in virtual time, on its
    /// own thread, with no wall-clock wait.
    /// </summary>
    internal TaskScheduler? Scheduler { get; init; }

    internal void Validate()
    {
        ArgumentNullException.ThrowIfNull(Endpoint);
        Endpoint.Validate();
        foreach (CoapListenOptions listener in _listeners)
        {
            listener.Endpoint?.Validate();
        }

        ArgumentNullException.ThrowIfNull(Udp);
        Udp.Validate();
        ArgumentNullException.ThrowIfNull(Tcp);
        Tcp.Validate();
        ArgumentNullException.ThrowIfNull(Connections);
        Connections.Validate();
        ArgumentNullException.ThrowIfNull(Observe);
        Observe.Validate();
        if (MaxPendingRequests < 1)
        {
            throw new ArgumentException("MaxPendingRequests must be at least 1.", nameof(MaxPendingRequests));
        }

        if (MaxDegreeOfParallelism < 1)
        {
            throw new ArgumentException("MaxDegreeOfParallelism must be at least 1.", nameof(MaxDegreeOfParallelism));
        }

        if (LoadSheddingMaxAge < TimeSpan.Zero || LoadSheddingMaxAge.TotalSeconds > uint.MaxValue)
        {
            throw new ArgumentException("LoadSheddingMaxAge must be between 0 and 2^32 - 1 seconds.", nameof(LoadSheddingMaxAge));
        }

        ArgumentNullException.ThrowIfNull(Handlers);
        Handlers.Validate();
    }

    /// <summary>
    /// What handlers with bound parameters take from the application (issue 26): JSON metadata, services, the default
    /// format of returned objects; see <see cref="CoapNet.Endpoints.CoapHandlerOptions"/>.
    /// </summary>
    public CoapNet.Endpoints.CoapHandlerOptions Handlers { get; set; } = new();

    private CoapServerOptions Add(CoapListenOptions listener, Action<CoapListenOptions>? configure)
    {
        configure?.Invoke(listener);
        _listeners.Add(listener);
        return this;
    }
}
