using CoapNet.Messages;

namespace CoapNet.Endpoints;

/// <summary>
/// What a handler may return instead of a plain object: a response described by intent (<see cref="CoapResults"/>:
/// Created with its location, NotFound, a Problem with a diagnostic, content to negotiate), made into a
/// <see cref="CoapResponse"/> once the request's Accept and the server's formats are known.
/// </summary>
public interface ICoapResult
{
    /// <summary>Makes the response.</summary>
    /// <param name="context">The request's context (its Accept option, the server's JSON metadata).</param>
    /// <returns>The response.</returns>
    CoapResponse ToResponse(CoapEndpointContext context);
}
