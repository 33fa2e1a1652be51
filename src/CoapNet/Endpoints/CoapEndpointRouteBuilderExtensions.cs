using CoapNet.Messages;

namespace CoapNet.Endpoints;

/// <summary>
/// Maps handlers written the way minimal APIs are: <c>MapGet("/lamps/{id:int}", (int id, LampStore store) =&gt; ...)</c>.
/// Parameters are bound from route values, Uri-Query, the payload (by Content-Format), services, the request, the peer
/// and the cancellation token; the returned value becomes the response (an object as JSON or CBOR by the Accept
/// option, an <see cref="ICoapResult"/>, text, bytes or a <see cref="CoapResponse"/>).
/// </summary>
/// <remarks>
/// CoapNet's source generator (shipped in the package under analyzers/dotnet/cs) compiles each of these calls into the
/// binding code for its delegate, through a C# interceptor: nothing is reflected on at run time, so a trimmed or
/// Native AOT server keeps every handler. A call the generator did not compile throws <see cref="InvalidOperationException"/>
/// when it is made, never falling back to reflection. A handler that takes only a <see cref="Server.CoapRequest"/> and
/// returns a <see cref="CoapResponse"/> still uses <see cref="Server.CoapServer"/>'s own overloads.
/// </remarks>
public static class CoapEndpointRouteBuilderExtensions
{
    /// <summary>Maps GET to a handler with bound parameters.</summary>
    /// <param name="routes">The server, group or host.</param>
    /// <param name="template">The route template; parameters may carry constraints ("{id:int}", "{id:guid}", ...).</param>
    /// <param name="handler">A lambda or method: its parameters are bound per request, its result becomes the response.</param>
    /// <returns>A builder for the endpoint's filters, authorization and discovery attributes.</returns>
    /// <exception cref="ArgumentException">The template is invalid, the method is already mapped on it, or a parameter cannot be bound.</exception>
    /// <exception cref="InvalidOperationException">The call was not compiled by CoapNet's source generator, or the server has started.</exception>
    public static CoapEndpointBuilder MapGet(this ICoapEndpointRouteBuilder routes, string template, Delegate handler) => throw NotGenerated(routes, template, handler, "MapGet");

    /// <summary>Maps POST to a handler with bound parameters.</summary>
    /// <inheritdoc cref="MapGet(ICoapEndpointRouteBuilder, string, Delegate)"/>
    public static CoapEndpointBuilder MapPost(this ICoapEndpointRouteBuilder routes, string template, Delegate handler) => throw NotGenerated(routes, template, handler, "MapPost");

    /// <summary>Maps PUT to a handler with bound parameters.</summary>
    /// <inheritdoc cref="MapGet(ICoapEndpointRouteBuilder, string, Delegate)"/>
    public static CoapEndpointBuilder MapPut(this ICoapEndpointRouteBuilder routes, string template, Delegate handler) => throw NotGenerated(routes, template, handler, "MapPut");

    /// <summary>Maps DELETE to a handler with bound parameters.</summary>
    /// <inheritdoc cref="MapGet(ICoapEndpointRouteBuilder, string, Delegate)"/>
    public static CoapEndpointBuilder MapDelete(this ICoapEndpointRouteBuilder routes, string template, Delegate handler) => throw NotGenerated(routes, template, handler, "MapDelete");

    /// <summary>Maps FETCH (RFC 8132) to a handler with bound parameters.</summary>
    /// <inheritdoc cref="MapGet(ICoapEndpointRouteBuilder, string, Delegate)"/>
    public static CoapEndpointBuilder MapFetch(this ICoapEndpointRouteBuilder routes, string template, Delegate handler) => throw NotGenerated(routes, template, handler, "MapFetch");

    /// <summary>Maps PATCH (RFC 8132) to a handler with bound parameters.</summary>
    /// <inheritdoc cref="MapGet(ICoapEndpointRouteBuilder, string, Delegate)"/>
    public static CoapEndpointBuilder MapPatch(this ICoapEndpointRouteBuilder routes, string template, Delegate handler) => throw NotGenerated(routes, template, handler, "MapPatch");

    /// <summary>Maps iPATCH (RFC 8132) to a handler with bound parameters.</summary>
    /// <inheritdoc cref="MapGet(ICoapEndpointRouteBuilder, string, Delegate)"/>
    public static CoapEndpointBuilder MapIPatch(this ICoapEndpointRouteBuilder routes, string template, Delegate handler) => throw NotGenerated(routes, template, handler, "MapIPatch");

    /// <summary>
    /// Makes a route group: endpoints mapped through it get <paramref name="prefix"/> in front of their templates and carry
    /// its filters, authorization and discovery attributes.
    /// </summary>
    /// <param name="routes">The server, group or host.</param>
    /// <param name="prefix">The prefix, such as "/lamps"; it starts with '/'.</param>
    /// <returns>The group.</returns>
    /// <exception cref="ArgumentException">The prefix does not start with '/'.</exception>
    public static CoapRouteGroupBuilder MapGroup(this ICoapEndpointRouteBuilder routes, string prefix)
    {
        ArgumentNullException.ThrowIfNull(routes);
        return new CoapRouteGroupBuilder(routes, CoapRouteGroupBuilder.CheckPrefix(prefix));
    }

    private static InvalidOperationException NotGenerated(ICoapEndpointRouteBuilder routes, string template, Delegate handler, string method)
    {
        ArgumentNullException.ThrowIfNull(routes);
        ArgumentNullException.ThrowIfNull(template);
        ArgumentNullException.ThrowIfNull(handler);
        return new InvalidOperationException(
            $"{method}(\"{template}\", ...) was not compiled by CoapNet's source generator, which writes the binding code of a handler with parameters "
            + "(CoapNet does not bind by reflection). Reference the NetCoap package, or add CoapNet.Generators as an analyzer, with C# 12 or later and "
            + "'CoapNet.Generated' in the InterceptorsNamespaces property (the package's build props add it); the handler must be a lambda or a method, "
            + "not a Delegate variable. A handler of a CoapRequest returning a CoapResponse needs no generator: use CoapServer.MapGet's own overloads.");
    }
}
