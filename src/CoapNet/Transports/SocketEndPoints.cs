using System.Net;
using System.Net.Sockets;

namespace CoapNet.Transports;

/// <summary>What every socket transport does with addresses: dual-stack binding and IPv4-mapped peers.</summary>
internal static class SocketEndPoints
{
    /// <summary>
    /// Creates an unbound socket for <paramref name="endPoint"/>. [::] means dual-stack (IPv4 and IPv6)
    /// where the OS has IPv6, and 0.0.0.0 where it has none, so <paramref name="endPoint"/> may change.
    /// </summary>
    public static Socket Create(ref IPEndPoint endPoint, SocketType type, ProtocolType protocol)
    {
        bool dualStack = endPoint.Address.Equals(IPAddress.IPv6Any);
        if (dualStack && !Socket.OSSupportsIPv6)
        {
            endPoint = new IPEndPoint(IPAddress.Any, endPoint.Port);
            dualStack = false;
        }

        Socket socket = new(endPoint.AddressFamily, type, protocol);
        if (dualStack)
        {
            socket.DualMode = true;
        }

        return socket;
    }

    /// <summary>Binds <paramref name="socket"/> to <paramref name="endPoint"/>; when it cannot, the exception names the scheme, the endpoint and why.</summary>
    /// <exception cref="CoapBindException">The endpoint cannot be bound.</exception>
    public static void Bind(Socket socket, IPEndPoint endPoint, string scheme)
    {
        try
        {
            socket.Bind(endPoint);
        }
        catch (SocketException e)
        {
            throw new CoapBindException(scheme, endPoint, e);
        }
    }

    /// <summary>An IPv4 peer of a dual-stack socket shows as ::ffff:a.b.c.d; users and matching see a.b.c.d.</summary>
    public static IPEndPoint Normalize(IPEndPoint endPoint)
        => endPoint.Address.IsIPv4MappedToIPv6 ? new IPEndPoint(endPoint.Address.MapToIPv4(), endPoint.Port) : endPoint;
}
