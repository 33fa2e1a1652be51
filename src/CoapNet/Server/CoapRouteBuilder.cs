namespace CoapNet.Server;

/// <summary>Sets the discovery attributes (RFC 6690) and content-format rules of a mapped route.</summary>
public sealed class CoapRouteBuilder
{
    private readonly CoapRoute _route;
    private readonly CoapServer _server;

    internal CoapRouteBuilder(CoapRoute route, CoapServer server)
    {
        _route = route;
        _server = server;
    }

    /// <summary>The route template, such as "/store/{name}".</summary>
    public string Template => _route.Template;

    /// <summary>Sets the human-readable "title".</summary>
    /// <param name="title">The title.</param>
    /// <returns>This builder.</returns>
    public CoapRouteBuilder WithTitle(string title)
    {
        _route.Title = title ?? throw new ArgumentNullException(nameof(title));
        return this;
    }

    /// <summary>Adds "rt" resource types (RFC 6690 section 3.1).</summary>
    /// <param name="resourceTypes">The types, such as "temperature-c".</param>
    /// <returns>This builder.</returns>
    public CoapRouteBuilder WithResourceType(params string[] resourceTypes)
    {
        _route.ResourceTypes.AddRange(CheckTokens(resourceTypes, nameof(resourceTypes)));
        return this;
    }

    /// <summary>Adds "if" interface descriptions (RFC 6690 section 3.2).</summary>
    /// <param name="interfaces">The interfaces, such as "sensor".</param>
    /// <returns>This builder.</returns>
    public CoapRouteBuilder WithInterface(params string[] interfaces)
    {
        _route.InterfaceDescriptions.AddRange(CheckTokens(interfaces, nameof(interfaces)));
        return this;
    }

    /// <summary>
    /// Declares the Content-Formats the route produces: "ct" in discovery, and 4.06 Not Acceptable for a
    /// request whose Accept option names another (RFC 7252 section 5.10.4).
    /// </summary>
    /// <param name="contentFormats">The formats.</param>
    /// <returns>This builder.</returns>
    public CoapRouteBuilder Produces(params ushort[] contentFormats)
    {
        ArgumentNullException.ThrowIfNull(contentFormats);
        _route.ContentFormats.AddRange(contentFormats);
        return this;
    }

    /// <summary>
    /// Declares the Content-Formats the route accepts in request payloads: 4.15 Unsupported
    /// Content-Format for a payload in another (RFC 7252 section 5.10.3).
    /// </summary>
    /// <param name="contentFormats">The formats.</param>
    /// <returns>This builder.</returns>
    public CoapRouteBuilder Accepts(params ushort[] contentFormats)
    {
        ArgumentNullException.ThrowIfNull(contentFormats);
        _route.AcceptedContentFormats.AddRange(contentFormats);
        return this;
    }

    /// <summary>Sets the "sz" maximum size estimate (RFC 6690 section 3.3).</summary>
    /// <param name="size">The size in bytes.</param>
    /// <returns>This builder.</returns>
    public CoapRouteBuilder WithSize(uint size)
    {
        _route.Size = size;
        return this;
    }

    /// <summary>
    /// Makes the route observable (RFC 7641): a GET with Observe=0 registers its sender, who then gets a
    /// notification each time <see cref="NotifyObservers"/> (or <see cref="CoapServer.NotifyObservers(string)"/>)
    /// is called; discovery announces "obs" (section 6).
    /// </summary>
    /// <returns>This builder.</returns>
    public CoapRouteBuilder Observable()
    {
        _route.IsObservable = true;
        return this;
    }

    /// <summary>
    /// Tells the route's observers that its state changed: each gets a notification made by running
    /// its GET handler again (RFC 7641 section 4.2). Keep the builder from <see cref="Observable"/> to call this.
    /// </summary>
    /// <returns>The number of observations notified.</returns>
    public int NotifyObservers() => _server.NotifyObservers(_route);

