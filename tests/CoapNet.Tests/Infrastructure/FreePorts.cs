using System.Net;
using System.Net.Sockets;

namespace CoapNet.Tests.Infrastructure;

/// <summary>
/// Ports on 127.0.0.1 that are free at the moment of asking, for programs run as processes that take a port
/// number and cannot be given port 0 (libcoap's server, nginx, the sample server's TCP endpoint), and for a test
/// that binds a port again after closing it (a server restarted on its port, a check that a stopped server's socket
/// is gone).
/// </summary>
/// <remarks>
/// The ports come from below the system's ephemeral range, never from a bind to port 0. A port the system handed out
/// goes back to that range when closed, where any bind to port 0 (the other tests of this run, the other target
/// framework's test process beside it, a client socket) may be given it before the program or the restarted server
/// binds it again: four tests failed that way, now and then, on a loaded machine. Below the range only an explicit bind
/// to the same number can take it, and the number is drawn at random from thousands and checked free first.
/// </remarks>
internal static class FreePorts
{
    private static readonly (int Low, int High) Range = BelowEphemeral();

    /// <summary>A port free for both UDP and TCP, for a program that binds the same number for both.</summary>
    public static int UdpAndTcp()
    {
        for (int attempt = 0; ; attempt++)
        {
            int port = Random.Shared.Next(Range.Low, Range.High + 1);
            if (IsFree(port) || attempt >= 100)
            {
                return port;
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

    /// <summary>
    /// The ports below the ephemeral range: on Linux that range is in /proc/sys/net/ipv4/ip_local_port_range (32768 to
    /// 60999 by default); elsewhere it starts at 49152 (RFC 6335 section 6, Windows and macOS). 16,384 ports below it,
    /// and never the well-known ones.
    /// </summary>
    private static (int Low, int High) BelowEphemeral()
    {
        int first = 49152;
        try
        {
            string[] bounds = File.ReadAllText("/proc/sys/net/ipv4/ip_local_port_range").Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries);
            first = int.Parse(bounds[0], System.Globalization.CultureInfo.InvariantCulture);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException or IndexOutOfRangeException)
        {
            // Not Linux, or not readable: the IANA range.
        }

        // A range that starts among the registered ports leaves no room below it: the IANA one's neighbourhood then.
        first = first < 4096 ? 49152 : first;
        return (Math.Max(1024, first - 16384), first - 1);
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
