using CoapNet.Messages;

namespace CoapNet.Endpoints;

/// <summary>The rest of an endpoint's pipeline, as a filter sees it: the next filter, or the handler.</summary>
/// <param name="context">The request's context.</param>
/// <returns>The response.</returns>
public delegate ValueTask<CoapResponse> CoapEndpointFilterDelegate(CoapEndpointContext context);

/// <summary>
/// Code around an endpoint's handler, on the endpoint or its group: it runs before the handler (inspect, refuse), may
/// answer in its place by not calling <c>next</c> (short-circuit), and sees or changes the response after it.
/// </summary>
/// <remarks>
/// Filters run after authorization, outermost group first, then the endpoint's own, in the order added; the chain is
/// fixed at the endpoint's first request. A synchronous handler's chain runs on its blocking lane, so a filter that
/// awaits there holds that lane's thread as a blocking handler would.
/// </remarks>
public interface ICoapEndpointFilter
{
    /// <summary>Runs the filter.</summary>
    /// <param name="context">The request's context.</param>
    /// <param name="next">The rest of the pipeline; not calling it answers with this filter's response instead.</param>
    /// <returns>The response.</returns>
    ValueTask<CoapResponse> InvokeAsync(CoapEndpointContext context, CoapEndpointFilterDelegate next);
}

/// <summary>A filter given as a function.</summary>
internal sealed class DelegateEndpointFilter(Func<CoapEndpointContext, CoapEndpointFilterDelegate, ValueTask<CoapResponse>> filter) : ICoapEndpointFilter
{
    public ValueTask<CoapResponse> InvokeAsync(CoapEndpointContext context, CoapEndpointFilterDelegate next) => filter(context, next);
}
