using CoapNet.AspNetCore.Explorer;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;

namespace CoapNet.AspNetCore;

/// <summary>Maps the CoAP explorer: a page in the browser that explores the server through its CoAP over WebSockets endpoint.</summary>
public static class CoapExplorerEndpointRouteBuilderExtensions
{
    /// <summary>
    /// Maps the CoAP explorer at <paramref name="path"/>: a page (HTML, CSS and JavaScript inside this package, nothing
    /// from elsewhere) that opens the server's CoAP over WebSockets endpoint
    /// (<see cref="CoapWebSocketEndpointRouteBuilderExtensions.MapCoapWebSockets"/>) from the browser itself, lists the
    /// resources of /.well-known/core with their link attributes, sends GET, POST, PUT, DELETE and FETCH with the options
    /// chosen, shows payloads as text, JSON, CBOR diagnostic notation or hex, observes a resource with a chart of its
    /// numeric values, transfers bodies block-wise with a progress bar and logs every message. Its files are under
    /// <c>{path}/coap-explorer/</c>.
    /// </summary>
    /// <param name="endpoints">The application's routes.</param>
    /// <param name="path">Where the page is: "/" (the default) or a path such as "/explorer".</param>
    /// <returns>The builder of the page's endpoints: <c>RequireAuthorization()</c> and the other conventions apply to all of them.</returns>
    /// <exception cref="ArgumentException"><paramref name="path"/> does not start with '/'.</exception>
    /// <example>
    /// <code>
    /// app.MapCoapWebSockets();
    /// app.MapCoapExplorer();   // http://host:port/
    /// </code>
    /// </example>
    public static IEndpointConventionBuilder MapCoapExplorer(this IEndpointRouteBuilder endpoints, string path = "/")
    {
        ArgumentNullException.ThrowIfNull(endpoints);
        ArgumentNullException.ThrowIfNull(path);
        if (!path.StartsWith('/'))
        {
            throw new ArgumentException($"The explorer's path must start with '/', not \"{path}\".", nameof(path));
        }

        RouteGroupBuilder group = endpoints.MapGroup(path.TrimEnd('/'));
        // RequestDelegates, not minimal-API handlers: nothing to bind, so no reflection (the package is AOT-compatible).
        group.MapGet("/", (RequestDelegate)ExplorerFiles.ServePageAsync).WithDisplayName("CoAP explorer");
        group.MapGet("/" + ExplorerFiles.Folder + "/{file}", (RequestDelegate)ExplorerFiles.ServeFileAsync).WithDisplayName("CoAP explorer's files");
        return group;
    }
}
