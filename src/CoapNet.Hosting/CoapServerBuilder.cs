using System.Diagnostics.CodeAnalysis;
using System.Reflection;
using CoapNet.Messages;
using CoapNet.Server;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;

namespace CoapNet.Hosting;

/// <summary>
/// Maps the routes of the hosted <see cref="CoapServer"/>: handlers through a callback that gets the
/// service provider, and resource classes resolved from dependency injection in a fresh scope per request.
/// Returned by <see cref="CoapServiceCollectionExtensions.AddCoapServer(IServiceCollection, Action{CoapServerOptions}?)"/>.
/// </summary>
public sealed class CoapServerBuilder
{
    private readonly List<Action<CoapServer, IServiceProvider>> _maps;

    internal CoapServerBuilder(IServiceCollection services, List<Action<CoapServer, IServiceProvider>> maps)
    {
        Services = services;
        _maps = maps;
    }

    /// <summary>The services the server is registered in.</summary>
    public IServiceCollection Services { get; }

    /// <summary>
    /// Adds a callback that maps routes when the server is created, before it starts; it gets the root
    /// service provider (singletons only: resolve scoped services per request through <see cref="MapResource{TResource}(string, Action{CoapRouteBuilder}?)"/>).
    /// </summary>
    /// <param name="map">The callback, such as <c>(server, services) =&gt; server.MapGet("/time", ...)</c>.</param>
    /// <returns>This builder.</returns>
    public CoapServerBuilder Map(Action<CoapServer, IServiceProvider> map)
    {
        ArgumentNullException.ThrowIfNull(map);
        _maps.Add(map);
        return this;
    }

    /// <summary>
    /// Maps a resource class under a route template. Each request gets a new dependency injection scope,
    /// a <typeparamref name="TResource"/> resolved from it (registered as scoped here unless it already is),
    /// and the method it overrides for the request's method; the scope is disposed when the answer is
    /// ready. The methods it overrides are the methods mapped, and its properties are its discovery
    /// attributes, as with <see cref="CoapServer.MapResource(string, CoapResource)"/>; to read those, one
    /// instance is resolved when the server is created, in a scope of its own, so keep side effects out of
    /// the constructor. An observable resource's instances live one request each, so notify its observers
    /// through the server: <see cref="CoapServer.NotifyObservers(string)"/> with the template.
    /// </summary>
    /// <typeparam name="TResource">The resource class.</typeparam>
    /// <param name="template">The route template, such as "/lamps/{id}".</param>
    /// <param name="configure">Further discovery attributes for the route, or null.</param>
    /// <returns>This builder.</returns>
    /// <exception cref="ArgumentException">The resource overrides no method (raised when the server is created).</exception>
    public CoapServerBuilder MapResource<[DynamicallyAccessedMembers(ResourceMembers)] TResource>(string template, Action<CoapRouteBuilder>? configure = null)
        where TResource : CoapResource
    {
        ArgumentNullException.ThrowIfNull(template);
        Services.TryAddScoped<TResource>();
        return Map((server, services) =>
        {
            CoapRouteBuilder route = ScopedResource<TResource>.Map(server, template, services);
            configure?.Invoke(route);
        });
    }

    /// <summary>Maps the methods a resource class overrides to handlers that resolve it per request.</summary>
    // What trimming and Native AOT must keep of a resource class: the constructor DI calls, and the public methods
    // whose overrides are looked up when it is mapped.
    private const DynamicallyAccessedMemberTypes ResourceMembers = DynamicallyAccessedMemberTypes.PublicConstructors | DynamicallyAccessedMemberTypes.PublicMethods;

