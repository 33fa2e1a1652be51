using CoapNet.Client;
using CoapNet.Configuration;
using CoapNet.Server;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;

namespace CoapNet.Oscore.Configuration;

/// <summary>
/// Adds OSCORE (RFC 8613) to the configuration of the server and client that <c>AddCoapServer</c> and <c>AddCoapClient</c>
/// (CoapNet.Hosting) register: the contexts of "Coap:Oscore:Contexts:{name}" (<see cref="OscoreConfiguration"/>). Until
/// this is added, "Coap:Oscore" is an unknown key, which stops the start.
/// </summary>
public static class CoapOscoreServiceCollectionExtensions
{
    // "Coap:Oscore" as a path below "Coap".
    private const string SectionName = "Oscore";

    /// <summary>
    /// Makes "Coap:Oscore" a known section and protects with its contexts: the server's endpoints
    /// (<see cref="CoapServerOptions.Endpoint"/>, which each endpoint's own settings copy) with the contexts that have no
    /// "Peer", so a client protected with one of them reaches the routes, and <see cref="OscoreEndpointOptionsExtensions.RequireOscore{TBuilder}"/>
    /// routes answer every other request 4.01; the client's requests to each context's "Peer" with that context. A side with
    /// no context gets no OSCORE stage. Contexts are read, and their sequence files loaded, when the options are made (when
    /// the server or the client is first resolved); a bad one stops it with its path, never its secret.
    /// </summary>
    /// <param name="services">The services.</param>
    /// <returns>The services.</returns>
    /// <example>
    /// <code>
    /// builder.Services.AddCoapServer().Map((server, _) =&gt; server.MapGet("/secret", () =&gt; "for your eyes").RequireOscore());
    /// builder.Services.AddCoapOscore();   // with "Coap:Oscore:Contexts:sensor-7:MasterSecret", ... in configuration
    /// </code>
    /// </example>
    public static IServiceCollection AddCoapOscore(this IServiceCollection services)
    {
        ArgumentNullException.ThrowIfNull(services);
        foreach (ServiceDescriptor descriptor in services)
        {
            // Added once: a second call would put a second OSCORE stage on the endpoints.
            if (!descriptor.IsKeyedService && descriptor.ImplementationInstance is CoapConfigurationSection { Path: SectionName })
            {
                return services;
            }
        }

        services.AddSingleton(new CoapConfigurationSection(SectionName, OscoreConfiguration.Keys()));
        services.AddOptions<CoapServerOptions>().Configure<IConfiguration>((options, configuration) =>
        {
            if (OscoreConfiguration.ReadServerOptions(configuration.GetSection(OscoreConfiguration.Section)) is { } oscore)
            {
                options.Endpoint.UseOscore(oscore);
            }
        });
        services.AddOptions<CoapClientOptions>().Configure<IConfiguration>((options, configuration) =>
        {
            if (OscoreConfiguration.ReadClientOptions(configuration.GetSection(OscoreConfiguration.Section)) is { } oscore)
            {
                options.Endpoint.UseOscore(oscore);
            }
        });
        return services;
    }
}
