using CoapNet.Client;
using CoapNet.Server;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace CoapNet.Dtls.Configuration;

/// <summary>Adds coaps (DTLS 1.2) to the server and client that <c>AddCoapServer</c> and <c>AddCoapClient</c> (CoapNet.Hosting) register.</summary>
public static class CoapDtlsServiceCollectionExtensions
{
    /// <summary>
    /// Gives the hosted <see cref="CoapServer"/> a coaps endpoint for each endpoint of the "Coap:Dtls" configuration
    /// section (<see cref="DtlsConfiguration.ReadServerOptions"/>), with its credentials, then changed by
    /// <paramref name="configure"/>; logging and the clock come from the host unless code set them. The transports
    /// are made, and their sockets bound, when the server's options are first asked for.
    /// </summary>
    /// <param name="services">The services.</param>
    /// <param name="configure">Changes each endpoint's options after configuration is read, or null.</param>
    /// <returns>The services.</returns>
    public static IServiceCollection AddCoapsEndpoints(this IServiceCollection services, Action<DtlsServerOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        services.AddOptions<CoapServerOptions>().Configure<IServiceProvider>((options, provider) =>
        {
            IConfiguration configuration = provider.GetRequiredService<IConfiguration>();
            foreach (DtlsServerOptions endpoint in DtlsConfiguration.ReadServerOptions(configuration.GetSection(DtlsConfiguration.ServerSection)))
            {
                UseHostServices(endpoint, provider);
                configure?.Invoke(endpoint);
                options.DatagramTransports.Add(new DtlsServerTransport(endpoint));
            }
        });
        return services;
    }

    /// <summary>
    /// Gives the registered <see cref="CoapClient"/> a DTLS transport for <c>coaps://</c> with the credentials of the
    /// "Coap:Client:Dtls" configuration section (<see cref="DtlsConfiguration.ReadClientOptions"/>), then changed by
    /// <paramref name="configure"/>.
    /// </summary>
    /// <param name="services">The services.</param>
    /// <param name="configure">Changes the options after configuration is read, or null.</param>
    /// <returns>The services.</returns>
    public static IServiceCollection AddCoapsClient(this IServiceCollection services, Action<DtlsClientOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        services.AddOptions<CoapClientOptions>().Configure<IServiceProvider>((options, provider) =>
        {
            DtlsClientOptions dtls = new();
            DtlsConfiguration.ReadClientOptions(dtls, provider.GetRequiredService<IConfiguration>().GetSection(DtlsConfiguration.ClientSection));
            UseHostServices(dtls, provider);
            configure?.Invoke(dtls);
            options.SecureTransport = new DtlsClientTransport(dtls);
        });
        return services;
    }

    private static void UseHostServices(DtlsOptions options, IServiceProvider provider)
    {
        options.LoggerFactory ??= provider.GetService<ILoggerFactory>();
        if (ReferenceEquals(options.TimeProvider, TimeProvider.System) && provider.GetService<TimeProvider>() is { } time)
        {
            options.TimeProvider = time;
        }
    }
}
