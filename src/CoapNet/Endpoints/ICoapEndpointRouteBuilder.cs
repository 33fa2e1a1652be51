using CoapNet.Messages;

namespace CoapNet.Endpoints;

/// <summary>
/// Where handlers with bound parameters are mapped: a <see cref="Server.CoapServer"/>, a route group
/// (<see cref="CoapRouteGroupBuilder"/>), or a host. <c>MapGet(template, Delegate)</c> and its siblings
/// (<see cref="CoapEndpointRouteBuilderExtensions"/>) are compiled into calls of <see cref="MapEndpoint"/> by CoapNet's
/// source generator, which writes each handler's binding code.
/// </summary>
public interface ICoapEndpointRouteBuilder
{
    /// <summary>What bound handlers take from the application: JSON metadata, services, the default format.</summary>
    CoapHandlerOptions HandlerOptions { get; }

    /// <summary>Maps a handler whose binding code the source generator wrote; applications call the <c>MapX</c> methods instead.</summary>
    /// <param name="method">GET, POST, PUT, DELETE, FETCH, PATCH or iPATCH.</param>
    /// <param name="template">The route template, relative to this builder's prefix.</param>
    /// <param name="invoker">The generated binding and invocation code for one handler.</param>
    /// <returns>A builder for the endpoint's filters, authorization and discovery attributes.</returns>
    /// <exception cref="ArgumentException">The template is invalid, the method is already mapped on it, or a parameter cannot be bound (the message names it).</exception>
    /// <exception cref="InvalidOperationException">The server has started, or a parameter needs something the options lack (the message says what).</exception>
    CoapEndpointBuilder MapEndpoint(CoapCode method, string template, CoapEndpointInvoker invoker);
}