    private static class ScopedResource<[DynamicallyAccessedMembers(ResourceMembers)] TResource>
        where TResource : CoapResource
    {
        public static CoapRouteBuilder Map(CoapServer server, string template, IServiceProvider services)
        {
            IServiceScopeFactory scopes = services.GetRequiredService<IServiceScopeFactory>();
            (CoapCode Method, string Sync, string Async, Func<CoapResource, CoapRequest, CoapResponse> Call, Func<CoapResource, CoapRequest, CancellationToken, ValueTask<CoapResponse>> CallAsync)[] methods =
            [
                (CoapCode.Get, nameof(CoapResource.Get), nameof(CoapResource.GetAsync), (r, q) => r.Get(q), (r, q, c) => r.GetAsync(q, c)),
                (CoapCode.Post, nameof(CoapResource.Post), nameof(CoapResource.PostAsync), (r, q) => r.Post(q), (r, q, c) => r.PostAsync(q, c)),
                (CoapCode.Put, nameof(CoapResource.Put), nameof(CoapResource.PutAsync), (r, q) => r.Put(q), (r, q, c) => r.PutAsync(q, c)),
                (CoapCode.Delete, nameof(CoapResource.Delete), nameof(CoapResource.DeleteAsync), (r, q) => r.Delete(q), (r, q, c) => r.DeleteAsync(q, c)),
                (CoapCode.Fetch, nameof(CoapResource.Fetch), nameof(CoapResource.FetchAsync), (r, q) => r.Fetch(q), (r, q, c) => r.FetchAsync(q, c)),
                (CoapCode.Patch, nameof(CoapResource.Patch), nameof(CoapResource.PatchAsync), (r, q) => r.Patch(q), (r, q, c) => r.PatchAsync(q, c)),
                (CoapCode.IPatch, nameof(CoapResource.IPatch), nameof(CoapResource.IPatchAsync), (r, q) => r.IPatch(q), (r, q, c) => r.IPatchAsync(q, c)),
            ];

            CoapRouteBuilder? route = null;
            foreach (var method in methods)
            {
                // Registration-time reflection on the type, as CoapServer.MapResource does on an instance: an async
                // override runs as an async handler; a sync-only one stays synchronous, on the server's blocking workers.
                if (IsOverridden(method.Async, typeof(CancellationToken)))
                {
                    var call = method.CallAsync;
                    route = server.Map(method.Method, template, async (request, cancellationToken) =>
                    {
                        AsyncServiceScope scope = scopes.CreateAsyncScope();
                        await using (scope.ConfigureAwait(false))
                        {
                            return await call(scope.ServiceProvider.GetRequiredService<TResource>(), request, cancellationToken).ConfigureAwait(false);
                        }
                    });
                }
                else if (IsOverridden(method.Sync))
                {
                    var call = method.Call;
                    route = server.Map(method.Method, template, request =>
                    {
                        using IServiceScope scope = scopes.CreateScope();
                        return call(scope.ServiceProvider.GetRequiredService<TResource>(), request);
                    });
                }
            }

            if (route is null)
            {
                throw new ArgumentException($"{typeof(TResource).Name} overrides no method (Get, GetAsync, Put, ...), so it would answer nothing.", nameof(TResource));
            }

            // The discovery attributes are properties of an instance: read them once, from one resolved in a scope of its own.
            using (IServiceScope scope = scopes.CreateScope())
            {
                CoapResource resource = scope.ServiceProvider.GetRequiredService<TResource>();
                if (resource.Title is string title)
                {
                    route.WithTitle(title);
                }

                route.WithResourceType([.. resource.ResourceTypes]).WithInterface([.. resource.InterfaceDescriptions])
                    .Produces([.. resource.ContentFormats]).Accepts([.. resource.AcceptedContentFormats]);
                if (resource.IsObservable)
                {
                    route.Observable();
                }
            }

            if (IsOverridden(nameof(CoapResource.GetState)))
            {
                // Conditional requests (RFC 7252 section 5.10.8) ask the resource's state before its handler: in a scope of its own.
                route.WithState(request =>
                {
                    using IServiceScope scope = scopes.CreateScope();
                    return scope.ServiceProvider.GetRequiredService<TResource>().GetState(request);
                });
            }

            return route;
        }

        private static bool IsOverridden(string name, params Type[] extra)
        {
            MethodInfo? method = typeof(TResource).GetMethod(name, BindingFlags.Public | BindingFlags.Instance, [typeof(CoapRequest), .. extra]);
            return method is not null && method.GetBaseDefinition().DeclaringType != method.DeclaringType;
        }
    }
}
