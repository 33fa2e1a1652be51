using System.Net;
using CoapNet.Channels;
using CoapNet.Transports;
using CoapNet.WebSockets;

namespace CoapNet.AspNetCore;

/// <summary>
/// coap+ws or coaps+ws on a server (RFC 8323 section 4), registered by its scheme like any transport: the endpoint's
/// listener is the ASP.NET Core application, whose Kestrel owns the port, so binding the endpoint opens the
/// <see cref="CoapWebSocketHub"/>'s listener of the scheme, which the WebSockets mapped by MapCoapWebSockets feed.
/// </summary>
internal sealed class WebSocketServerTransportFactory : CoapConnectionTransportFactory
{
    private readonly CoapWebSocketHub _hub;
    private readonly CoapWebSocketTransportFactory _client;

    public WebSocketServerTransportFactory(CoapWebSocketHub hub, bool secure)
        : base(secure ? CoapWebSocketTransportFactory.SecureScheme : CoapWebSocketTransportFactory.PlainScheme, secure ? 443 : 80)
    {
        _hub = hub;
        _client = new CoapWebSocketTransportFactory(secure);
    }

    public override IConnectionListener Listen(IPEndPoint localEndPoint, CoapTransportContext context) => _hub.Open(Scheme, localEndPoint, context);

    // A server never dials out (RFC 8323 section 3.3); a client given the server's registry reaches servers as the client factory does.
    public override IConnectionFactory Connect(CoapTransportContext context) => _client.Connect(context);

    public override CoapPeer CreatePeer(IPEndPoint endPoint, string host) => _client.CreatePeer(endPoint, host);
}
