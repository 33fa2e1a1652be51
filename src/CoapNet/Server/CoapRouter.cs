using CoapNet.Messages;

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
                    : node.AddLiteral(segment.Value),
                RouteSegmentKind.Parameter => node.AddParameter(segment, template),
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

    /// <summary>
    /// Finds the route for a request's Uri-Path options and captures its parameter values. Literal segments are
    /// matched on the options' UTF-8 bytes, so no string is made per segment unless a parameter captures it: a
    /// string array and a string per segment were a tenth of the bytes a request cost (issue 11). The walk reads the
    /// segments from the request's option bytes as it goes down the tree, so no options collection is built, and no
    /// buffer of segments either (issue 39). A path with a segment the walk looks at that is not valid UTF-8 is decoded
    /// as <see cref="CoapMessage.GetUriPathSegments"/> does.
    /// </summary>
    public CoapRoute? Match(CoapMessage request, out Dictionary<string, string>? values)
    {
        bool invalid = false;
        CoapRoute? route = Match(_root, request.ReadOptions(), ref invalid);
        if (!invalid)
        {
            values = route is { HasParameters: true } ? Capture(route, request.GetUriPathSegments()) : null;
            return route;
        }

        return Match(request.GetUriPathSegments(), out values);
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

        if (node.Parameter is not null && segment.Length > 0 && (node.Constraint is null || node.Constraint.Accepts(segment))
            && Match(node.Parameter, path, index + 1) is { } parameter)
        {
            return parameter;
        }

        return node.CatchAll?.Route;
    }

    // The same walk as over strings: valid UTF-8 bytes are equal exactly when the strings they decode to are. Each level
    // gets its own copy of the reader, positioned after the segment it took, so a branch that dead-ends leaves the next
    // branch the same position to go on from. A segment that is not valid UTF-8 stops the walk (invalid): the string walk
    // then decodes it as the request's segments do.
    private static CoapRoute? Match(Node node, CoapOptionReader path, ref bool invalid)
    {
        if (!NextSegment(ref path, out ReadOnlySpan<byte> segment))
        {
            return node.Route ?? node.CatchAll?.Route;
        }

        if (!System.Text.Unicode.Utf8.IsValid(segment))
        {
            invalid = true;
            return null;
        }

        if (node.TryGetUtf8Literal(segment, out Node? literal) && Match(literal, path, ref invalid) is { } found)
        {
            return found;
        }

        if (!invalid && node.Parameter is not null && segment.Length > 0 && (node.Constraint is null || node.Constraint.Accepts(segment))
            && Match(node.Parameter, path, ref invalid) is { } parameter)
        {
            return parameter;
        }

        return invalid ? null : node.CatchAll?.Route;
    }

    /// <summary>Moves <paramref name="path"/> to the next Uri-Path option; false past the last (options come in number order, RFC 7252 section 3.1).</summary>
    private static bool NextSegment(ref CoapOptionReader path, out ReadOnlySpan<byte> segment)
    {
        while (path.MoveNext())
        {
            if (path.Number == CoapOptionNumber.UriPath)
            {
                segment = path.Value;
                return true;
            }

            if (path.Number > CoapOptionNumber.UriPath)
            {
                break;
            }
        }

        segment = default;
        return false;
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

        public Node AddLiteral(string literal)
        {
            Node child = new();
            Literals![literal] = child;

            // A new array each time, so a lookup never sees one half made.
            (byte[] Utf8, Node Child) entry = (System.Text.Encoding.UTF8.GetBytes(literal), child);
            (byte[] Utf8, Node Child)[] current = _utf8Literals;
            int at = Search(current, entry.Utf8);
            (byte[] Utf8, Node Child)[] next;
            if (at >= 0)
            {
                // Two strings that are not valid UTF-16 can encode alike; the later one is found, as a dictionary did.
                next = [.. current];
                next[at] = entry;
            }
            else
            {
                next = [.. current.AsSpan(0, ~at), entry, .. current.AsSpan(~at)];
            }

            _utf8Literals = next;
            return child;
        }

        // Up to this many children, a lookup compares the segment with each child's bytes (lengths first) rather than
        // search them: a server's levels have a few to a dozen literals, and a hash through a dictionary's comparer and its
        // two interface calls was most of a route's match (issue 39). Wider levels are searched by halving.
        private const int MaxScannedLiterals = 16;

        // The literal children by their UTF-8 bytes, shorter before longer and then in byte order: plain arrays and spans,
        // so that .NET 8 matches bytes as later runtimes do (a dictionary looked up by a span needs .NET 9).
        private (byte[] Utf8, Node Child)[] _utf8Literals = [];

        /// <summary>The literal child whose UTF-8 bytes are <paramref name="segment"/>.</summary>
        public bool TryGetUtf8Literal(ReadOnlySpan<byte> segment, [System.Diagnostics.CodeAnalysis.NotNullWhen(true)] out Node? child)
        {
            (byte[] Utf8, Node Child)[] literals = _utf8Literals;
            if (literals.Length <= MaxScannedLiterals)
            {
                foreach ((byte[] utf8, Node node) in literals)
                {
                    if (utf8.Length == segment.Length && segment.SequenceEqual(utf8))
                    {
                        child = node;
                        return true;
                    }
                }

                child = null;
                return false;
            }

            int at = Search(literals, segment);
            child = at >= 0 ? literals[at].Child : null;
            return child is not null;
        }

        /// <summary>The index of <paramref name="key"/> in <paramref name="literals"/>, or the complement of where it would go.</summary>
        private static int Search((byte[] Utf8, Node Child)[] literals, ReadOnlySpan<byte> key)
        {
            int low = 0;
            int high = literals.Length - 1;
            while (low <= high)
            {
                int middle = low + ((high - low) >> 1);
                byte[] candidate = literals[middle].Utf8;
                int order = candidate.Length != key.Length ? candidate.Length.CompareTo(key.Length) : candidate.AsSpan().SequenceCompareTo(key);
                if (order == 0)
                {
                    return middle;
                }

                if (order < 0)
                {
                    low = middle + 1;
                }
                else
                {
                    high = middle - 1;
                }
            }

            return ~low;
        }

        public Node? Parameter { get; set; }

        /// <summary>The constraint on <see cref="Parameter"/>'s value, or null; every template through this node shares it.</summary>
        public RouteConstraint? Constraint { get; private set; }

        public Node AddParameter(RouteSegment segment, string template)
        {
            if (Parameter is null)
            {
                Constraint = segment.Constraint;
                return Parameter = new Node();
            }

            // One parameter node per position: two templates whose parameters there differ in constraint would need the
            // router to try both, so they are refused rather than one silently shadowing the other.
            if (Constraint?.Name != segment.Constraint?.Name)
            {
                throw new ArgumentException($"The route template '{template}' constrains '{{{segment.Value}}}' differently from a template mapped before it at the same position.", nameof(template));
            }

            return Parameter;
        }

        public Node? CatchAll { get; set; }

        public CoapRoute? Route { get; set; }
    }
}
