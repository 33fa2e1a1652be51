using CoapNet.Messages;

namespace CoapNet.Server;

/// <summary>A request handler: synchronous, or asynchronous; exactly one of the two is set.</summary>
internal sealed class RouteHandler(Func<CoapRequest, CoapResponse>? sync, Func<CoapRequest, CancellationToken, ValueTask<CoapResponse>>? async)
{
    public Func<CoapRequest, CoapResponse>? Sync { get; } = sync;

    public Func<CoapRequest, CancellationToken, ValueTask<CoapResponse>>? Async { get; } = async;

    /// <summary>Whether the handler has shown it returns quickly enough to run on the thread that received its request.</summary>
    public InlineGate Gate { get; } = new();

    /// <summary>The lane a synchronous handler runs on, opened by <see cref="SynchronousLanes"/> at its first request.</summary>
    public System.Threading.Tasks.Dataflow.ActionBlock<CoapServer.SyncWork>? Lane { get; set; }
}

/// <summary>One registered path template with its handlers per method and its discovery attributes.</summary>
internal sealed class CoapRoute
{
    // Index = method code detail: 1 GET .. 7 iPATCH (RFC 7252 section 12.1.1, RFC 8132).
    private readonly RouteHandler?[] _handlers = new RouteHandler?[8];

    public CoapRoute(string template, RouteSegment[] segments)
    {
        Template = template;
        Segments = segments;
        foreach (RouteSegment segment in segments)
        {
            HasParameters |= segment.Kind != RouteSegmentKind.Literal;
        }
    }

    public string Template { get; }

    public RouteSegment[] Segments { get; }

    public bool HasParameters { get; }

    public string? Title { get; set; }

    public List<string> ResourceTypes { get; } = [];

    public List<string> InterfaceDescriptions { get; } = [];

    public List<ushort> ContentFormats { get; } = [];

    public List<ushort> AcceptedContentFormats { get; } = [];

    public uint? Size { get; set; }

    public bool IsObservable { get; set; }

    public bool IsHidden { get; set; }

    /// <summary>The resource's state for conditional requests (RFC 7252 section 5.10.8), or null when the route exposes none.</summary>
    public Func<CoapRequest, CoapResourceState?>? State { get; set; }

    /// <summary>The route values of each resource that exists now, for discovery, or null when it lists none.</summary>
    public Func<IEnumerable<IReadOnlyList<string>>>? Instances { get; set; }

    /// <summary>The number of parameters (a catch-all included).</summary>
    public int ParameterCount
    {
        get
        {
            int count = 0;
            foreach (RouteSegment segment in Segments)
            {
                count += segment.Kind == RouteSegmentKind.Literal ? 0 : 1;
            }

            return count;
        }
    }

    /// <summary>
    /// The path of one instance: the template with <paramref name="values"/> in place of its parameters, each escaped as
    /// a path segment (a catch-all's '/' kept), so a link's target names exactly what a request to it reaches.
    /// </summary>
    /// <exception cref="InvalidOperationException">The values do not fill the template, or one does not meet its constraint.</exception>
    public string InstancePath(IReadOnlyList<string> values)
    {
        if (values is null || values.Count != ParameterCount)
        {
            throw new InvalidOperationException($"The instances listed for {Template} must each give {ParameterCount} value(s), one per parameter in the template's order; one gave {values?.Count.ToString(System.Globalization.CultureInfo.InvariantCulture) ?? "null"}.");
        }

        System.Text.StringBuilder path = new();
        int next = 0;
        foreach (RouteSegment segment in Segments)
        {
            path.Append('/');
            if (segment.Kind == RouteSegmentKind.Literal)
            {
                path.Append(Uri.EscapeDataString(segment.Value));
                continue;
            }

            string value = values[next++];
            if (segment.Kind == RouteSegmentKind.Parameter && (string.IsNullOrEmpty(value) || (segment.Constraint is { } constraint && !constraint.Accepts(value.AsSpan()))))
            {
                throw new InvalidOperationException($"The instance value '{value}' listed for {Template} cannot be its '{{{segment.Value}}}': it must be a non-empty segment{(segment.Constraint is { } c ? " that is " + c.Name : string.Empty)}.");
            }

            path.Append(segment.Kind == RouteSegmentKind.CatchAll
                ? string.Join('/', Array.ConvertAll((value ?? string.Empty).Split('/'), Uri.EscapeDataString))
                : Uri.EscapeDataString(value));
        }

        return path.Length == 0 ? "/" : path.ToString();
    }

