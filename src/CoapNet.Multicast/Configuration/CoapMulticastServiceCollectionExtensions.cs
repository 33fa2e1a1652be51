using CoapNet.Configuration;
using CoapNet.Server;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;

namespace CoapNet.Multicast.Configuration;

/// <summary>
/// Adds group communication to the server that <c>AddCoapServer</c> (CoapNet.Hosting) registers, configured from
/// "Coap:Multicast" (<see cref="MulticastConfiguration"/>). Until this is added, "Coap:Multicast" is an unknown key,
/// which stops the start.
/// </summary>
public static class CoapMulticastServiceCollectionExtensions
{
    // "Coap:Multicast" as a path below "Coap".
    private const string SectionName = "Multicast";

    /// <summary>
    /// Makes "Coap:Multicast" a known section and has the server join its groups (All CoAP Nodes unless "Groups" lists
    /// others) on its interfaces (every one unless "Interfaces" names some), as
    /// <see cref="CoapMulticastServerExtensions.ListenMulticast"/> does, with the leisure and rate limit the section sets,
    /// then changed by <paramref name="configure"/>. The section is read after every other configuration of the server's
    /// options, so the group endpoints take the server's "Endpoint" settings as bound. It serves UDP on its "Port"
    /// (5683) for unicast too: no endpoint of "Coap:Endpoints" should listen on that port. A value out of range stops the
    /// start with the section's path.
    /// </summary>
    /// <param name="services">The services.</param>
    /// <param name="configure">Changes the options after configuration is read, or null.</param>
    /// <returns>The services.</returns>
    /// <example>
    /// <code>
    /// builder.Services.AddCoapServer();
    /// builder.Services.AddCoapMulticast();   // with "Coap:Multicast:Interfaces:0": "eth0", "Coap:Multicast:Leisure": "00:00:02", ...
    /// </code>
    /// </example>
    public static IServiceCollection AddCoapMulticast(this IServiceCollection services, Action<CoapMulticastOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        foreach (ServiceDescriptor descriptor in services)
        {
            // Added once: a second call would join the groups a second time, on the same port.
            if (!descriptor.IsKeyedService && descriptor.ImplementationInstance is CoapConfigurationSection { Path: SectionName })
            {
                return services;
            }
        }

        services.AddSingleton(new CoapConfigurationSection(SectionName, MulticastConfiguration.Keys()));
        services.AddOptions<CoapServerOptions>().PostConfigure<IConfiguration>((options, configuration) =>
        {
            IConfigurationSection section = configuration.GetSection(MulticastConfiguration.Section);
            try
            {
                options.ListenMulticast(multicast =>
                {
                    MulticastConfiguration.ReadOptions(multicast, section);
                    configure?.Invoke(multicast);
                });
            }
            catch (ArgumentException e)
            {
                // A setting ListenMulticast refuses (a group that is not a multicast address, an interface not there) is
                // named by the section it came from.
                throw new FormatException($"{section.Path}: {e.Message}", e);
            }
        });
        return services;
    }
}
