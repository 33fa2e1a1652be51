using CoapNet.Messaging.Connections;
using CoapNet.Transports;

namespace CoapNet.Messaging;

// CoAP over connections (RFC 8323): the same exchange layer over the stream connection layer.
public sealed partial class CoapEndpoint
{
    /// <summary>
    /// Creates a server-side endpoint over connections accepted by <paramref name="listener"/> (CoAP over
    /// TCP, RFC 8323, with a <see cref="TcpConnectionListener"/>); call <see cref="Start"/> to begin accepting.
    /// Each connection exchanges CSMs first, answers Ping with Pong, and ends with Release or Abort (section 5).
    /// </summary>
    /// <param name="listener">The listener; the endpoint owns it from now on and disposes it.</param>
    /// <param name="options">Clock, logging, token length and response timeout; the UDP transmission parameters do not apply. Null for the defaults.</param>
    /// <param name="connections">Connection limits (count, idle and CSM timeouts, Max-Message-Size, requests in flight); null for the defaults.</param>
    /// <exception cref="ArgumentNullException"><paramref name="listener"/> is null.</exception>
    /// <exception cref="ArgumentException">An option is out of range; the message names it.</exception>
    public CoapEndpoint(IConnectionListener listener, CoapEndpointOptions? options = null, CoapConnectionOptions? connections = null)
        : this(new StreamConnectionLayer(listener, connections, options), options)
    {
    }

    /// <summary>
    /// Creates a client-side endpoint that opens connections through <paramref name="connector"/> (CoAP over
    /// TCP, RFC 8323, with a <see cref="TcpConnectionFactory"/>): one per server, opened by the first request
    /// to it, reused, and opened again after it closed. Call <see cref="Start"/> before sending.
    /// </summary>
    /// <param name="connector">The connection factory.</param>
    /// <param name="options">Clock, logging, token length and response timeout; the UDP transmission parameters do not apply. Null for the defaults.</param>
    /// <param name="connections">Connection limits; null for the defaults.</param>
    /// <exception cref="ArgumentNullException"><paramref name="connector"/> is null.</exception>
    /// <exception cref="ArgumentException">An option is out of range; the message names it.</exception>
    public CoapEndpoint(IConnectionFactory connector, CoapEndpointOptions? options = null, CoapConnectionOptions? connections = null)
        : this(new StreamConnectionLayer(connector, connections, options), options)
    {
    }
}
