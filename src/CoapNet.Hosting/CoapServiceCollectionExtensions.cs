using CoapNet.Client;
using CoapNet.Server;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace CoapNet.Hosting;

/// <summary>Registers CoapNet's server and client with dependency injection and the Generic Host.</summary>
public static class CoapServiceCollectionExtensions
{
    /// <summary>
    /// Registers a <see cref="CoapServer"/> singleton that runs as a hosted service: it starts with the host
    /// and drains its requests in flight when the host stops. Its settings are bound from the "Coap"
    /// configuration section (<see cref="CoapServerSettings"/>), then <paramref name="configure"/> may change
    /// them; logging and the clock (<see cref="TimeProvider"/>, when registered) come from the host.
    /// </summary>
    /// <param name="services">The services.</param>
    /// <param name="configure">Changes the settings after configuration is bound, or null.</param>
    /// <returns>A builder to map routes and resources with.</returns>
    /// <example>
    /// <code>
    /// builder.Services.AddCoapServer()
    ///     .MapResource&lt;LampResource&gt;("/lamps/{id}")
    ///     .Map((server, services) =&gt; server.MapGet("/hello", request =&gt; CoapResponse.Content("Hello")));
    /// </code>
    /// </example>
    public static CoapServerBuilder AddCoapServer(this IServiceCollection services, Action<CoapServerSettings>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);

        // Calling AddCoapServer again adds routes (and settings changes) to the same server rather than a second
        // one, and binds configuration only once: binding twice would list every configured endpoint twice.
        RouteMaps? existing = FindInstance<RouteMaps>(services);
        OptionsBuilder<CoapServerSettings> options = services.AddOptions<CoapServerSettings>();
        if (existing is null)
        {
            options.BindConfiguration(CoapServerSettings.SectionName);
        }

        if (configure is not null)
        {
            options.Configure(configure);
        }

        if (existing is not null)
        {
            return new CoapServerBuilder(services, existing.Maps);
        }

        RouteMaps maps = new();
        services.AddSingleton(maps);
        services.TryAddSingleton(provider =>
        {
            CoapServerSettings settings = provider.GetRequiredService<IOptions<CoapServerSettings>>().Value;
            CoapServer server = new(settings.ToServerOptions(provider.GetService<ILoggerFactory>(), provider.GetService<TimeProvider>()));
            try
            {
                foreach (Action<CoapServer, IServiceProvider> map in provider.GetRequiredService<RouteMaps>().Maps)
                {
                    map(server, provider);
                }
            }
            catch
            {
                server.Dispose();
                throw;
            }

            return server;
        });
        services.AddHostedService<CoapServerHostedService>();
        return new CoapServerBuilder(services, maps.Maps);
    }

    /// <summary>
    /// Registers a <see cref="CoapClient"/> singleton whose settings are bound from the "Coap:Client"
    /// configuration section (<see cref="CoapClientSettings"/>), then changed by <paramref name="configure"/>;
    /// logging and the clock come from the host. The container disposes it, closing its socket and connections.
    /// </summary>
    /// <param name="services">The services.</param>
    /// <param name="configure">Changes the settings after configuration is bound, or null.</param>
    /// <returns>The services.</returns>
    public static IServiceCollection AddCoapClient(this IServiceCollection services, Action<CoapClientSettings>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        OptionsBuilder<CoapClientSettings> options = services.AddOptions<CoapClientSettings>().BindConfiguration(CoapClientSettings.SectionName);
        if (configure is not null)
        {
            options.Configure(configure);
        }

        services.TryAddSingleton(provider => new CoapClient(provider.GetRequiredService<IOptions<CoapClientSettings>>().Value
            .ToClientOptions(provider.GetService<ILoggerFactory>(), provider.GetService<TimeProvider>())));
        return services;
    }

    private static T? FindInstance<T>(IServiceCollection services)
        where T : class
    {
        foreach (ServiceDescriptor descriptor in services)
        {
            if (descriptor.ServiceType == typeof(T) && !descriptor.IsKeyedService && descriptor.ImplementationInstance is T instance)
            {
                return instance;
            }
        }

        return null;
    }

    /// <summary>The route callbacks of the one hosted server, shared by every builder that adds to it.</summary>
    private sealed class RouteMaps
    {
        public List<Action<CoapServer, IServiceProvider>> Maps { get; } = [];
    }
}
