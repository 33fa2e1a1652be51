using CoapNet.Client;
using CoapNet.Configuration;
using CoapNet.Server;
using Microsoft.Extensions.Configuration;
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
    /// and drains its requests in flight when the host stops. Its <see cref="CoapServerOptions"/> are bound from the
    /// "Coap" configuration section (the same names as the properties: "Endpoint", "Udp", "Tcp", "Connections",
    /// "Observe", ...), its endpoints from "Coap:Endpoints:{name}" (each with its address in "Url", such as
    /// "coap://[::]:5683", and its own "Endpoint" settings, "Tls" for coaps+tcp with the certificate from files or the
    /// certificate store, read by <see cref="CoapCredentialConfiguration"/>, and the sections packages add, such as
    /// CoapNet.Dtls's "Dtls"), then <paramref name="configure"/> may change them (the endpoints of configuration are
    /// added after it ran, with the transports every registration added known); logging and the clock
    /// (<see cref="TimeProvider"/>, when registered) come from the host unless code set them. A key under "Coap" that is
    /// not a setting stops the start (<see cref="CoapConfigurationException"/>, naming it and the nearest known name);
    /// nothing is bound until the server starts.
    /// </summary>
    /// <param name="services">The services.</param>
    /// <param name="configure">Changes the options after configuration is bound, or null.</param>
    /// <returns>A builder to map routes and resources with.</returns>
    /// <example>
    /// <code>
    /// builder.Services.AddCoapServer(options =&gt; options.Endpoint.SeparateResponseDelay = TimeSpan.FromMilliseconds(50))
    ///     .MapResource&lt;LampResource&gt;("/lamps/{id}")
    ///     .Map((server, services) =&gt; server.MapGet("/hello", request =&gt; CoapResponse.Content("Hello")));
    /// </code>
    /// </example>
    public static CoapServerBuilder AddCoapServer(this IServiceCollection services, Action<CoapServerOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);

        // Calling AddCoapServer again adds routes (and options changes) to the same server rather than a second
        // one, and binds configuration only once: binding twice would list every configured endpoint twice.
        RouteMaps? existing = FindInstance<RouteMaps>(services);
        OptionsBuilder<CoapServerOptions> options = services.AddOptions<CoapServerOptions>();
        if (existing is null)
        {
            // The keys are checked before anything binds: the binder would leave a misspelled setting's default in force.
            options.Configure<IConfiguration, IServiceProvider>((_, configuration, provider) => Check(configuration, provider))
                .BindConfiguration(CoapConfiguration.ServerSection)
                .Configure<IConfiguration>((o, configuration) => CoapConfiguration.BindRetransmissionPolicy(
                    o.Endpoint, configuration.GetSection(CoapConfiguration.ServerSection).GetSection(nameof(CoapServerOptions.Endpoint))))
                .PostConfigure<IConfiguration, IServiceProvider>((o, configuration, provider) =>
                {
                    // After every Configure, so the transports packages register (coap+ws, say) are known to the endpoints.
                    CoapConfiguration.BindEndpoints(o, configuration.GetSection(CoapConfiguration.ServerSection), provider.GetServices<CoapEndpointConfigurationSection>());
                    ILoggerFactory? logging = provider.GetService<ILoggerFactory>();
                    TimeProvider? time = provider.GetService<TimeProvider>();
                    CoapConfiguration.UseHostServices(o.Endpoint, logging, time);
                    foreach (CoapListenOptions endpoint in o.ListenOptions)
                    {
                        if (endpoint.Endpoint is { } own)
                        {
                            CoapConfiguration.UseHostServices(own, logging, time);
                        }
                    }

                    // Handlers with bound parameters resolve their services from the host's, in a scope per request.
                    o.Handlers.Services ??= provider;
                });
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
            CoapServer server = new(provider.GetRequiredService<IOptions<CoapServerOptions>>().Value);
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
    /// Registers a <see cref="CoapClient"/> singleton whose <see cref="CoapClientOptions"/> are bound from the
    /// "Coap:Client" configuration section ("LocalEndPoint" as text such as "0.0.0.0:0"; "Tls" for coaps+tcp, with the
    /// trust roots and client certificate read by <see cref="CoapCredentialConfiguration"/>; a key that is not a setting
    /// stops it, as for the server), then changed by
    /// <paramref name="configure"/>; logging and the clock come from the host unless code set them. The container
    /// disposes it, closing its socket and connections.
    /// </summary>
    /// <param name="services">The services.</param>
    /// <param name="configure">Changes the options after configuration is bound, or null.</param>
    /// <returns>The services.</returns>
    public static IServiceCollection AddCoapClient(this IServiceCollection services, Action<CoapClientOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        OptionsBuilder<CoapClientOptions> options = services.AddOptions<CoapClientOptions>()
            .Configure<IConfiguration, IServiceProvider>((_, configuration, provider) => Check(configuration, provider))
            .BindConfiguration(CoapConfiguration.ClientSection)
            .Configure<IConfiguration>((o, configuration) =>
            {
                IConfigurationSection section = configuration.GetSection(CoapConfiguration.ClientSection);
                CoapConfiguration.BindLocalEndPoint(o, section);
                CoapConfiguration.BindRetransmissionPolicy(o.Endpoint, section.GetSection(nameof(CoapClientOptions.Endpoint)));
                TlsConfiguration.BindClient(o.Tls, section.GetSection(nameof(CoapClientOptions.Tls)));
            })
            .PostConfigure<IServiceProvider>((o, provider) => CoapConfiguration.UseHostServices(o.Endpoint, provider.GetService<ILoggerFactory>(), provider.GetService<TimeProvider>()));
        if (configure is not null)
        {
            options.Configure(configure);
        }

        services.TryAddSingleton(provider => new CoapClient(provider.GetRequiredService<IOptions<CoapClientOptions>>().Value));
        return services;
    }

    private static void Check(IConfiguration configuration, IServiceProvider provider)
        => CoapConfiguration.Check(configuration, provider.GetServices<CoapConfigurationSection>(), provider.GetServices<CoapEndpointConfigurationSection>());

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
