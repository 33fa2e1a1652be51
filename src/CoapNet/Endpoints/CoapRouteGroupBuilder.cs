using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Server;

namespace CoapNet.Endpoints;

/// <summary>
/// A route group (<c>MapGroup("/lamps")</c>): endpoints mapped through it get its prefix and carry its filters,
/// authorization and discovery attributes. Groups nest.
/// </summary>
public sealed class CoapRouteGroupBuilder : CoapConventionBuilder<CoapRouteGroupBuilder>, ICoapEndpointRouteBuilder
{
    private readonly ICoapEndpointRouteBuilder _parent;
    private readonly List<CoapRouteBuilder> _routes = [];

    internal CoapRouteGroupBuilder(ICoapEndpointRouteBuilder parent, string prefix)
    {
        _parent = parent;
        Prefix = prefix;
    }

    /// <summary>The group's prefix, relative to the builder it was made from ("/lamps").</summary>
    public string Prefix { get; }

    /// <inheritdoc/>
    public CoapHandlerOptions HandlerOptions => _parent.HandlerOptions;

    private protected override IEnumerable<CoapRouteBuilder> Routes => _routes;

    /// <inheritdoc/>
    public CoapEndpointBuilder MapEndpoint(CoapCode method, string template, CoapEndpointInvoker invoker)
    {
        ArgumentNullException.ThrowIfNull(template);
        CoapEndpointBuilder endpoint = _parent.MapEndpoint(method, Combine(Prefix, template), invoker);

        // The parent (an outer group) added itself first, so groups are listed outermost first.
        endpoint.AddGroup(this);
        _routes.Add(endpoint.Route);
        ApplyRouteConventions(endpoint.Route);
        return endpoint;
    }

    /// <summary>Checks a prefix: it starts with '/', and a trailing '/' is dropped ("/lamps/" is "/lamps").</summary>
    internal static string CheckPrefix(string prefix)
    {
        ArgumentNullException.ThrowIfNull(prefix);
        if (prefix.Length == 0 || prefix[0] != '/')
        {
            throw new ArgumentException($"The group prefix '{prefix}' must start with '/'.", nameof(prefix));
        }

        return prefix.TrimEnd('/');
    }

    internal (bool RequireIdentity, bool AllowAnonymous) Collect(List<ICoapEndpointFilter> filters, List<Func<CoapPeerIdentity, CoapRequest, bool>> policies)
        => CollectOwn(filters, policies);

    private static string Combine(string prefix, string template)
    {
        if (template.Length == 0 || template == "/")
        {
            return prefix.Length == 0 ? "/" : prefix;
        }

        if (template[0] != '/')
        {
            throw new ArgumentException($"The route template '{template}' must start with '/'.", nameof(template));
        }

        return prefix + template;
    }
}
