using System.Net;
using CoapNet.Messaging;
using Microsoft.Extensions.Logging;

namespace CoapNet.Server;

/// <summary>
/// Settings of a <see cref="CoapServer"/>: where it listens, the settings of its endpoints (<see cref="Endpoint"/>), its
/// transports and connections, and its own limits. Hosting binds it from the "Coap" configuration section.
/// </summary>
/// <remarks>Set it before the server is created; later changes are not guaranteed to be seen.</remarks>
public sealed class CoapServerOptions
{
    /// <summary>
    /// The local endpoints to listen on over UDP, one socket each (IPv4 and IPv6 alike, several ports
    /// allowed). Default: [::]:5683, dual-stack where the OS allows, when no other endpoint or
    /// transport of any kind is configured.
    /// </summary>
    public IList<IPEndPoint> Endpoints { get; set; } = [];

    /// <summary>
    /// The local endpoints to listen on for CoAP over TCP (RFC 8323), one listener each. Default: none.
    /// The usual choice is the same address and port as UDP, such as [::]:5683.
    /// </summary>
    public IList<IPEndPoint> TcpEndpoints { get; set; } = [];

    /// <summary>
    /// Connection listeners to serve on, ready-made (TCP set up your own way, an in-memory pipe in
    /// tests); the server owns them from <see cref="CoapServer.Start"/> on and disposes them.
    /// </summary>
    public IList<CoapNet.Transports.IConnectionListener> ConnectionListeners { get; set; } = [];

    /// <summary>The limits of every connection (RFC 8323): count, message size, timeouts, requests in flight.</summary>
    public CoapConnectionOptions Connections { get; set; } = new();

    /// <summary>
    /// Datagram transports to serve on, ready-made (an in-memory network in tests, a socket set up
    /// your own way); the server owns them from <see cref="CoapServer.Start"/> on and disposes them.
    /// </summary>
    public IList<CoapNet.Transports.IDatagramTransport> DatagramTransports { get; set; } = [];

    /// <summary>
    /// The settings of every endpoint the server listens on (transmission parameters and retransmission, limits,
    /// deduplication, separate responses, block-wise, Echo, the clock and logging): the same type a client takes.
    /// </summary>
    public CoapEndpointOptions Endpoint { get; set; } = new();

    /// <summary>How the UDP sockets of <see cref="Endpoints"/> are set up (buffer sizes).</summary>
    public CoapNet.Transports.UdpTransportOptions Udp { get; set; } = new();

    /// <summary>How the TCP listeners of <see cref="TcpEndpoints"/> buffer and close their connections.</summary>
    public CoapNet.Transports.TcpTransportOptions Tcp { get; set; } = new();

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
        ArgumentNullException.ThrowIfNull(Endpoints);
        ArgumentNullException.ThrowIfNull(DatagramTransports);
        ArgumentNullException.ThrowIfNull(TcpEndpoints);
        ArgumentNullException.ThrowIfNull(ConnectionListeners);
        ArgumentNullException.ThrowIfNull(Endpoint);
        Endpoint.Validate();
        ArgumentNullException.ThrowIfNull(Udp);
        Udp.Validate();
        ArgumentNullException.ThrowIfNull(Tcp);
        Tcp.Validate();
        ArgumentNullException.ThrowIfNull(Connections);
        Connections.Validate();
        ArgumentNullException.ThrowIfNull(Observe);
        Observe.Validate();
        ArgumentNullException.ThrowIfNull(Tls);
        Tls.Validate(requireCertificate: Tls.Endpoints is { Count: > 0 });
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
    /// CoAP over TLS (<c>coaps+tcp</c>, RFC 8323 section 9.1): the endpoints to listen on (default none, the usual one
    /// being [::]:5684 over TCP), the server's certificate, and whether clients are asked for theirs. Each listener's
    /// TCP connections buffer and close as <see cref="Tcp"/> says. .NET's TLS has no pre-shared keys: certificates only.
    /// </summary>
    public CoapNet.Tls.TlsServerOptions Tls { get; set; } = new();

    /// <summary>
    /// What handlers with bound parameters take from the application (issue 26): JSON metadata, services, the default
    /// format of returned objects; see <see cref="CoapNet.Endpoints.CoapHandlerOptions"/>.
    /// </summary>
    public CoapNet.Endpoints.CoapHandlerOptions Handlers { get; set; } = new();
}
