using System.Net;
using CoapNet.Channels;
using CoapNet.Messaging;
using CoapNet.Tls;
using CoapNet.Transports;

namespace CoapNet.Client;

public sealed partial class CoapClient
{
    /// <summary>
    /// The client's coaps+tcp endpoint (RFC 8323 section 9.1): TLS connections over TCP, opened on demand, one per server
    /// and host name, authenticated with <see cref="CoapClientOptions.Tls"/>.
    /// </summary>
    private static CoapEndpoint CreateTlsEndpoint(CoapClientOptions options)
        => new(new TlsConnectionFactory(new TcpConnectionFactory(options.Tcp), options.Tls, options.Tcp, options.Endpoint.TimeProvider), options.Endpoint, options.Connections);

    /// <summary>
    /// The peer a URI names. A coaps+tcp one carries the URI's host, which TLS sends as SNI and checks the server's
    /// certificate against, and which keeps the connections to two names served at one address apart.
    /// </summary>
    private static CoapPeer PeerFor(string scheme, IPEndPoint endPoint, string host)
        => scheme == CoapPeer.TlsScheme ? CoapPeer.Tls(endPoint, host) : new CoapPeer(scheme, endPoint);
}