    public RouteHandler? GetHandler(CoapCode method) => method.IsRequest && method.Value < _handlers.Length ? _handlers[method.Value] : null;

    public void SetHandler(CoapCode method, RouteHandler handler)
    {
        if (!method.IsRequest || method.Value >= _handlers.Length)
        {
            throw new ArgumentException($"{method} is not a method a route can handle (GET, POST, PUT, DELETE, FETCH, PATCH, iPATCH).", nameof(method));
        }

        if (_handlers[method.Value] is not null)
        {
            throw new ArgumentException($"{method.Name} {Template} is already mapped.", nameof(method));
        }

        _handlers[method.Value] = handler;
    }

    /// <summary>The methods with a handler, for the diagnostic of a 4.05.</summary>
    public string AllowedMethods()
    {
        List<string> names = [];
        for (int i = 1; i < _handlers.Length; i++)
        {
            if (_handlers[i] is not null)
            {
                names.Add(new CoapCode((byte)i).Name!);
            }
        }

        return string.Join(", ", names);
    }
}

/// <summary>The kinds of template segments: "store", "{name}", "{*rest}".</summary>
internal enum RouteSegmentKind
{
    Literal,
    Parameter,
    CatchAll,
}

/// <summary>One segment of a route template; a parameter may carry a constraint ("{id:int}") its value must meet.</summary>
internal readonly record struct RouteSegment(RouteSegmentKind Kind, string Value, RouteConstraint? Constraint = null)
{
    /// <summary>Parses "/a/{b}/{*c}"; the template names the problem in an ArgumentException.</summary>
    public static RouteSegment[] Parse(string template)
    {
        ArgumentNullException.ThrowIfNull(template);
        if (template.Length == 0 || template[0] != '/')
        {
            throw new ArgumentException($"The route template '{template}' must start with '/'.", nameof(template));
        }

        if (template == "/")
        {
            return [];
        }

        string[] parts = template[1..].Split('/');
        RouteSegment[] segments = new RouteSegment[parts.Length];
        HashSet<string> names = [];
        for (int i = 0; i < parts.Length; i++)
        {
            string part = parts[i];
            if (part.Length >= 2 && part[0] == '{' && part[^1] == '}')
            {
                bool catchAll = part.Length > 2 && part[1] == '*';
                string name = part[(catchAll ? 2 : 1)..^1];
                RouteConstraint? constraint = null;
                int colon = name.IndexOf(':', StringComparison.Ordinal);
                if (colon >= 0 && !catchAll)
                {
                    constraint = RouteConstraint.Parse(name[(colon + 1)..], template);
                    name = name[..colon];
                }

                if (name.Length == 0 || name.AsSpan().IndexOfAny("{}*/") >= 0)
                {
                    throw new ArgumentException($"The route template '{template}' has an invalid parameter '{part}'.", nameof(template));
                }

                if (!names.Add(name))
                {
                    throw new ArgumentException($"The route template '{template}' uses the parameter name '{name}' twice.", nameof(template));
                }

                if (catchAll && i != parts.Length - 1)
                {
                    throw new ArgumentException($"The catch-all '{part}' must be the last segment of '{template}'.", nameof(template));
                }

                segments[i] = new RouteSegment(catchAll ? RouteSegmentKind.CatchAll : RouteSegmentKind.Parameter, name, constraint);
            }
            else if (part.AsSpan().IndexOfAny("{}") >= 0)
            {
                throw new ArgumentException($"The route template '{template}' has a segment '{part}' with a stray brace.", nameof(template));
            }
            else
            {
                segments[i] = new RouteSegment(RouteSegmentKind.Literal, part);
            }
        }

        return segments;
    }
}
