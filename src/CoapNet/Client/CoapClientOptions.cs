using System.Net;
using CoapNet.Messaging;
using CoapNet.Transports;

namespace CoapNet.Client;

/// <summary>
/// Settings of a <see cref="CoapClient"/>: its endpoint (<see cref="Endpoint"/>, the type a server's endpoints take too),
/// its socket and connections. Hosting binds it from the "Coap:Client" configuration section.
/// </summary>
/// <remarks>Set it before the client is created; later changes are not guaranteed to be seen.</remarks>
public sealed class CoapClientOptions
{
    private readonly Dictionary<string, List<Func<IDatagramTransport, CoapTransportContext, IDatagramTransport>>> _datagramMiddleware = new(StringComparer.Ordinal);
    private readonly Dictionary<string, List<Func<IConnectionFactory, CoapTransportContext, IConnectionFactory>>> _connectionMiddleware = new(StringComparer.Ordinal);

    /// <summary>Transmission parameters, limits, clock and logging of the client's endpoint.</summary>
    public CoapEndpointOptions Endpoint { get; set; } = new();

    /// <summary>The local endpoint to bind; default [::]:0 (dual-stack, a free port), or 0.0.0.0:0 without IPv6.</summary>
    public IPEndPoint? LocalEndPoint { get; set; }

    /// <summary>The limits of coap+tcp connections (RFC 8323): message size, timeouts, requests in flight.</summary>
    public CoapConnectionOptions Connections { get; set; } = new();

    /// <summary>
    /// How long past a notification's Max-Age (default 60 s) an observation waits for the next one before
    /// it registers again (RFC 7641 section 3.3.1); default 5 s.
    /// </summary>
    public TimeSpan ObserveReregistrationMargin { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>When true, requests built from a URI go out as NON instead of CON (RFC 7252 section 2.2).</summary>
    public bool UseNonConfirmable { get; set; }

    /// <summary>How the client's UDP socket is set up (buffer sizes; the 1 MiB kernel receive buffer absorbs the bursts of answers to many requests in flight). Not used with a transport of your own.</summary>
    public UdpTransportOptions Udp { get; set; } = new();

    /// <summary>How the client's coap+tcp connections buffer and close (RFC 8323).</summary>
    public TcpTransportOptions Tcp { get; set; } = new();

    /// <summary>
    /// How <c>coaps+tcp://</c> URIs connect (CoAP over TLS, RFC 8323 section 9.1): the trusted roots or a validator for
    /// servers' certificates (default: the system's trust store, and the URI's host must match), the client's own
    /// certificate, the handshake timeout. Connections buffer and close as <see cref="Tcp"/> says. .NET's TLS has no
    /// pre-shared keys: certificates only.
    /// </summary>
    public CoapNet.Tls.TlsClientOptions Tls { get; set; } = new();

    /// <summary>
    /// The transports the schemes of URIs find (<see cref="CoapTransportRegistry.CreateDefault"/>: coap, coaps, coap+tcp,
    /// coaps+tcp). A transport is opened on the first request of its scheme (coap's when the client is made) and closed
    /// with the client. coaps is UDP until DTLS secures it: CoapNet.Dtls's <c>UseDtls</c>.
    /// </summary>
    public CoapTransportRegistry Transports { get; } = CoapTransportRegistry.CreateDefault();

    /// <summary>
    /// Wraps the client's datagram transport for <paramref name="scheme"/> when it is opened: <paramref name="middleware"/>
    /// gets it with its context and returns the one to use, which owns the first from then on. In the order added.
    /// CoapNet.Dtls's <c>UseDtls</c> is such middleware for coaps; one whose transport makes sessions
    /// (<see cref="ISecureDatagramTransport"/>) is asked for the session of each request.
    /// </summary>
    /// <param name="scheme">The scheme whose transport to wrap, such as "coaps".</param>
    /// <param name="middleware">Returns the transport to use.</param>
    /// <returns>These options.</returns>
    public CoapClientOptions UseDatagramMiddleware(string scheme, Func<IDatagramTransport, CoapTransportContext, IDatagramTransport> middleware)
    {
        ArgumentNullException.ThrowIfNull(middleware);
        return Use(_datagramMiddleware, scheme, middleware);
    }

    /// <summary>Wraps the client's connection factory for <paramref name="scheme"/> when it is made, as <see cref="UseDatagramMiddleware"/> does a datagram transport.</summary>
    /// <param name="scheme">The scheme whose connections to wrap.</param>
    /// <param name="middleware">Returns the factory to use.</param>
    /// <returns>These options.</returns>
    public CoapClientOptions UseConnectionMiddleware(string scheme, Func<IConnectionFactory, CoapTransportContext, IConnectionFactory> middleware)
    {
        ArgumentNullException.ThrowIfNull(middleware);
        return Use(_connectionMiddleware, scheme, middleware);
    }

    /// <summary>The datagram middleware for <paramref name="scheme"/>, in the order added.</summary>
    internal IReadOnlyList<Func<IDatagramTransport, CoapTransportContext, IDatagramTransport>> DatagramMiddleware(string scheme)
        => _datagramMiddleware.TryGetValue(scheme, out var list) ? list : [];

    /// <summary>The connection middleware for <paramref name="scheme"/>, in the order added.</summary>
    internal IReadOnlyList<Func<IConnectionFactory, CoapTransportContext, IConnectionFactory>> ConnectionMiddleware(string scheme)
        => _connectionMiddleware.TryGetValue(scheme, out var list) ? list : [];

    internal void Validate()
    {
        ArgumentNullException.ThrowIfNull(Endpoint);
        ArgumentNullException.ThrowIfNull(Udp);
        Udp.Validate();
        ArgumentNullException.ThrowIfNull(Tcp);
        Tcp.Validate();
        ArgumentNullException.ThrowIfNull(Connections);
        ArgumentNullException.ThrowIfNull(Tls);
        Tls.Validate();
        if (ObserveReregistrationMargin < TimeSpan.Zero)
        {
            throw new ArgumentException("ObserveReregistrationMargin must not be negative.", nameof(ObserveReregistrationMargin));
        }
    }

    private CoapClientOptions Use<T>(Dictionary<string, List<T>> middleware, string scheme, T added)
    {
        string key = CoapAddress.CheckScheme(scheme, nameof(scheme));
        if (!middleware.TryGetValue(key, out List<T>? list))
        {
            middleware[key] = list = [];
        }

        list.Add(added);
        return this;
    }
}
