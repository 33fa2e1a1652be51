using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Server;

namespace CoapNet.Endpoints;

/// <summary>
/// What an endpoint and a route group share: filters, authorization and discovery attributes. A group's apply to every
/// endpoint mapped in it and in its nested groups.
/// </summary>
/// <typeparam name="TBuilder">The builder itself, so calls chain.</typeparam>
public abstract class CoapConventionBuilder<TBuilder>
    where TBuilder : CoapConventionBuilder<TBuilder>
{
    private readonly List<ICoapEndpointFilter> _filters = [];
    private readonly List<Func<CoapPeerIdentity, CoapRequest, bool>> _policies = [];
    private readonly List<Action<CoapRouteBuilder>> _routeConventions = [];
    private bool _requireIdentity;
    private bool _allowAnonymous;

    private protected CoapConventionBuilder()
    {
    }

    /// <summary>
    /// Adds a filter: it runs around the handler, after authorization, and may answer in its place (see
    /// <see cref="ICoapEndpointFilter"/>).
    /// </summary>
    /// <param name="filter">The filter.</param>
    /// <returns>This builder.</returns>
    /// <exception cref="InvalidOperationException">An endpoint it applies to has already served a request.</exception>
    public TBuilder AddFilter(ICoapEndpointFilter filter)
    {
        ArgumentNullException.ThrowIfNull(filter);
        lock (_filters)
        {
            ThrowIfFrozen();
            _filters.Add(filter);
        }

        return (TBuilder)this;
    }

    /// <summary>Adds a filter given as a function: <c>(context, next) =&gt; ...</c>.</summary>
    /// <param name="filter">The filter.</param>
    /// <returns>This builder.</returns>
    /// <exception cref="InvalidOperationException">An endpoint it applies to has already served a request.</exception>
    public TBuilder AddFilter(Func<CoapEndpointContext, CoapEndpointFilterDelegate, ValueTask<CoapResponse>> filter)
    {
        ArgumentNullException.ThrowIfNull(filter);
        return AddFilter(new DelegateEndpointFilter(filter));
    }

    /// <summary>
    /// Requires a peer with an authenticated identity (<see cref="CoapPeer.Identity"/>, from DTLS or TLS): a request
    /// without one gets 4.01 Unauthorized (RFC 7252 section 5.9.2.2) before any binding or filter runs.
    /// </summary>
    /// <returns>This builder.</returns>
    public TBuilder RequireAuthorization()
    {
        lock (_filters)
        {
            ThrowIfFrozen();
            _requireIdentity = true;
        }

        return (TBuilder)this;
    }

    /// <summary>
    /// Requires an authenticated peer that <paramref name="policy"/> allows: no identity gets 4.01 Unauthorized, a refusal
    /// 4.03 Forbidden (RFC 7252 sections 5.9.2.2 and 5.9.2.4). Every policy of the endpoint and its groups must allow.
    /// </summary>
    /// <param name="policy">Decides from the peer's identity and the request; it runs for every request, so keep it quick.</param>
    /// <returns>This builder.</returns>
    public TBuilder RequireAuthorization(Func<CoapPeerIdentity, CoapRequest, bool> policy)
    {
        ArgumentNullException.ThrowIfNull(policy);
        lock (_filters)
        {
            ThrowIfFrozen();
            _requireIdentity = true;
            _policies.Add(policy);
        }

        return (TBuilder)this;
    }

    /// <summary>Lets any peer in, whatever the groups around require (for a public resource inside a protected group).</summary>
    /// <returns>This builder.</returns>
    public TBuilder AllowAnonymous()
    {
        lock (_filters)
        {
            ThrowIfFrozen();
            _allowAnonymous = true;
        }

        return (TBuilder)this;
    }

    /// <summary>Adds "rt" resource types (RFC 6690 section 3.1) to the endpoint, or to every endpoint of the group.</summary>
    /// <param name="resourceTypes">The types, such as "lamp".</param>
    /// <returns>This builder.</returns>
    /// <exception cref="ArgumentException">A value is empty or has a space or a quote.</exception>
    public TBuilder WithResourceType(params string[] resourceTypes)
    {
        ArgumentNullException.ThrowIfNull(resourceTypes);
        string[] copy = [.. resourceTypes];
        return AddRouteConvention(route => route.WithResourceType(copy));
    }

    /// <summary>Adds "if" interface descriptions (RFC 6690 section 3.2) to the endpoint, or to every endpoint of the group.</summary>
    /// <param name="interfaces">The interfaces, such as "core.a".</param>
    /// <returns>This builder.</returns>
    /// <exception cref="ArgumentException">A value is empty or has a space or a quote.</exception>
    public TBuilder WithInterface(params string[] interfaces)
    {
        ArgumentNullException.ThrowIfNull(interfaces);
        string[] copy = [.. interfaces];
        return AddRouteConvention(route => route.WithInterface(copy));
    }

    /// <summary>The routes this builder's discovery attributes go to (its own, or those of the group's endpoints).</summary>
    private protected abstract IEnumerable<CoapRouteBuilder> Routes { get; }

    /// <summary>True once an endpoint this applies to has built its pipeline.</summary>
    private protected bool Frozen { get; set; }

    /// <summary>Applies this builder's discovery conventions to a route mapped under it.</summary>
    private protected void ApplyRouteConventions(CoapRouteBuilder route)
    {
        foreach (Action<CoapRouteBuilder> convention in _routeConventions)
        {
            convention(route);
        }
    }

    /// <summary>Adds this builder's filters and policies; returns whether it requires an identity, and whether it allows anyone.</summary>
    private protected (bool RequireIdentity, bool AllowAnonymous) CollectOwn(List<ICoapEndpointFilter> filters, List<Func<CoapPeerIdentity, CoapRequest, bool>> policies)
    {
        lock (_filters)
        {
            Frozen = true;
            filters.AddRange(_filters);
            policies.AddRange(_policies);
            return (_requireIdentity, _allowAnonymous);
        }
    }

    private TBuilder AddRouteConvention(Action<CoapRouteBuilder> convention)
    {
        foreach (CoapRouteBuilder route in Routes)
        {
            convention(route);
        }

        _routeConventions.Add(convention);
        return (TBuilder)this;
    }

    private void ThrowIfFrozen()
    {
        if (Frozen)
        {
            throw new InvalidOperationException("Filters and authorization are set before an endpoint they apply to serves its first request.");
        }
    }
}
