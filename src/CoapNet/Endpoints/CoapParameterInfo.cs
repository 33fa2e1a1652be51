namespace CoapNet.Endpoints;

/// <summary>Where a handler's parameter is bound from; the source generator decides it from the parameter's type and attributes.</summary>
public enum CoapParameterSource
{
    /// <summary>The <see cref="Server.CoapRequest"/>.</summary>
    Request,

    /// <summary>The <see cref="Channels.CoapPeer"/>, or its <see cref="Channels.CoapPeerIdentity"/>.</summary>
    Peer,

    /// <summary>The request's <see cref="System.Threading.CancellationToken"/> or <see cref="CoapEndpointContext"/>.</summary>
    Context,

    /// <summary>A route value (<c>[FromRoute]</c>): the template must capture it.</summary>
    Route,

    /// <summary>A Uri-Query argument (<c>[FromQuery]</c>).</summary>
    Query,

    /// <summary>A simple type without attribute: the route value when the template captures the name, else the Uri-Query argument.</summary>
    RouteOrQuery,

    /// <summary>The payload (<c>[FromBody]</c>, bytes, a stream).</summary>
    Body,

    /// <summary>A service from the request's scope (<c>[FromServices]</c>).</summary>
    Services,

    /// <summary>A complex type without attribute: a service when the provider knows its type, else the payload.</summary>
    ServicesOrBody,
}

/// <summary>One parameter of a handler, as the source generator describes it to the runtime; applications do not make these.</summary>
/// <param name="Name">The name it is bound by: the route parameter or Uri-Query argument, or the parameter's name in diagnostics.</param>
/// <param name="Source">Where it is bound from.</param>
/// <param name="Type">Its type, to ask the service provider and the payload formats about.</param>
/// <param name="IsOptional">True when it may be absent (nullable): absent, it is bound as null instead of answering 4.00.</param>
public sealed record CoapParameterInfo(string Name, CoapParameterSource Source, Type Type, bool IsOptional);