    /// <summary>
    /// Makes the route take conditional requests (RFC 7252 section 5.10.8): before a handler runs, the server asks
    /// <paramref name="state"/> what the request's target is now and answers 4.12 Precondition Failed when an
    /// If-Match or If-None-Match does not hold (the handler does not run), and 2.03 Valid to a GET whose ETag is
    /// the current one (not to an Observe registration). A route without state answers a request with If-Match or
    /// If-None-Match 4.02 Bad Option, since it cannot honour them (section 5.4.1).
    /// </summary>
    /// <remarks>
    /// <paramref name="state"/> runs where the handler runs (a synchronous handler's worker, or the start of an
    /// asynchronous one), only for requests that carry one of those options, and may return null when this request's
    /// target exposes no state (4.02 as above). The check and the handler are two steps: a handler that must not
    /// lose a race with another request (create only if absent) checks again under its own lock with
    /// <see cref="CoapRequest.EvaluateConditions(CoapResourceState)"/>. Calling this again replaces the function.
    /// </remarks>
    /// <param name="state">The target's current state, for one request.</param>
    /// <returns>This builder.</returns>
    public CoapRouteBuilder WithState(Func<CoapRequest, CoapResourceState?> state)
    {
        _route.State = state ?? throw new ArgumentNullException(nameof(state));
        return this;
    }

    /// <summary>
    /// Lists the resources a template with one parameter names now in <c>/.well-known/core</c>: a template has no single
    /// link (RFC 6690 section 2 links a target URI), so without this it is not listed at all. <paramref name="values"/>
    /// runs at each discovery request and gives the parameter's value of each resource that exists then; each becomes a
    /// link with the route's attributes.
    /// </summary>
    /// <remarks>For "/lamps/{id:int}": <c>.ListInstances(() =&gt; store.Ids.Select(id =&gt; id.ToString(CultureInfo.InvariantCulture)))</c>.
    /// A value that the template's constraint refuses fails the discovery request (5.00, logged), naming it. Calling this
    /// again replaces the function.</remarks>
    /// <param name="values">The value of each resource's parameter.</param>
    /// <returns>This builder.</returns>
    /// <exception cref="ArgumentException">The template does not have exactly one parameter.</exception>
    public CoapRouteBuilder ListInstances(Func<IEnumerable<string>> values)
    {
        ArgumentNullException.ThrowIfNull(values);
        if (_route.ParameterCount != 1)
        {
            throw new ArgumentException($"The template {_route.Template} has {_route.ParameterCount} parameters: list its instances with one value per parameter (ListInstances(Func<IEnumerable<IReadOnlyList<string>>>)).", nameof(values));
        }

        _route.Instances = () => Single(values());
        return this;

        static IEnumerable<IReadOnlyList<string>> Single(IEnumerable<string> values)
        {
            foreach (string value in values)
            {
                yield return [value];
            }
        }
    }

    /// <summary>
    /// Lists the resources a template with parameters names now in <c>/.well-known/core</c>, as
    /// <see cref="ListInstances(Func{IEnumerable{string}})"/> does, for any number of parameters: <paramref name="values"/>
    /// gives each resource's values in the template's order ("/rooms/{room}/sensors/{sensor}": <c>["kitchen", "t1"]</c>).
    /// </summary>
    /// <param name="values">Each resource's parameter values, in the template's order.</param>
    /// <returns>This builder.</returns>
    /// <exception cref="ArgumentException">The template has no parameter (its one link is listed already).</exception>
    public CoapRouteBuilder ListInstances(Func<IEnumerable<IReadOnlyList<string>>> values)
    {
        ArgumentNullException.ThrowIfNull(values);
        if (!_route.HasParameters)
        {
            throw new ArgumentException($"The template {_route.Template} has no parameter: discovery lists it as it is.", nameof(values));
        }

        _route.Instances = values;
        return this;
    }

    /// <summary>Leaves the route out of /.well-known/core.</summary>
    /// <returns>This builder.</returns>
    public CoapRouteBuilder HideFromDiscovery()
    {
        _route.IsHidden = true;
        return this;
    }

    private static string[] CheckTokens(string[] values, string name)
    {
        ArgumentNullException.ThrowIfNull(values, name);
        foreach (string value in values)
        {
            // RFC 6690 section 3.1: the attribute is a space-separated list, so one value has no space.
            if (string.IsNullOrEmpty(value) || value.Contains(' ', StringComparison.Ordinal) || value.Contains('"', StringComparison.Ordinal))
            {
                throw new ArgumentException($"'{value}' is not a valid value: it must be non-empty, without spaces or quotes (RFC 6690 section 3.1).", name);
            }
        }

        return values;
    }
}
