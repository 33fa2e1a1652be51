using System.Net;
using System.Net.Sockets;
using CoapNet.Transports;

namespace CoapNet.Samples.Hosted;

/// <summary>What to pass instead of the endpoints a start could not bind: each one's Url at a port free right now.</summary>
internal static class FreePorts
{
    /// <summary>One "--Coap:Endpoints:{name}:Url=scheme://address:port" per endpoint of <paramref name="failure"/> that configuration named.</summary>
    public static IEnumerable<string> Moves(CoapBindException failure)
    {
        foreach (CoapBindException endpoint in failure.Failures)
        {
            if (endpoint.Name is { } name)
            {
                yield return $"--{name}:Url={new CoapAddress(endpoint.Scheme, new IPEndPoint(endpoint.EndPoint.Address, Find(endpoint.EndPoint.Address)))}";
            }
        }
    }

    // A port the OS gives for TCP that UDP can have too, so the hint fits every transport; the OS's range is wide enough
    // that a few tries find one.
    private static int Find(IPAddress address)
    {
        for (int attempt = 0; ; attempt++)
        {
            using Socket tcp = new(address.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
            tcp.Bind(new IPEndPoint(address, 0));
            int port = ((IPEndPoint)tcp.LocalEndPoint!).Port;
            using Socket udp = new(address.AddressFamily, SocketType.Dgram, ProtocolType.Udp);
            try
            {
                udp.Bind(new IPEndPoint(address, port));
                return port;
            }
            catch (SocketException) when (attempt < 16)
            {
                // Taken over UDP: another.
            }
        }
    }
}
