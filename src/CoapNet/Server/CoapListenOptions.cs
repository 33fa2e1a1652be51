using CoapNet.Messaging;
using CoapNet.Transports;

namespace CoapNet.Server;

/// <summary>
/// One endpoint a server listens on: its address (<c>coap://[::]:5683</c>, <c>coaps+tcp://[::]:5684</c>), whose scheme
/// finds the transport in <see cref="CoapServerOptions.Transports"/>; the middleware around that transport (TLS with
/// <c>UseTls</c>, DTLS with CoapNet.Dtls's <c>UseDtls</c>, or any of your own); and, if it needs its own, the settings of
/// its endpoint. Made by <see cref="CoapServerOptions.Listen(string, Action{CoapListenOptions}?)"/> and its overloads, in
/// code or from configuration ("Coap:Endpoints:{name}:Url"); bound when the server starts, never before.
/// </summary>
/// <example>
/// <code>
/// options.Listen("coap://[::]:5683");
/// options.Listen("coaps+tcp://[::]:5684", endpoint =&gt; endpoint.UseTls(certificate));
/// options.Listen("coaps://[::]:5684", endpoint =&gt; endpoint.UseDtls(new DtlsServerOptions { PskKeys = keys }));
/// </code>
/// </example>
public sealed class CoapListenOptions
{
    private readonly List<Func<IDatagramTransport, CoapTransportContext, IDatagramTransport>> _datagramMiddleware = [];
    private readonly List<Func<IConnectionListener, CoapTransportContext, IConnectionListener>> _connectionMiddleware = [];
    private readonly IDatagramTransport? _readyDatagrams;
    private readonly IConnectionListener? _readyListener;

    internal CoapListenOptions(CoapAddress address)
    {
        Address = address;
    }

    internal CoapListenOptions(IDatagramTransport transport)
    {
        _readyDatagrams = transport;
        Address = new CoapAddress(transport.Scheme, transport.LocalEndPoint);
    }

    internal CoapListenOptions(IConnectionListener listener)
    {
        _readyListener = listener;
        Address = new CoapAddress(listener.Scheme, listener.LocalEndPoint);
    }

    /// <summary>
    /// Where the endpoint listens, and over what (its scheme). For a transport given ready-made, its own scheme and
    /// local endpoint, which its middleware may change (DTLS makes a coap transport coaps).
    /// </summary>
    public CoapAddress Address { get; }

    /// <summary>
    /// What messages call the endpoint besides its address: the configuration path it came from
    /// ("Coap:Endpoints:secure"), or a name of your choosing; null for none.
    /// </summary>
    public string? Name { get; set; }

    /// <summary>
    /// The settings of this endpoint alone (transmission parameters, limits, block-wise, Echo, stages, clock, logging);
    /// null (the default) for the server's, <see cref="CoapServerOptions.Endpoint"/>.
    /// </summary>
    public CoapEndpointOptions? Endpoint { get; set; }

    /// <summary>
    /// Wraps the endpoint's datagram transport (coap, coaps, or one of your own): <paramref name="middleware"/> gets
    /// the transport when the server starts, with the context it is bound in, and returns the one to use, which owns
    /// the first from then on. Middleware runs in the order it was added, each wrapping what the one before returned.
    /// CoapNet.Dtls's <c>UseDtls</c> is such middleware; on a connection endpoint, the start fails saying so.
    /// </summary>
    /// <param name="middleware">Returns the transport to use.</param>
    /// <returns>This endpoint.</returns>
    public CoapListenOptions UseDatagramMiddleware(Func<IDatagramTransport, CoapTransportContext, IDatagramTransport> middleware)
    {
        ArgumentNullException.ThrowIfNull(middleware);
        _datagramMiddleware.Add(middleware);
        return this;
    }

    /// <summary>
    /// Wraps the endpoint's connection listener (coap+tcp, coaps+tcp, or one of your own) as
    /// <see cref="UseDatagramMiddleware"/> wraps a datagram transport. <c>UseTls</c> is such middleware; on a datagram
    /// endpoint, the start fails saying so.
    /// </summary>
    /// <param name="middleware">Returns the listener to use.</param>
    /// <returns>This endpoint.</returns>
    public CoapListenOptions UseConnectionMiddleware(Func<IConnectionListener, CoapTransportContext, IConnectionListener> middleware)
    {
        ArgumentNullException.ThrowIfNull(middleware);
        _connectionMiddleware.Add(middleware);
        return this;
    }

    /// <summary>The address, and the name when there is one: "coaps://[::]:5684 (Coap:Endpoints:secure)".</summary>
    /// <returns>The text.</returns>
    public override string ToString() => Name is null ? Address.ToString() : $"{Address} ({Name})";

