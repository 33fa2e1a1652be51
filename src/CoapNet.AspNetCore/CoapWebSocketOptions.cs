namespace CoapNet.AspNetCore;

/// <summary>
/// Settings of the CoAP over WebSockets endpoint that <see cref="CoapWebSocketEndpointRouteBuilderExtensions.MapCoapWebSockets"/>
/// maps. The limits of each connection (message size, count, timeouts) are the server's
/// (<see cref="Messaging.CoapConnectionOptions"/> in <see cref="Server.CoapServerOptions.Connections"/>), as over TCP.
/// </summary>
public sealed class CoapWebSocketOptions
{
    /// <summary>
    /// The origins (<c>scheme://host[:port]</c>, as a browser sends them in the Origin header) whose pages may open the
    /// endpoint, besides the server's own; "*" allows every origin. A browser lets any page it shows open a WebSocket
    /// anywhere, with the user's cookies: without this check, a page elsewhere could PUT or DELETE through the endpoint
    /// in the user's name. A request with another Origin is refused with 403; one without an Origin (not a browser's) is
    /// not concerned. Empty by default: only the server's own pages.
    /// </summary>
    public IList<string> AllowedOrigins { get; } = [];
}
