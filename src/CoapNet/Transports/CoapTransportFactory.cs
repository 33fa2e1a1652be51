using System.Net;
using CoapNet.Channels;

namespace CoapNet.Transports;

/// <summary>
/// A transport found by its URI scheme (<see cref="CoapTransportRegistry"/>): what a server binds for an endpoint of that
/// scheme and what a client opens to reach a server of it. A transport carries datagrams
/// (<see cref="CoapDatagramTransportFactory"/>: RFC 7252's message layer runs over it) or connections
/// (<see cref="CoapConnectionTransportFactory"/>: RFC 8323's); derive from one of the two.
/// </summary>
/// <remarks>
/// The factory makes the bare transport; middleware on the endpoint (<c>UseTls</c>, CoapNet.Dtls's <c>UseDtls</c>,
/// <see cref="Server.CoapListenOptions.UseDatagramMiddleware"/>) wraps it. What it ends up carrying must be its
/// endpoint's scheme: a coaps endpoint's UDP transport carries coap until DTLS wraps it, and is refused at start until
/// then, with <see cref="DescribeMissingMiddleware"/> saying what to add.
/// </remarks>
public abstract class CoapTransportFactory
{
    /// <summary>A factory for <paramref name="scheme"/>; derive from <see cref="CoapDatagramTransportFactory"/> or <see cref="CoapConnectionTransportFactory"/>, which the server and client know how to use.</summary>
    /// <param name="scheme">The URI scheme (RFC 3986 section 3.1 syntax).</param>
    /// <param name="defaultPort">The port an address of the scheme means when it names none.</param>
    /// <exception cref="ArgumentException">The scheme is not a URI scheme, or the port is outside 0-65535.</exception>
    protected CoapTransportFactory(string scheme, int defaultPort)
    {
        Scheme = CoapAddress.CheckScheme(scheme, nameof(scheme));
        ArgumentOutOfRangeException.ThrowIfNegative(defaultPort);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(defaultPort, IPEndPoint.MaxPort);
        DefaultPort = defaultPort;
    }

    /// <summary>The URI scheme, in lower case, such as "coap" or "coap+tcp".</summary>
    public string Scheme { get; }

    /// <summary>The port an address of this scheme means when it names none (5683 for coap, RFC 7252 section 6.1).</summary>
    public int DefaultPort { get; }

    /// <summary>
    /// The peer a client sends to when a URI names <paramref name="host"/> at <paramref name="endPoint"/>: by default
    /// the scheme and the endpoint. A transport that needs the name itself (TLS sends it as SNI and checks the server's
    /// certificate against it) keeps it in the peer.
    /// </summary>
    /// <param name="endPoint">The address the host resolved to, with the port.</param>
    /// <param name="host">The URI's host: a name, or an IP address as text.</param>
    /// <returns>The peer.</returns>
    public virtual CoapPeer CreatePeer(IPEndPoint endPoint, string host) => new(Scheme, endPoint);

    /// <summary>
    /// What to tell the user whose endpoint of this scheme ends up carrying another after its middleware (a coaps
    /// endpoint that nothing secured): which call or setting adds what is missing. Null (the default) when nothing is
    /// expected of middleware, which is then only told that the schemes differ.
    /// </summary>
    /// <param name="context">The endpoint's context: a server's (with <see cref="CoapTransportContext.Listener"/>) or a client's.</param>
    /// <returns>A sentence, or null.</returns>
    public virtual string? DescribeMissingMiddleware(CoapTransportContext context) => null;
}