    /// <summary>
    /// Binds the endpoint's transport (or takes the one given ready-made), runs its middleware and assembles the stack
    /// over it with <paramref name="options"/>. Nothing is left bound when this throws.
    /// </summary>
    /// <exception cref="CoapBindException">The address cannot be bound; the message names this endpoint.</exception>
    /// <exception cref="InvalidOperationException">
    /// No transport is registered for the scheme, the middleware is of the other kind, or the transport does not carry
    /// the endpoint's scheme after it (a coaps endpoint nothing secured); the message says what to add.
    /// </exception>
    internal CoapEndpoint CreateEndpoint(CoapServerOptions server, CoapEndpointOptions options)
    {
        CoapTransportContext context = new(this, server, options);
        if (_readyDatagrams is not null)
        {
            RefuseMiddleware(_connectionMiddleware.Count, "connection middleware (UseTls, say)", "datagram");
            return new CoapEndpoint(Wrap(_readyDatagrams, context, null), options);
        }

        if (_readyListener is not null)
        {
            RefuseMiddleware(_datagramMiddleware.Count, "datagram middleware (UseDtls, say)", "connection");
            return new CoapEndpoint(Wrap(_readyListener, context, null), options, server.Connections);
        }

        switch (Find(server))
        {
            case CoapDatagramTransportFactory datagrams:
                RefuseMiddleware(_connectionMiddleware.Count, "connection middleware (UseTls, say)", "datagram");
                return new CoapEndpoint(Wrap(Bind(() => datagrams.Bind(Address.ToEndPoint(), context)), context, datagrams), options);
            case CoapConnectionTransportFactory connections:
                RefuseMiddleware(_datagramMiddleware.Count, "datagram middleware (UseDtls, say)", "connection");
                return new CoapEndpoint(Wrap(Bind(() => connections.Listen(Address.ToEndPoint(), context)), context, connections), options, server.Connections);
            default:
                throw new InvalidOperationException($"{this}: the transport registered for {Address.Scheme} is neither a datagram nor a connection transport factory.");
        }
    }

    /// <summary>The factory of the endpoint's scheme, checked before anything is bound.</summary>
    /// <exception cref="InvalidOperationException">None is registered.</exception>
    internal CoapTransportFactory? Find(CoapServerOptions server)
    {
        if (_readyDatagrams is not null || _readyListener is not null)
        {
            return null;
        }

        return server.Transports.Find(Address.Scheme)
            ?? throw new InvalidOperationException($"{this}: no transport is registered for {Address.Scheme} (the server has {server.Transports.Describe()}); add the package that provides it, or register a factory in CoapServerOptions.Transports.");
    }

    private T Bind<T>(Func<T> bind)
    {
        try
        {
            return bind();
        }
        catch (CoapBindException e)
        {
            throw new CoapBindException(this, e);
        }
    }

    private IDatagramTransport Wrap(IDatagramTransport transport, CoapTransportContext context, CoapTransportFactory? factory)
        => TransportMiddleware.Apply(transport, _datagramMiddleware, context, wrapped => CheckCarries(wrapped.Scheme, context, factory), wrapped => wrapped.Dispose(), ToString());

    // A listener closes its socket at once on disposal; what remains of it (none is accepting yet) needs no wait.
    private IConnectionListener Wrap(IConnectionListener listener, CoapTransportContext context, CoapTransportFactory? factory)
        => TransportMiddleware.Apply(listener, _connectionMiddleware, context, wrapped => CheckCarries(wrapped.Scheme, context, factory), wrapped => _ = wrapped.DisposeAsync(), ToString());

    /// <summary>An endpoint bound from its address must carry the address's scheme once its middleware ran: coaps must be secured.</summary>
    private void CheckCarries(string carried, CoapTransportContext context, CoapTransportFactory? factory)
    {
        if (factory is null || string.Equals(carried, Address.Scheme, StringComparison.OrdinalIgnoreCase))
        {
            return;
        }

        string what = factory.DescribeMissingMiddleware(context)
            ?? $"its middleware makes it {carried}; listen on a {carried}:// address instead, or leave that middleware out";
        throw new InvalidOperationException($"{this} is not served: its transport carries {carried}, not {Address.Scheme}; {what}.");
    }

    private void RefuseMiddleware(int count, string kind, string transport)
    {
        if (count > 0)
        {
            throw new InvalidOperationException($"{this} is a {transport} endpoint, which {kind} cannot wrap; give that middleware to an endpoint of the scheme it secures.");
        }
    }
}
