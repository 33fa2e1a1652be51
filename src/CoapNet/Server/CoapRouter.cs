namespace CoapNet.Server;

/// <summary>
/// Finds the route for a request's Uri-Path segments: a tree of segments where a literal beats a
/// parameter, which beats a catch-all, with backtracking when a more specific branch dead-ends.
/// Built before the server starts and read-only afterwards, so lookups take no lock.
/// </summary>
internal sealed class CoapRouter
{
    private readonly Node _root = new();
    private readonly List<CoapRoute> _routes = [];

    /// <summary>Routes in registration order (the order discovery lists them).</summary>
    public IReadOnlyList<CoapRoute> Routes => _routes;

    /// <summary>Gets the route for a template, creating it; templates that differ only in parameter names conflict.</summary>
    public CoapRoute GetOrAdd(string template)
    {
        RouteSegment[] segments = RouteSegment.Parse(template);
        Node node = _root;
        foreach (RouteSegment segment in segments)
        {
            node = segment.Kind switch
            {
                RouteSegmentKind.Literal => (node.Literals ??= new Dictionary<string, Node>(StringComparer.Ordinal)).TryGetValue(segment.Value, out Node? child)
                    ? child
                    : node.Literals[segment.Value] = new Node(),
                RouteSegmentKind.Parameter => node.Parameter ??= new Node(),
                _ => node.CatchAll ??= new Node(),
            };
        }

        if (node.Route is { } existing)
        {
            if (existing.Template != template)
            {
                throw new ArgumentException($"The route template '{template}' conflicts with '{existing.Template}'.", nameof(template));
            }

            return existing;
        }

        node.Route = new CoapRoute(template, segments);
        _routes.Add(node.Route);
        return node.Route;
    }

    /// <summary>Finds the route for the path segments and captures its parameter values.</summary>
    public CoapRoute? Match(string[] path, out Dictionary<string, string>? values)
    {
        CoapRoute? route = Match(_root, path, 0);
        values = route is { HasParameters: true } ? Capture(route, path) : null;
        return route;
    }

    private static CoapRoute? Match(Node node, string[] path, int index)
    {
        if (index == path.Length)
        {
            return node.Route ?? node.CatchAll?.Route;
        }

        string segment = path[index];
        if (node.Literals is not null && node.Literals.TryGetValue(segment, out Node? literal) && Match(literal, path, index + 1) is { } found)
        {
            return found;
        }

        if (node.Parameter is not null && segment.Length > 0 && Match(node.Parameter, path, index + 1) is { } parameter)
        {
            return parameter;
        }

        return node.CatchAll?.Route;
    }

    private static Dictionary<string, string> Capture(CoapRoute route, string[] path)
    {
        Dictionary<string, string> values = new(StringComparer.Ordinal);
        RouteSegment[] segments = route.Segments;
        for (int i = 0; i < segments.Length; i++)
        {
            switch (segments[i].Kind)
            {
                case RouteSegmentKind.Parameter:
                    values[segments[i].Value] = path[i];
                    break;
                case RouteSegmentKind.CatchAll:
                    values[segments[i].Value] = i < path.Length ? string.Join('/', path, i, path.Length - i) : string.Empty;
                    break;
            }
        }

        return values;
    }

    private sealed class Node
    {
        public Dictionary<string, Node>? Literals { get; set; }

        public Node? Parameter { get; set; }

        public Node? CatchAll { get; set; }

        public CoapRoute? Route { get; set; }
    }
}
