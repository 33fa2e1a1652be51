using CoapNet.Hosting;
using CoapNet.Server;
using CoapNet.WebSockets;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace CoapNet.AspNetCore;

/// <summary>Registers CoAP over WebSockets (RFC 8323 section 4) for the hosted <see cref="CoapServer"/>.</summary>
public static class CoapWebSocketServiceCollectionExtensions
{
    /// <summary>
    /// Registers the hosted <see cref="CoapServer"/> (<see cref="CoapServiceCollectionExtensions.AddCoapServer"/>, if it is
    /// not yet) with two endpoints more, coap+ws and coaps+ws, whose listener is this ASP.NET Core application: the
    /// WebSockets that <see cref="CoapWebSocketEndpointRouteBuilderExtensions.MapCoapWebSockets"/> accepts over HTTP and
    /// HTTPS reach the same routes as the server's other endpoints. Kestrel owns the ports; the server's connection
    /// limits (<see cref="CoapServerOptions.Connections"/>) apply to each WebSocket as to a TCP connection. A server
    /// that listens nowhere else then listens only there (no default coap://[::]:5683).
    /// </summary>
    /// <param name="services">The services.</param>
    /// <param name="configure">Changes the endpoint's settings (allowed origins), or null.</param>
    /// <returns>The server's builder, to map routes and resources with.</returns>
    /// <example>
    /// <code>
    /// builder.Services.AddCoapWebSockets()
    ///     .Map((server, _) =&gt; server.MapGet("/hello", request =&gt; CoapResponse.Content("Hello")));
    /// WebApplication app = builder.Build();
    /// app.MapCoapWebSockets();
    /// </code>
    /// </example>
    public static CoapServerBuilder AddCoapWebSockets(this IServiceCollection services, Action<CoapWebSocketOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        CoapServerBuilder server = services.AddCoapServer();
        OptionsBuilder<CoapWebSocketOptions> options = services.AddOptions<CoapWebSocketOptions>();
        if (configure is not null)
        {
            options.Configure(configure);
        }

        if (!IsRegistered(services))
        {
            // Once, however often this is called: a second pair of endpoints would find the hub's listeners taken.
            services.AddSingleton<CoapWebSocketHub>();
            services.AddHostedService<CoapWebSocketLifetime>();
            services.AddOptions<CoapServerOptions>().Configure<CoapWebSocketHub>((o, hub) =>
            {
                o.Transports.Add(new WebSocketServerTransportFactory(hub, secure: false));
                o.Transports.Add(new WebSocketServerTransportFactory(hub, secure: true));
                o.Listen($"{CoapWebSocketTransportFactory.PlainScheme}://[::]:0", endpoint => endpoint.Name = "MapCoapWebSockets over HTTP");
                o.Listen($"{CoapWebSocketTransportFactory.SecureScheme}://[::]:0", endpoint => endpoint.Name = "MapCoapWebSockets over HTTPS");
            });
        }

        return server;
    }

    private static bool IsRegistered(IServiceCollection services)
    {
        foreach (ServiceDescriptor descriptor in services)
        {
            if (descriptor.ServiceType == typeof(CoapWebSocketHub))
            {
                return true;
            }
        }

        return false;
    }
}
