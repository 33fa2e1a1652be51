using System.Net;
using CoapNet.Channels;
using CoapNet.Transports;

namespace CoapNet.Cli.Transports;

/// <summary>
/// The tool's stand-in for a datagram scheme's transport (coap, and coaps under DTLS): the scheme, port and peers of the
/// factory it replaces, with a client's socket connected to the one server the command talks to
/// (<see cref="ConnectedUdpTransport"/>), so an ICMP port unreachable ends the command at once.
/// </summary>
/// <param name="inner">The factory registered for the scheme.</param>
/// <param name="server">The server the command talks to.</param>
/// <param name="onPortUnreachable">Called each time the server's host answers with ICMP port unreachable.</param>
internal sealed class ConnectedUdpTransportFactory(CoapDatagramTransportFactory inner, IPEndPoint server, Action<IPEndPoint> onPortUnreachable)
    : CoapDatagramTransportFactory(inner.Scheme, inner.DefaultPort)
{
    /// <inheritdoc/>
    public override IDatagramTransport Bind(IPEndPoint localEndPoint, CoapTransportContext context) => inner.Bind(localEndPoint, context);

    /// <inheritdoc/>
    public override IDatagramTransport Open(CoapTransportContext context) => new ConnectedUdpTransport(server, onPortUnreachable);

    /// <inheritdoc/>
    public override CoapPeer CreatePeer(IPEndPoint endPoint, string host) => inner.CreatePeer(endPoint, host);

    /// <inheritdoc/>
    public override string? DescribeMissingMiddleware(CoapTransportContext context) => inner.DescribeMissingMiddleware(context);

    /// <summary>Replaces every datagram scheme's factory in <paramref name="transports"/> with one connected to <paramref name="server"/>.</summary>
    /// <param name="transports">The client's transports.</param>
    /// <param name="server">The server the command talks to.</param>
    /// <param name="onPortUnreachable">Called on an ICMP port unreachable.</param>
    public static void ConnectAll(CoapTransportRegistry transports, IPEndPoint server, Action<IPEndPoint> onPortUnreachable)
    {
        foreach (string scheme in transports.Schemes.ToArray())
        {
            if (transports.Find(scheme) is CoapDatagramTransportFactory datagrams)
            {
                transports.Add(new ConnectedUdpTransportFactory(datagrams, server, onPortUnreachable));
            }
        }
    }
}
