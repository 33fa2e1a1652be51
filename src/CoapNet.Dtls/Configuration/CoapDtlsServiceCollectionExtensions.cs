using CoapNet.Client;
using CoapNet.Configuration;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;

namespace CoapNet.Dtls.Configuration;

/// <summary>
/// Adds coaps (DTLS 1.2) to the configuration of the server and client that <c>AddCoapServer</c> and <c>AddCoapClient</c>
/// (CoapNet.Hosting) register: the "Dtls" section of a coaps endpoint, and "Coap:Client:Dtls". Until these are added,
/// those sections are unknown keys, which stop the start.
/// </summary>
public static class CoapDtlsServiceCollectionExtensions
{
    /// <summary>
    /// Lets each endpoint of the "Coap:Endpoints" configuration carry a "Dtls" section
    /// (<see cref="DtlsConfiguration.ServerKeys"/>): a coaps endpoint that has one is secured with the credentials and
    /// bounds it names (<see cref="CoapDtlsOptionsExtensions.UseDtls(Server.CoapListenOptions, DtlsServerOptions)"/>),
    /// changed by <paramref name="configure"/>; logging and the clock are the endpoint's, so the host's. Nothing is bound
    /// until the server starts.
    /// </summary>
    /// <param name="services">The services.</param>
    /// <param name="configure">Changes each endpoint's options after configuration is read (a key lookup of your own, say), or null.</param>
    /// <returns>The services.</returns>
    /// <example>
    /// <code>
    /// "Coap": { "Endpoints": { "secure": { "Url": "coaps://[::]:5684", "Dtls": { "PskKeys": [ { "Identity": "device-1", "KeyFile": "/run/secrets/device-1.key" } ] } } } }
    /// </code>
    /// </example>
    public static IServiceCollection AddCoapsEndpoints(this IServiceCollection services, Action<DtlsServerOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        services.AddSingleton(new CoapEndpointConfigurationSection(DtlsConfiguration.EndpointSection, DtlsConfiguration.ServerKeys(), (endpoint, section) =>
        {
            DtlsServerOptions options = DtlsConfiguration.ReadServerOptions(section);
            configure?.Invoke(options);
            InSection(section, () => endpoint.UseDtls(options));
        }));
        return services;
    }

    /// <summary>
    /// Secures the registered <see cref="CoapClient"/>'s coaps:// requests with the credentials of the "Coap:Client:Dtls"
    /// configuration section (<see cref="DtlsConfiguration.ReadClientOptions"/>), then changed by <paramref name="configure"/>
    /// (<see cref="CoapDtlsOptionsExtensions.UseDtls(CoapClientOptions, DtlsClientOptions)"/>).
    /// </summary>
    /// <param name="services">The services.</param>
    /// <param name="configure">Changes the options after configuration is read, or null.</param>
    /// <returns>The services.</returns>
    public static IServiceCollection AddCoapsClient(this IServiceCollection services, Action<DtlsClientOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        services.AddSingleton(new CoapConfigurationSection(DtlsConfiguration.ClientSection["Coap:".Length..], DtlsConfiguration.ClientKeys()));
        services.AddOptions<CoapClientOptions>().Configure<IConfiguration>((options, configuration) =>
        {
            DtlsClientOptions dtls = new();
            IConfigurationSection section = configuration.GetSection(DtlsConfiguration.ClientSection);
            DtlsConfiguration.ReadClientOptions(dtls, section);
            configure?.Invoke(dtls);
            InSection(section, () => options.UseDtls(dtls));
        });
        return services;
    }

    // A setting the options refuse (a bound out of range, no credential at all) is named by the section it came from.
    private static void InSection(IConfigurationSection section, Action use)
    {
        try
        {
            use();
        }
        catch (ArgumentException e)
        {
            throw new FormatException($"{section.Path}: {e.Message}", e);
        }
    }
}
