using CoapNet.Messages;

namespace CoapNet.Server;

/// <summary>
/// A resource as a class, in the style of a controller: override the methods it offers, each
/// either synchronously (<see cref="Get"/>) or asynchronously (<see cref="GetAsync"/>), and register
/// it with <see cref="CoapServer.MapResource(string, CoapResource)"/>. A method that is not
/// overridden answers 4.05 Method Not Allowed; the overridden ones are the methods the resource declares.
/// </summary>
/// <remarks>The discovery attributes (RFC 6690) are taken from the properties when the resource is registered.</remarks>
// The server finds which handlers a resource overrides by reflection over its public methods; this keeps them
// (and lets GetType() satisfy the trimmer) under trimming and Native AOT, for every derived resource.
[System.Diagnostics.CodeAnalysis.DynamicallyAccessedMembers(System.Diagnostics.CodeAnalysis.DynamicallyAccessedMemberTypes.PublicMethods)]
public abstract class CoapResource
{
    private readonly List<CoapRouteBuilder> _routes = [];

    /// <summary>The "title" attribute for discovery, or null.</summary>
    public virtual string? Title => null;

    /// <summary>The "rt" resource types for discovery.</summary>
    public virtual IReadOnlyList<string> ResourceTypes => [];

    /// <summary>The "if" interface descriptions for discovery.</summary>
    public virtual IReadOnlyList<string> InterfaceDescriptions => [];

    /// <summary>The Content-Formats the resource produces: "ct" in discovery, and 4.06 for a request whose Accept is not among them.</summary>
    public virtual IReadOnlyList<ushort> ContentFormats => [];

    /// <summary>The Content-Formats the resource accepts in request payloads: 4.15 for any other (empty: no check).</summary>
    public virtual IReadOnlyList<ushort> AcceptedContentFormats => [];

    /// <summary>True to make the resource observable (RFC 7641): GET with Observe=0 registers, <see cref="NotifyObservers"/> notifies, discovery announces "obs".</summary>
    public virtual bool IsObservable => false;

    /// <summary>
    /// The resource's state for conditional requests (RFC 7252 section 5.10.8), as
    /// <see cref="CoapRouteBuilder.WithState(Func{CoapRequest, CoapResourceState?})"/> describes: override it to have
    /// If-Match and If-None-Match answered 4.12 when they do not hold and a GET with the current ETag answered 2.03;
    /// a resource that does not override it answers them 4.02 Bad Option. Return null for a request whose target exposes no state.
    /// </summary>
    /// <param name="request">The request.</param>
    /// <returns>The state of the request's target, or null.</returns>
    public virtual CoapResourceState? GetState(CoapRequest request) => null;

    /// <summary>
    /// Tells the resource's observers that its state changed: each gets a notification made by running
    /// <see cref="Get"/> (or <see cref="GetAsync"/>) again (RFC 7641 section 4.2). Does nothing before
    /// the resource is registered or when nobody observes it.
    /// </summary>
    /// <returns>The number of observations notified.</returns>
    public int NotifyObservers()
    {
        CoapRouteBuilder[] routes;
        lock (_routes)
        {
            routes = [.. _routes];
        }

        int count = 0;
        foreach (CoapRouteBuilder route in routes)
        {
            count += route.NotifyObservers();
        }

        return count;
    }

    /// <summary>Records where the resource was registered, for <see cref="NotifyObservers"/>.</summary>
    internal void Attach(CoapRouteBuilder route)
    {
        lock (_routes)
        {
            _routes.Add(route);
        }
    }

    /// <summary>Handles GET synchronously.</summary>
    /// <param name="request">The request.</param>
    /// <returns>The response.</returns>
    public virtual CoapResponse Get(CoapRequest request) => NotAllowed();

    /// <summary>Handles GET asynchronously; by default runs <see cref="Get"/>.</summary>
    /// <param name="request">The request.</param>
    /// <param name="cancellationToken">Canceled when the server stops without waiting any longer.</param>
    /// <returns>The response.</returns>
    public virtual ValueTask<CoapResponse> GetAsync(CoapRequest request, CancellationToken cancellationToken) => new(Get(request));

    /// <summary>Handles POST synchronously.</summary>
    /// <inheritdoc cref="Get"/>
    public virtual CoapResponse Post(CoapRequest request) => NotAllowed();

    /// <summary>Handles POST asynchronously; by default runs <see cref="Post"/>.</summary>
    /// <inheritdoc cref="GetAsync"/>
    public virtual ValueTask<CoapResponse> PostAsync(CoapRequest request, CancellationToken cancellationToken) => new(Post(request));

    /// <summary>Handles PUT synchronously.</summary>
    /// <inheritdoc cref="Get"/>
    public virtual CoapResponse Put(CoapRequest request) => NotAllowed();

    /// <summary>Handles PUT asynchronously; by default runs <see cref="Put"/>.</summary>
    /// <inheritdoc cref="GetAsync"/>
    public virtual ValueTask<CoapResponse> PutAsync(CoapRequest request, CancellationToken cancellationToken) => new(Put(request));

    /// <summary>Handles DELETE synchronously.</summary>
    /// <inheritdoc cref="Get"/>
    public virtual CoapResponse Delete(CoapRequest request) => NotAllowed();

    /// <summary>Handles DELETE asynchronously; by default runs <see cref="Delete"/>.</summary>
    /// <inheritdoc cref="GetAsync"/>
    public virtual ValueTask<CoapResponse> DeleteAsync(CoapRequest request, CancellationToken cancellationToken) => new(Delete(request));

    /// <summary>Handles FETCH (RFC 8132) synchronously.</summary>
    /// <inheritdoc cref="Get"/>
    public virtual CoapResponse Fetch(CoapRequest request) => NotAllowed();

    /// <summary>Handles FETCH asynchronously; by default runs <see cref="Fetch"/>.</summary>
    /// <inheritdoc cref="GetAsync"/>
    public virtual ValueTask<CoapResponse> FetchAsync(CoapRequest request, CancellationToken cancellationToken) => new(Fetch(request));

    /// <summary>Handles PATCH (RFC 8132) synchronously.</summary>
    /// <inheritdoc cref="Get"/>
    public virtual CoapResponse Patch(CoapRequest request) => NotAllowed();

    /// <summary>Handles PATCH asynchronously; by default runs <see cref="Patch"/>.</summary>
    /// <inheritdoc cref="GetAsync"/>
    public virtual ValueTask<CoapResponse> PatchAsync(CoapRequest request, CancellationToken cancellationToken) => new(Patch(request));

    /// <summary>Handles iPATCH (RFC 8132) synchronously.</summary>
    /// <inheritdoc cref="Get"/>
    public virtual CoapResponse IPatch(CoapRequest request) => NotAllowed();

    /// <summary>Handles iPATCH asynchronously; by default runs <see cref="IPatch"/>.</summary>
    /// <inheritdoc cref="GetAsync"/>
    public virtual ValueTask<CoapResponse> IPatchAsync(CoapRequest request, CancellationToken cancellationToken) => new(IPatch(request));

    private static CoapResponse NotAllowed() => new(CoapCode.MethodNotAllowed);
}
