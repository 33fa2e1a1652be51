using System.ComponentModel;
using CoapNet.Endpoints;
using CoapNet.Server;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

namespace CoapNet.Hosting;

/// <summary>
/// Maps handlers with bound parameters on the host, as minimal APIs do on a web application: after
/// <c>builder.Services.AddCoapServer()</c>, <c>IHost app = builder.Build(); app.MapGet("/lamps/{id:int}", (int id, LampStore store) =&gt; ...);</c>
/// then <c>app.Run()</c>. The routes go to the hosted <see cref="CoapServer"/>, which the host starts afterwards; its
/// handlers resolve services from the host's, in a scope per request.
/// </summary>
/// <remarks>
/// Like <see cref="CoapEndpointRouteBuilderExtensions"/>, each call is compiled by CoapNet's source generator into the
/// handler's binding code; a call it did not compile goes on to the server's own MapX, which throws
/// <see cref="InvalidOperationException"/> saying what to do.
/// </remarks>
public static class CoapHostEndpointRouteBuilderExtensions
{
    /// <summary>Maps GET on the hosted server to a handler with bound parameters.</summary>
    /// <param name="host">The built host, before it runs.</param>
    /// <param name="template">The route template, such as "/lamps/{id:int}".</param>
    /// <param name="handler">A lambda or method: its parameters are bound per request, its result becomes the response.</param>
    /// <returns>A builder for the endpoint's filters, authorization and discovery attributes.</returns>
    /// <exception cref="ArgumentException">The template is invalid, the method is already mapped on it, or a parameter cannot be bound.</exception>
    /// <exception cref="InvalidOperationException">The call was not compiled by the source generator, the host has no CoAP server (AddCoapServer), or it has started.</exception>
    public static CoapEndpointBuilder MapGet(this IHost host, string template, Delegate handler) => GetCoapRoutes(host).MapGet(template, handler);

    /// <summary>Maps POST on the hosted server to a handler with bound parameters.</summary>
    /// <inheritdoc cref="MapGet(IHost, string, Delegate)"/>
    public static CoapEndpointBuilder MapPost(this IHost host, string template, Delegate handler) => GetCoapRoutes(host).MapPost(template, handler);

    /// <summary>Maps PUT on the hosted server to a handler with bound parameters.</summary>
    /// <inheritdoc cref="MapGet(IHost, string, Delegate)"/>
    public static CoapEndpointBuilder MapPut(this IHost host, string template, Delegate handler) => GetCoapRoutes(host).MapPut(template, handler);

    /// <summary>Maps DELETE on the hosted server to a handler with bound parameters.</summary>
    /// <inheritdoc cref="MapGet(IHost, string, Delegate)"/>
    public static CoapEndpointBuilder MapDelete(this IHost host, string template, Delegate handler) => GetCoapRoutes(host).MapDelete(template, handler);

    /// <summary>Maps FETCH (RFC 8132) on the hosted server to a handler with bound parameters.</summary>
    /// <inheritdoc cref="MapGet(IHost, string, Delegate)"/>
    public static CoapEndpointBuilder MapFetch(this IHost host, string template, Delegate handler) => GetCoapRoutes(host).MapFetch(template, handler);

    /// <summary>Maps PATCH (RFC 8132) on the hosted server to a handler with bound parameters.</summary>
    /// <inheritdoc cref="MapGet(IHost, string, Delegate)"/>
    public static CoapEndpointBuilder MapPatch(this IHost host, string template, Delegate handler) => GetCoapRoutes(host).MapPatch(template, handler);

    /// <summary>Maps iPATCH (RFC 8132) on the hosted server to a handler with bound parameters.</summary>
    /// <inheritdoc cref="MapGet(IHost, string, Delegate)"/>
    public static CoapEndpointBuilder MapIPatch(this IHost host, string template, Delegate handler) => GetCoapRoutes(host).MapIPatch(template, handler);

    /// <summary>Makes a route group on the hosted server (see <see cref="CoapEndpointRouteBuilderExtensions.MapGroup"/>).</summary>
    /// <param name="host">The built host, before it runs.</param>
    /// <param name="prefix">The prefix, such as "/lamps".</param>
    /// <returns>The group.</returns>
    /// <exception cref="ArgumentException">The prefix does not start with '/'.</exception>
    /// <exception cref="InvalidOperationException">The host has no CoAP server (AddCoapServer).</exception>
    public static CoapRouteGroupBuilder MapGroup(this IHost host, string prefix) => GetCoapRoutes(host).MapGroup(prefix);

    /// <summary>The hosted server, as the generated code maps on it; applications call the <c>MapX</c> methods.</summary>
    /// <param name="host">The built host.</param>
    /// <returns>The server.</returns>
    /// <exception cref="InvalidOperationException">The host has no CoAP server (AddCoapServer).</exception>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public static ICoapEndpointRouteBuilder GetCoapRoutes(IHost host)
    {
        ArgumentNullException.ThrowIfNull(host);
        return host.Services.GetService<CoapServer>()
            ?? throw new InvalidOperationException("The host has no CoAP server: call builder.Services.AddCoapServer() before builder.Build().");
    }
}
