using System.Net;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Transports;

namespace CoapNet.Client;

/// <summary>
/// How a client reaches the servers of one scheme: the endpoint over the transport its registry has for the scheme (with
/// the client's middleware for it), the port a URI without one means, how a destination becomes the peer it is sent to,
/// and, on a transport with sessions (DTLS), the session each request goes in.
/// </summary>
/// <remarks>
/// The session is the transport's business, asked before the request exists (<see cref="ISecureDatagramTransport.ConnectAsync"/>),
/// so the request's peer carries it and its response matches only in it (RFC 7252 section 9.1.1); aiocoap's transports
/// likewise fill in the remote themselves. The client never looks at the scheme to decide any of this.
/// </remarks>
internal sealed class ClientRoute
{
    private readonly CoapTransportFactory? _factory;
    private readonly ISecureDatagramTransport? _sessions;
    private CoapPeer? _lastSecurePeer;

    private ClientRoute(string scheme, CoapTransportFactory? factory, CoapEndpoint endpoint, ISecureDatagramTransport? sessions)
    {
        Scheme = scheme;
        _factory = factory;
        Endpoint = endpoint;
        _sessions = sessions;
        int? defaultPort = factory?.DefaultPort ?? CoapMessage.KnownDefaultPort(scheme);
        DefaultPort = defaultPort ?? -1;
        DefaultPortOf = _ => defaultPort;
    }

    /// <summary>The scheme, in lower case.</summary>
    public string Scheme { get; }

    /// <summary>The endpoint, started.</summary>
    public CoapEndpoint Endpoint { get; }

    /// <summary>The port a URI of the scheme means when it names none; -1 when the scheme has no default.</summary>
    public int DefaultPort { get; }

    /// <summary>The same, as the URI parser asks for it (made once, so no request allocates it).</summary>
    public Func<string, int?> DefaultPortOf { get; }

    /// <summary>True when the transport makes sessions, which each request must be put in first.</summary>
    public bool HasSessions => _sessions is not null;

    /// <summary>
    /// Opens the transport the client's registry has for <paramref name="scheme"/>, wraps it in the client's middleware
    /// for the scheme, and starts an endpoint over it.
    /// </summary>
    /// <exception cref="ArgumentException">No transport is registered for the scheme, or what the middleware made does not carry it (coaps without DTLS); the message says what to add.</exception>
    public static ClientRoute Open(string scheme, CoapClientOptions options)
    {
        CoapTransportFactory factory = options.Transports.Find(scheme)
            ?? throw new ArgumentException($"This client has no transport for {scheme}: it reaches {options.Transports.Describe()} (CoapClientOptions.Transports; a package such as CoapNet.Dtls or one of your own adds more).", "uri");
        CoapTransportContext context = new(factory.Scheme, options);
        return factory switch
        {
            CoapDatagramTransportFactory datagrams => Over(datagrams.Open(context), options, factory, context),
            CoapConnectionTransportFactory connections => Over(connections.Connect(context), options, factory, context),
            _ => throw new ArgumentException($"The transport registered for {scheme} is neither a datagram nor a connection transport factory.", "uri"),
        };
    }

    /// <summary>The route of a datagram transport made ready (the client's first constructor argument), for the scheme it carries.</summary>
    public static ClientRoute Over(IDatagramTransport transport, CoapClientOptions options)
    {
        string scheme = transport.Scheme.ToLowerInvariant();
        return Over(transport, options, options.Transports.Find(scheme), new CoapTransportContext(scheme, options));
    }

    /// <summary>The peer a URI's host names at <paramref name="endPoint"/>: the transport's choice (TLS keeps the name).</summary>
    public CoapPeer CreatePeer(IPEndPoint endPoint, string host) => _factory?.CreatePeer(endPoint, host) ?? new CoapPeer(Scheme, endPoint);

    /// <summary>
    /// <paramref name="peer"/> in its session when the transport makes them: the session is established (or reused)
    /// before the request exists. The last peer in a session is kept, as the client keeps its last IP literal, so a
    /// client polling one server builds no peer per request.
    /// </summary>
    public async ValueTask<CoapPeer> PrepareAsync(CoapPeer peer, CancellationToken cancellationToken)
    {
        if (_sessions is null)
        {
            return peer;
        }

        CoapSecurityContext session = await _sessions.ConnectAsync(peer.EndPoint, cancellationToken).ConfigureAwait(false);
        CoapPeer? last = Volatile.Read(ref _lastSecurePeer);
        if (last is not null && ReferenceEquals(last.SecurityContext, session) && last.EndPoint.Equals(peer.EndPoint))
        {
            return last;
        }

        CoapPeer secured = new(peer.Scheme, peer.EndPoint, session);
        Volatile.Write(ref _lastSecurePeer, secured);
        return secured;
    }

    private static ClientRoute Over(IDatagramTransport transport, CoapClientOptions options, CoapTransportFactory? factory, CoapTransportContext context)
    {
        transport = TransportMiddleware.Apply(transport, options.DatagramMiddleware(context.Scheme), context, wrapped => CheckCarries(wrapped.Scheme, factory, context), wrapped => wrapped.Dispose(), context.Scheme);
        try
        {
            CoapEndpoint endpoint = new(transport, options.Endpoint);
            endpoint.Start();
            return new ClientRoute(context.Scheme, factory, endpoint, transport as ISecureDatagramTransport);
        }
        catch
        {
            transport.Dispose();
            throw;
        }
    }

    private static ClientRoute Over(IConnectionFactory connector, CoapClientOptions options, CoapTransportFactory factory, CoapTransportContext context)
    {
        connector = TransportMiddleware.Apply(connector, options.ConnectionMiddleware(context.Scheme), context, wrapped => CheckCarries(wrapped.Scheme, factory, context), _ => { }, context.Scheme);
        CoapEndpoint endpoint = new(connector, options.Endpoint, options.Connections);
        endpoint.Start();
        return new ClientRoute(context.Scheme, factory, endpoint, null);
    }

    // What the middleware made must carry the scheme: a coaps transport nothing secured carries coap, and a request sent
    // over it would go in the clear.
    private static void CheckCarries(string carried, CoapTransportFactory? factory, CoapTransportContext context)
    {
        if (factory is null || string.Equals(carried, context.Scheme, StringComparison.OrdinalIgnoreCase))
        {
            return;
        }

        string what = factory.DescribeMissingMiddleware(context) ?? $"the middleware for {context.Scheme} makes it {carried}";
        throw new ArgumentException($"This client cannot reach {context.Scheme} servers: its transport for {context.Scheme} carries {carried}; {what}.", "uri");
    }
}
