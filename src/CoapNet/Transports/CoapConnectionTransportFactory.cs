using System.Net;

namespace CoapNet.Transports;

/// <summary>
/// A transport of connections for one URI scheme (TCP for coap+tcp and coaps+tcp): a server's end accepts them
/// (<see cref="IConnectionListener"/>), a client's opens them (<see cref="IConnectionFactory"/>), and RFC 8323's
/// connection layer (CSM, Ping/Pong, Release, Abort) runs over each.
/// </summary>
public abstract class CoapConnectionTransportFactory : CoapTransportFactory
{
    /// <summary>A factory for <paramref name="scheme"/>.</summary>
    /// <param name="scheme">The URI scheme (RFC 3986 section 3.1 syntax), such as "coap+tcp".</param>
    /// <param name="defaultPort">The port an address of the scheme means when it names none.</param>
    /// <exception cref="ArgumentException">The scheme is not a URI scheme, or the port is outside 0-65535.</exception>
    protected CoapConnectionTransportFactory(string scheme, int defaultPort)
        : base(scheme, defaultPort)
    {
    }

    /// <summary>
    /// A server's listener for an endpoint at <paramref name="localEndPoint"/>, bound now: the server calls this when it
    /// starts, and owns what it returns.
    /// </summary>
    /// <param name="localEndPoint">The endpoint's address; port 0 asks for a free one.</param>
    /// <param name="context">The server, the endpoint and its settings.</param>
    /// <returns>The listener.</returns>
    /// <exception cref="CoapBindException">The address cannot be bound; the server reports every such endpoint at once.</exception>
    public abstract IConnectionListener Listen(IPEndPoint localEndPoint, CoapTransportContext context);

    /// <summary>A client's way of opening connections to servers of this scheme, made on its first request of the scheme.</summary>
    /// <param name="context">The client and its settings.</param>
    /// <returns>The connection factory.</returns>
    public abstract IConnectionFactory Connect(CoapTransportContext context);
}
