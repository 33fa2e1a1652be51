using CoapNet.Endpoints;
using CoapNet.Messages;

namespace CoapNet.Server;

// Handlers with bound parameters (issue 26): the server is the root ICoapEndpointRouteBuilder, where the generated
// invokers become route handlers like any other; binding, filters and results live in Endpoints/.
public sealed partial class CoapServer : ICoapEndpointRouteBuilder
{
    /// <inheritdoc/>
    CoapHandlerOptions ICoapEndpointRouteBuilder.HandlerOptions => _options.Handlers;

    /// <inheritdoc/>
    CoapEndpointBuilder ICoapEndpointRouteBuilder.MapEndpoint(CoapCode method, string template, CoapEndpointInvoker invoker)
    {
        ArgumentNullException.ThrowIfNull(invoker);
        lock (_lifecycle)
        {
            if (_state != 0)
            {
                throw new InvalidOperationException("Routes are mapped before the server starts.");
            }

            CoapRoute route = _router.GetOrAdd(template);
            if (route.GetHandler(method) is not null)
            {
                throw new ArgumentException($"{method} {template} is already mapped.", nameof(method));
            }

            CoapEndpointBuilder endpoint = new(new CoapRouteBuilder(route, this));
            route.SetHandler(method, invoker.Attach(route, _options.Handlers, endpoint, continueOnCapturedContext: _options.Scheduler is not null));
            return endpoint;
        }
    }
}
