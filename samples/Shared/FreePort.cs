using System.Net;
using System.Net.Sockets;

namespace CoapNet.Samples;

/// <summary>
/// A port free right now on an address for both TCP and UDP, for the samples' hint after a bind error: a command line that
/// moves the endpoints that failed works as written (until something else takes the port, as with any hint). Linked into
/// the sample server and the hosted sample.
/// </summary>
internal static class FreePort
{
    /// <summary>Finds one, other than <paramref name="taken"/> (the ports the same hint already gives).</summary>
    /// <param name="address">The address the endpoint binds.</param>
    /// <param name="taken">Ports not to give again.</param>
    /// <returns>The port.</returns>
    public static int Find(IPAddress address, IEnumerable<int>? taken = null)
    {
        // The OS's ephemeral range is wide: a few tries find a port TCP gave that UDP can have too.
        for (int attempt = 0; ; attempt++)
        {
            using Socket tcp = Open(address, SocketType.Stream, ProtocolType.Tcp);
            tcp.Bind(new IPEndPoint(address, 0));
            int port = ((IPEndPoint)tcp.LocalEndPoint!).Port;
            using Socket udp = Open(address, SocketType.Dgram, ProtocolType.Udp);
            try
            {
                udp.Bind(new IPEndPoint(address, port));
                if (taken is null || !taken.Contains(port))
                {
                    return port;
                }
            }
            catch (SocketException) when (attempt < 16)
            {
                // Taken over UDP: another.
            }
        }
    }

    // [::] as the servers bind it: dual-stack, so the port is free for IPv4 too.
    private static Socket Open(IPAddress address, SocketType type, ProtocolType protocol)
    {
        Socket socket = new(address.AddressFamily, type, protocol);
        if (address.Equals(IPAddress.IPv6Any))
        {
            socket.DualMode = true;
        }

        return socket;
    }
}
