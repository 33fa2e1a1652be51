namespace CoapNet.Transports;

/// <summary>
/// How a <see cref="UdpTransport"/> sets up its socket: the one place for UDP socket settings, used by the server's
/// endpoints (<see cref="Server.CoapServerOptions.Udp"/>), the client (<see cref="Client.CoapClientOptions.Udp"/>) and
/// a transport made by hand. Where it binds is given apart, as an endpoint.
/// </summary>
public sealed class UdpTransportOptions
{
    /// <summary>The default CoAP port, 5683 (RFC 7252 section 6.1).</summary>
    public const int DefaultPort = 5683;

    /// <summary>The most receive sockets one endpoint may have: 64.</summary>
    public const int MaxReceiveSockets = 64;

    /// <summary>The size of the receive buffer, which bounds the largest datagram received (default 65535).</summary>
    public int ReceiveBufferSize { get; set; } = 65535;

    /// <summary>
    /// The kernel receive buffer of the socket, in bytes (default 1 MiB), so a burst of datagrams (requests at a
    /// server, the answers to hundreds of requests in flight at a client) waits in the kernel instead of being dropped
    /// there and costing a retransmission (ACK_TIMEOUT, RFC 7252 section 4.2). Linux caps what an unprivileged process
    /// gets at net.core.rmem_max (often 208 KiB, doubled for bookkeeping); null keeps the OS default.
    /// </summary>
    public int? SocketReceiveBufferSize { get; set; } = 1024 * 1024;

    /// <summary>The kernel send buffer of the socket, in bytes (default null: the OS default; capped by net.core.wmem_max).</summary>
    public int? SocketSendBufferSize { get; set; }

    /// <summary>
    /// How many sockets receive on the endpoint, each with a receive thread of its own (default 1). On Linux, above 1,
    /// the sockets share the address with SO_REUSEPORT and the kernel spreads peers over them by a hash of their
    /// address and port, so one peer's datagrams always reach the same socket and are handled in order, while
    /// different peers are handled on as many cores. Elsewhere one socket receives whatever this says. Per-peer
    /// state (deduplication, block-wise, Observe) stays in the one endpoint, so it is the same whichever socket a peer
    /// lands on. Linux lets only processes of the same user share a port this way.
    /// </summary>
    public int ReceiveSockets { get; set; } = 1;

    /// <summary>Checks the settings.</summary>
    /// <exception cref="ArgumentException">A buffer size is too small; the message names it.</exception>
    internal void Validate()
    {
        if (ReceiveBufferSize < 1024)
        {
            throw new ArgumentException("ReceiveBufferSize must be at least 1024 bytes.", nameof(ReceiveBufferSize));
        }

        if (ReceiveSockets is < 1 or > MaxReceiveSockets)
        {
            throw new ArgumentException($"ReceiveSockets must be 1 to {MaxReceiveSockets}.", nameof(ReceiveSockets));
        }

        if (SocketReceiveBufferSize < 1024 || SocketSendBufferSize < 1024)
        {
            throw new ArgumentException("SocketReceiveBufferSize and SocketSendBufferSize must be at least 1024 bytes (or null for the OS default).", nameof(SocketReceiveBufferSize));
        }
    }
}
