using CoapNet.Client;
using CoapNet.Messaging;
using CoapNet.Server;

namespace CoapNet.Transports;

/// <summary>
/// What a transport factory and an endpoint's middleware are given when a server binds an endpoint or a client opens a
/// transport: whose it is and the settings that apply (the endpoint's clock and logging, the buffering of sockets and
/// connections).
/// </summary>
public sealed class CoapTransportContext
{
    internal CoapTransportContext(CoapListenOptions listener, CoapServerOptions server, CoapEndpointOptions endpoint)
    {
        Scheme = listener.Address.Scheme;
        Listener = listener;
        Server = server;
        Endpoint = endpoint;
    }

    internal CoapTransportContext(string scheme, CoapClientOptions client)
    {
        Scheme = scheme;
        Client = client;
        Endpoint = client.Endpoint;
    }

    /// <summary>The scheme the transport is for.</summary>
    public string Scheme { get; }

    /// <summary>The settings of the endpoint the transport will carry: its clock (<see cref="CoapEndpointOptions.TimeProvider"/>) and logging among them.</summary>
    public CoapEndpointOptions Endpoint { get; }

    /// <summary>The endpoint a server is binding; null on a client.</summary>
    public CoapListenOptions? Listener { get; }

    /// <summary>The server's settings, when a server is binding; null on a client.</summary>
    public CoapServerOptions? Server { get; }

    /// <summary>The client's settings, when a client is opening a transport; null on a server.</summary>
    public CoapClientOptions? Client { get; }

    /// <summary>How UDP sockets are set up: the server's or the client's.</summary>
    public UdpTransportOptions Udp => Server?.Udp ?? Client!.Udp;

    /// <summary>How TCP connections buffer and close: the server's or the client's.</summary>
    public TcpTransportOptions Tcp => Server?.Tcp ?? Client!.Tcp;

    /// <summary>The limits of every connection (RFC 8323): the server's or the client's.</summary>
    public CoapConnectionOptions Connections => Server?.Connections ?? Client!.Connections;
}
