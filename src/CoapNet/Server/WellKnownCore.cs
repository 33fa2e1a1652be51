using CoapNet.LinkFormat;
using CoapNet.Messages;

namespace CoapNet.Server;

/// <summary>
/// The server's <c>/.well-known/core</c> resource (RFC 7252 section 7.2, RFC 6690): its routes as CoRE Link Format,
/// with their attributes, less the hidden ones; a template with parameters, which no single link names, is listed by the
/// instances its route lists now (<see cref="CoapRouteBuilder.ListInstances(Func{IEnumerable{string}})"/>), if any.
/// </summary>
/// <remarks>No state or lock of its own: it reads the router's routes per request, as the server did before it was split out (routes are mapped before the server starts).</remarks>
internal sealed class WellKnownCore(CoapRouter router)
{
    /// <summary>GET /.well-known/core: the routes as CoRE Link Format, filtered by an optional "name=value" query (RFC 6690 section 4.1).</summary>
    public CoapResponse Respond(CoapRequest request)
    {
        string[] query = request.Message.GetUriQueryArguments();
        string? filterName = null;
        string? filterValue = null;
        if (query.Length > 0)
        {
            int equals = query[0].IndexOf('=', StringComparison.Ordinal);
            filterName = equals < 0 ? query[0] : query[0][..equals];
            filterValue = equals < 0 ? string.Empty : query[0][(equals + 1)..];
        }

        List<CoapLink> links = [];
        foreach (CoapRoute route in router.Routes)
        {
            if (route.IsHidden)
            {
                continue;
            }

            if (!route.HasParameters)
            {
                Add(ToLink(route, route.Template));
            }
            else if (route.Instances is { } instances)
            {
                foreach (IReadOnlyList<string> values in instances())
                {
                    Add(ToLink(route, route.InstancePath(values)));
                }
            }
        }

        void Add(CoapLink link)
        {
            if (filterName is null || Matches(link, filterName, filterValue!))
            {
                links.Add(link);
            }
        }

        return CoapResponse.Content(System.Text.Encoding.UTF8.GetBytes(CoapLinkFormat.Format(links)), CoapContentFormat.LinkFormat);
    }

    private static CoapLink ToLink(CoapRoute route, string target)
    {
        List<KeyValuePair<string, string?>> attributes = [];
        if (route.Title is not null)
        {
            attributes.Add(new("title", route.Title));
        }

        if (route.ResourceTypes.Count > 0)
        {
            attributes.Add(new("rt", string.Join(' ', route.ResourceTypes)));
        }

        if (route.InterfaceDescriptions.Count > 0)
        {
            attributes.Add(new("if", string.Join(' ', route.InterfaceDescriptions)));
        }

        if (route.ContentFormats.Count > 0)
        {
            attributes.Add(new("ct", string.Join(' ', route.ContentFormats)));
        }

        if (route.Size is uint size)
        {
            attributes.Add(new("sz", size.ToString(System.Globalization.CultureInfo.InvariantCulture)));
        }

        if (route.IsObservable)
        {
            attributes.Add(new("obs", null));
        }

        return new CoapLink(target, attributes);
    }

    // RFC 6690 section 4.1: "href" matches the target, other names an attribute; a trailing '*' matches a prefix;
    // space-separated attribute values match when any one of them does.
    private static bool Matches(CoapLink link, string name, string value)
    {
        bool prefix = value.EndsWith('*');
        string expected = prefix ? value[..^1] : value;
        if (name == "href")
        {
            return prefix ? link.Target.StartsWith(expected, StringComparison.Ordinal) : link.Target == expected;
        }

        foreach (KeyValuePair<string, string?> attribute in link.Attributes)
        {
            if (attribute.Key != name)
            {
                continue;
            }

            foreach (string token in (attribute.Value ?? string.Empty).Split(' '))
            {
                if (prefix ? token.StartsWith(expected, StringComparison.Ordinal) : token == expected)
                {
                    return true;
                }
            }
        }

        return false;
    }
}
