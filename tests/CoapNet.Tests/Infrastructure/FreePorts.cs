using System.Net;
using System.Net.Sockets;

namespace CoapNet.Tests.Infrastructure;

/// <summary>
/// Ports on 127.0.0.1 that are free at the moment of asking, for programs run as processes that take a port
/// number and cannot be given port 0 (libcoap's server, nginx, the sample server's TCP endpoint). Another
/// process may take one before the program binds it: callers that can see a bind failure try again.
/// </summary>
internal static class FreePorts
{
    /// <summary>A port free for both UDP and TCP, for a program that binds the same number for both.</summary>
    public static int UdpAndTcp()
    {
        for (int attempt = 0; ; attempt++)
        {
            using UdpClient udp = new(new IPEndPoint(IPAddress.Loopback, 0));
            int port = ((IPEndPoint)udp.Client.LocalEndPoint!).Port;
            try
            {
                TcpListener tcp = new(IPAddress.Loopback, port);
                tcp.Start();
                tcp.Stop();
                return port;
            }
            catch (SocketException) when (attempt < 20)
            {
            }
        }
    }

    /// <summary>
    /// A port free for UDP and TCP whose next port is free for both too, for a program that binds both numbers (a
    /// libcoap (D)TLS build: coap and coap+tcp on one, coaps and coaps+tcp on the next).
    /// </summary>
    public static int UdpAndTcpWithNext()
    {
        for (int attempt = 0; ; attempt++)
        {
            int port = UdpAndTcp();
            if (port < IPEndPoint.MaxPort && IsFree(port + 1) || attempt >= 20)
            {
                return port;
            }
        }
    }

    private static bool IsFree(int port)
    {
        try
        {
            using UdpClient udp = new(new IPEndPoint(IPAddress.Loopback, port));
            TcpListener tcp = new(IPAddress.Loopback, port);
            tcp.Start();
            tcp.Stop();
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }
}
