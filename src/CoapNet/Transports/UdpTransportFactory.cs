using System.Net;

namespace CoapNet.Transports;

/// <summary>
/// UDP, for coap (RFC 7252) and, under DTLS, coaps (section 9.1): a <see cref="UdpTransport"/> bound as the server's or the
/// client's <see cref="UdpTransportOptions"/> say. A coaps endpoint's socket carries coap until CoapNet.Dtls's
/// <c>UseDtls</c> wraps it.
/// </summary>
internal sealed class UdpTransportFactory(string scheme, int defaultPort, bool secured) : CoapDatagramTransportFactory(scheme, defaultPort)
{
    public override IDatagramTransport Bind(IPEndPoint localEndPoint, CoapTransportContext context) => new UdpTransport(localEndPoint, context.Udp);

    /// <summary>
    /// The client's socket: [::]:0 (dual-stack, a free port), or <see cref="Client.CoapClientOptions.LocalEndPoint"/> for coap;
    /// another scheme's socket takes that endpoint's address with a free port, so the two never collide.
    /// </summary>
    public override IDatagramTransport Open(CoapTransportContext context)
    {
        IPEndPoint? local = context.Client?.LocalEndPoint;
        IPEndPoint bind = local is null ? new IPEndPoint(IPAddress.IPv6Any, 0)
            : string.Equals(Scheme, Channels.CoapPeer.UdpScheme, StringComparison.Ordinal) ? local
            : new IPEndPoint(local.Address, 0);
        return new UdpTransport(bind, context.Udp);
    }

    public override string? DescribeMissingMiddleware(CoapTransportContext context)
    {
        if (!secured)
        {
            return null;
        }

        return context.Listener is { } listener
            ? $"secure it with UseDtls(...) from CoapNet.Dtls on the endpoint, or in configuration with a Dtls section ({listener.Name ?? "Coap:Endpoints:NAME"}:Dtls) and services.AddCoapsEndpoints()"
            : "secure it with options.UseDtls(...) from CoapNet.Dtls on the CoapClientOptions, or in a host with services.AddCoapsClient() and a Coap:Client:Dtls section";
    }
}
