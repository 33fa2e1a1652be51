using System.Net;

namespace CoapNet.Transports;

/// <summary>
/// A transport of datagrams for one URI scheme (UDP for coap and coaps): each end of it is an <see cref="IDatagramTransport"/>,
/// under RFC 7252's message layer (Message IDs, confirmable delivery, deduplication).
/// </summary>
/// <example>
/// <code>
/// sealed class SerialLineFactory(SerialLine line) : CoapDatagramTransportFactory("coap+serial", 1)
/// {
///     public override IDatagramTransport Bind(IPEndPoint localEndPoint, CoapTransportContext context) =&gt; line.ServerEnd;
///     public override IDatagramTransport Open(CoapTransportContext context) =&gt; line.ClientEnd;
/// }
/// </code>
/// </example>
public abstract class CoapDatagramTransportFactory : CoapTransportFactory
{
    /// <summary>A factory for <paramref name="scheme"/>.</summary>
    /// <param name="scheme">The URI scheme (RFC 3986 section 3.1 syntax), such as "coap".</param>
    /// <param name="defaultPort">The port an address of the scheme means when it names none.</param>
    /// <exception cref="ArgumentException">The scheme is not a URI scheme, or the port is outside 0-65535.</exception>
    protected CoapDatagramTransportFactory(string scheme, int defaultPort)
        : base(scheme, defaultPort)
    {
    }

    /// <summary>
    /// A server's transport for an endpoint at <paramref name="localEndPoint"/>, bound now: the server calls this when it
    /// starts, and owns what it returns (it starts it, and disposes it when it stops).
    /// </summary>
    /// <param name="localEndPoint">The endpoint's address; port 0 asks for a free one.</param>
    /// <param name="context">The server, the endpoint and its settings.</param>
    /// <returns>The transport, not started.</returns>
    /// <exception cref="CoapBindException">The address cannot be bound; the server reports every such endpoint at once.</exception>
    public abstract IDatagramTransport Bind(IPEndPoint localEndPoint, CoapTransportContext context);

    /// <summary>
    /// A client's transport for reaching servers of this scheme: the client calls this on its first request of the
    /// scheme (for coap, when it is made) and owns what it returns.
    /// </summary>
    /// <param name="context">The client and its settings.</param>
    /// <returns>The transport, not started.</returns>
    public abstract IDatagramTransport Open(CoapTransportContext context);
}
