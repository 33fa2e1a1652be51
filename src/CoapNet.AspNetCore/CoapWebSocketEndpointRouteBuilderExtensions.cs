using CoapNet.WebSockets;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;

namespace CoapNet.AspNetCore;

/// <summary>Maps the CoAP over WebSockets endpoint (RFC 8323 section 4) in an ASP.NET Core application.</summary>
public static class CoapWebSocketEndpointRouteBuilderExtensions
{
    /// <summary>
    /// Maps <c>/.well-known/coap</c>, where RFC 8323 section 4.1 puts the WebSocket endpoint on the authority (the path of
    /// a coap+ws URI is the CoAP resource's): a WebSocket with the subprotocol "coap" from an allowed origin
    /// (<see cref="CoapWebSocketOptions.AllowedOrigins"/>; others get 403) is accepted without WebSocket keep-alive pings and
    /// served by the hosted server's routes, as coap+ws over HTTP and coaps+ws over HTTPS; a request without the
    /// subprotocol gets 400, and one while the server is not running 503. The handlers see the peer's address and, as
    /// its identity (<see cref="Channels.CoapPeer.Identity"/>), the HTTP user authentication found, else the TLS client
    /// certificate.
    /// </summary>
    /// <param name="endpoints">The application's routes.</param>
    /// <returns>The endpoint's builder: <c>RequireAuthorization()</c> and the other ASP.NET Core conventions apply to the WebSocket's request.</returns>
    /// <exception cref="InvalidOperationException"><see cref="CoapWebSocketServiceCollectionExtensions.AddCoapWebSockets"/> was not called.</exception>
    public static IEndpointConventionBuilder MapCoapWebSockets(this IEndpointRouteBuilder endpoints)
    {
        ArgumentNullException.ThrowIfNull(endpoints);
        CoapWebSocketHub hub = endpoints.ServiceProvider.GetService<CoapWebSocketHub>()
            ?? throw new InvalidOperationException("MapCoapWebSockets needs the services of CoAP over WebSockets: call builder.Services.AddCoapWebSockets() first.");

        // The WebSocket middleware in the endpoint's own pipeline, so the application need not add it; its keep-alive is
        // off as well (RFC 8323 section 4.4: CoAP's Ping/Pong instead).
        IApplicationBuilder pipeline = endpoints.CreateApplicationBuilder();
        pipeline.UseWebSockets(new WebSocketOptions { KeepAliveInterval = TimeSpan.Zero });
        pipeline.Run(hub.HandleAsync);
        return endpoints.Map(CoapWebSocketConnection.Path, pipeline.Build()).WithDisplayName("CoAP over WebSockets");
    }
}
