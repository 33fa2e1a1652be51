using System.Net;
using CoapNet.Channels;
using CoapNet.Transports;

namespace CoapNet.WebSockets;

/// <summary>
/// CoAP over WebSockets for a client (RFC 8323 section 4): coap+ws over a plain WebSocket, coaps+ws over one in TLS,
/// each to <c>/.well-known/coap</c> on the URI's authority with the subprotocol "coap". Register it by its scheme in
/// <see cref="Client.CoapClientOptions.Transports"/>; the client opens one connection per server and reuses it.
/// </summary>
/// <remarks>
/// WebSocket-level keep-alive pings are off: RFC 8323 section 4.4 leaves connection health to CoAP's own Ping/Pong
/// (<see cref="Client.CoapClient"/>'s ping), which the connection layer answers. A coaps+ws client trusts and presents
/// certificates as <see cref="Client.CoapClientOptions.Tls"/> says, as a coaps+tcp client does. A server of these schemes
/// runs on ASP.NET Core (NetCoap.AspNetCore), whose Kestrel owns the port, so this factory does not listen.
/// </remarks>
/// <example>
/// <code>
/// CoapClientOptions options = new();
/// options.Transports.Add(new CoapWebSocketTransportFactory(secure: false));
/// options.Transports.Add(new CoapWebSocketTransportFactory(secure: true));
/// using CoapClient client = new(options);
/// CoapResponse response = await client.GetAsync(new Uri("coap+ws://example.com/hello"));
/// </code>
/// </example>
public sealed class CoapWebSocketTransportFactory : CoapConnectionTransportFactory
{
    /// <summary>The scheme of CoAP over a plain WebSocket, "coap+ws" (RFC 8323 section 8.3).</summary>
    public const string PlainScheme = "coap+ws";

    /// <summary>The scheme of CoAP over a WebSocket in TLS, "coaps+ws" (RFC 8323 section 8.4).</summary>
    public const string SecureScheme = "coaps+ws";

    /// <summary>A factory for coap+ws (port 80 by default) or, when <paramref name="secure"/>, coaps+ws (port 443).</summary>
    /// <param name="secure">True for coaps+ws, a WebSocket in TLS.</param>
    public CoapWebSocketTransportFactory(bool secure)
        : base(secure ? SecureScheme : PlainScheme, secure ? 443 : 80)
    {
        IsSecure = secure;
    }

    /// <summary>True for coaps+ws.</summary>
    public bool IsSecure { get; }

    /// <summary>Refused: a server of coap+ws and coaps+ws is an ASP.NET Core application, whose Kestrel owns the port.</summary>
    /// <param name="localEndPoint">The endpoint's address.</param>
    /// <param name="context">The server and the endpoint.</param>
    /// <returns>Nothing: it throws.</returns>
    /// <exception cref="InvalidOperationException">Always, saying what serves these schemes instead.</exception>
    public override IConnectionListener Listen(IPEndPoint localEndPoint, CoapTransportContext context)
        => throw new InvalidOperationException(
            $"{Scheme}://{localEndPoint} cannot be listened on by CoapServer itself: CoAP over WebSockets is served by ASP.NET Core, whose Kestrel owns the port. Add NetCoap.AspNetCore, call services.AddCoapWebSockets() and app.MapCoapWebSockets().");

    /// <inheritdoc/>
    public override IConnectionFactory Connect(CoapTransportContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        return new WebSocketConnectionFactory(this, context);
    }

    /// <summary>The peer keeps the URI's host: it is the HTTP Host of the handshake and, over TLS, the name sent as SNI and checked in the server's certificate.</summary>
    /// <param name="endPoint">The address the host resolved to.</param>
    /// <param name="host">The URI's host.</param>
    /// <returns>The peer.</returns>
    public override CoapPeer CreatePeer(IPEndPoint endPoint, string host) => CoapPeer.ForHost(Scheme, endPoint, string.IsNullOrEmpty(host) ? null : host);
}
