using CoapNet.Client;
using CoapNet.Hosting;
using CoapNet.Server;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace CoapNet.Tests.Hosting;

/// <summary>The options AddCoapServer and AddCoapClient bind from an in-memory configuration, as a host resolves them.</summary>
internal static class BoundOptions
{
    /// <summary>A configuration of <paramref name="settings"/> ("Coap:..." keys).</summary>
    public static IConfiguration Configuration(Dictionary<string, string?> settings) => new ConfigurationBuilder().AddInMemoryCollection(settings).Build();

    /// <summary>The server's options bound from <paramref name="settings"/>.</summary>
    public static CoapServerOptions Server(Dictionary<string, string?> settings) => Resolve<CoapServerOptions>(settings, services => services.AddCoapServer());

    /// <summary>The client's options bound from <paramref name="settings"/>.</summary>
    public static CoapClientOptions Client(Dictionary<string, string?> settings) => Resolve<CoapClientOptions>(settings, services => services.AddCoapClient());

    /// <summary>The services <paramref name="register"/> adds, over a configuration of <paramref name="settings"/>.</summary>
    public static ServiceProvider Services(Dictionary<string, string?> settings, Action<IServiceCollection> register)
    {
        ServiceCollection services = new();
        services.AddSingleton(Configuration(settings));
        register(services);
        return services.BuildServiceProvider();
    }

    private static T Resolve<T>(Dictionary<string, string?> settings, Action<IServiceCollection> register)
        where T : class
    {
        using ServiceProvider provider = Services(settings, register);
        return provider.GetRequiredService<IOptions<T>>().Value;
    }
}
