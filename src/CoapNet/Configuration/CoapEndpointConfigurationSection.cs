using CoapNet.Server;
using Microsoft.Extensions.Configuration;

namespace CoapNet.Configuration;

/// <summary>
/// A section of an endpoint's configuration ("Coap:Endpoints:{name}:{Name}") that a package reads and turns into that
/// endpoint's middleware or settings: CoapNet.Dtls's "Dtls" section secures a coaps endpoint with the credentials it
/// names. Registered as a service by the package's own registration (CoapNet.Dtls's <c>AddCoapsEndpoints</c>);
/// CoapNet.Hosting gives each endpoint that has the section to <see cref="Configure"/> and knows its keys.
/// </summary>
public sealed class CoapEndpointConfigurationSection
{
    /// <summary>A section <paramref name="name"/> of each endpoint, read by <paramref name="configure"/>.</summary>
    /// <param name="name">The section's name below the endpoint, such as "Dtls".</param>
    /// <param name="keys">The keys it may hold.</param>
    /// <param name="configure">Configures an endpoint (its middleware, its settings) from its section; called when the server's options are made, so it must bind nothing.</param>
    public CoapEndpointConfigurationSection(string name, CoapConfigurationKeys keys, Action<CoapListenOptions, IConfigurationSection> configure)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        ArgumentNullException.ThrowIfNull(keys);
        ArgumentNullException.ThrowIfNull(configure);
        Name = name;
        Keys = keys;
        Configure = configure;
    }

    /// <summary>The section's name below an endpoint.</summary>
    public string Name { get; }

    /// <summary>The keys it may hold.</summary>
    public CoapConfigurationKeys Keys { get; }

    /// <summary>Configures an endpoint from its section.</summary>
    public Action<CoapListenOptions, IConfigurationSection> Configure { get; }
}
