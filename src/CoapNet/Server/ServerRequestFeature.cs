using System.Diagnostics;
using CoapNet.Messaging;

namespace CoapNet.Server;

/// <summary>
/// What the server knows of a request beyond its message, kept as a feature of its exchange: its activity, the route that
/// matched, the values that route captured and the decoded query. Made only for a request that has one of these (a route
/// with parameters, a listener for traces or metrics, a handler reading the query), so everyday requests pay nothing.
/// </summary>
/// <remarks>Routing, the handler and the answer set these one after another, never at once.</remarks>
internal sealed class ServerRequestFeature
{
    /// <summary>The server's activity for this request, when something listens.</summary>
    public Activity? Activity { get; set; }

    /// <summary>The template of the route that matched, for metrics and traces (set only when something listens); null before routing or when none did.</summary>
    public string? Route { get; set; }

    /// <summary>The values the route's parameters captured; null when it has none.</summary>
    public Dictionary<string, string>? RouteValues { get; set; }

    /// <summary>The Uri-Query arguments, decoded once when a handler first asks for one.</summary>
    public string[]? QueryArguments { get; set; }

    /// <summary>The exchange's feature, or null when nothing was set.</summary>
    public static ServerRequestFeature? Of(CoapExchange exchange) => exchange.Features.Get<ServerRequestFeature>();

    /// <summary>The exchange's feature, made now when there is none.</summary>
    public static ServerRequestFeature For(CoapExchange exchange) => Of(exchange) ?? exchange.Features.GetOrSet(new ServerRequestFeature());
}
