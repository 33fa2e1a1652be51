using CoapNet.Channels;
using CoapNet.Server;

namespace CoapNet.Endpoints;

/// <summary>
/// A mapped handler with bound parameters: its filters and authorization, its route's discovery attributes, and
/// Observe. Returned by <c>MapGet(template, Delegate)</c> and its siblings.
/// </summary>
public sealed class CoapEndpointBuilder : CoapConventionBuilder<CoapEndpointBuilder>
{
    private readonly List<CoapRouteGroupBuilder> _groups = [];

    internal CoapEndpointBuilder(CoapRouteBuilder route)
    {
        Route = route;
    }

    /// <summary>The route's builder, for the rest of its attributes (title, size, state for conditional requests, ...).</summary>
    public CoapRouteBuilder Route { get; }

    /// <summary>The route template, such as "/lamps/{id:int}".</summary>
    public string Template => Route.Template;

    /// <summary>
    /// Makes the route observable (RFC 7641): a GET with Observe=0 registers its sender, and every
    /// <see cref="NotifyObservers"/> runs the handler again, binding and result included, for a notification.
    /// </summary>
    /// <returns>This builder.</returns>
    public CoapEndpointBuilder Observable()
    {
        Route.Observable();
        return this;
    }

    /// <summary>Tells the route's observers that its state changed: each gets a notification (RFC 7641 section 4.2).</summary>
    /// <returns>The number of observations notified.</returns>
    public int NotifyObservers() => Route.NotifyObservers();

    /// <summary>Sets the human-readable "title" (RFC 6690 section 3).</summary>
    /// <param name="title">The title.</param>
    /// <returns>This builder.</returns>
    public CoapEndpointBuilder WithTitle(string title)
    {
        Route.WithTitle(title);
        return this;
    }

    /// <inheritdoc cref="CoapRouteBuilder.ListInstances(Func{IEnumerable{string}})"/>
    public CoapEndpointBuilder ListInstances(Func<IEnumerable<string>> values)
    {
        Route.ListInstances(values);
        return this;
    }

    /// <inheritdoc cref="CoapRouteBuilder.ListInstances(Func{IEnumerable{IReadOnlyList{string}}})"/>
    public CoapEndpointBuilder ListInstances(Func<IEnumerable<IReadOnlyList<string>>> values)
    {
        Route.ListInstances(values);
        return this;
    }

    private protected override IEnumerable<CoapRouteBuilder> Routes => [Route];

    /// <summary>A group the endpoint was mapped through, outermost first.</summary>
    internal void AddGroup(CoapRouteGroupBuilder group) => _groups.Add(group);

    /// <summary>The filters and policies of the groups (outermost first) and the endpoint; returns whether an identity is required.</summary>
    internal bool Collect(List<ICoapEndpointFilter> filters, List<Func<CoapPeerIdentity, CoapRequest, bool>> policies)
    {
        bool requireIdentity = false;
        List<Func<CoapPeerIdentity, CoapRequest, bool>> groupPolicies = [];
        foreach (CoapRouteGroupBuilder group in _groups)
        {
            int before = groupPolicies.Count;
            (bool required, bool open) = group.Collect(filters, groupPolicies);
            if (open)
            {
                // A group that allows anyone lifts what the groups around it require, not its own requirements.
                groupPolicies.RemoveRange(0, before);
                requireIdentity = false;
            }

            requireIdentity |= required;
        }

        (bool own, bool anonymous) = CollectOwn(filters, policies);
        if (anonymous)
        {
            // The endpoint's AllowAnonymous overrides what its groups require, not what it requires itself.
            return own;
        }

        policies.InsertRange(0, groupPolicies);
        return requireIdentity || own;
    }
}
