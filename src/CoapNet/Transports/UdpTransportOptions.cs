using System.Net;

namespace CoapNet.Transports;

/// <summary>Where and how a <see cref="UdpTransport"/> binds.</summary>
public sealed class UdpTransportOptions
{
    /// <summary>The default CoAP port, 5683 (RFC 7252 section 6.1).</summary>
    public const int DefaultPort = 5683;

    /// <summary>
    /// The local address. <see cref="IPAddress.IPv6Any"/> (the default) binds a dual-stack socket
    /// that serves IPv4 and IPv6 where the OS allows, and IPv4 only where it has no IPv6.
    /// </summary>
    public IPAddress Address { get; init; } = IPAddress.IPv6Any;

    /// <summary>The local port; 0 picks a free one. Default <see cref="DefaultPort"/>.</summary>
    public int Port { get; init; } = DefaultPort;

    /// <summary>The size of the receive buffer, which bounds the largest datagram received (default 65535).</summary>
    public int ReceiveBufferSize { get; init; } = 65535;

    /// <summary>The socket's kernel receive buffer in bytes, or null for the OS default.</summary>
    public int? SocketReceiveBufferSize { get; init; }

    /// <summary>The socket's kernel send buffer in bytes, or null for the OS default.</summary>
    public int? SocketSendBufferSize { get; init; }
}
