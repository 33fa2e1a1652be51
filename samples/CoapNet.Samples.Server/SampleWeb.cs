using System.Net;
using CoapNet.AspNetCore;
using CoapNet.Hosting;
using CoapNet.Server;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace CoapNet.Samples.Server;

/// <summary>
/// coap+ws (RFC 8323 section 4) and the CoAP explorer page on one HTTP port: a Kestrel application whose hosted
/// <see cref="CoapServer"/> is the sample's server, with the sample's endpoints and resources, so a browser explores the
/// same resources the UDP and TCP clients see.
/// </summary>
internal static class SampleWeb
{
    /// <summary>Builds the application; nothing listens until it starts.</summary>
    /// <param name="address">Where Kestrel listens ([::] dual-stack).</param>
    /// <param name="port">Its HTTP port.</param>
    /// <param name="configure">The sample's endpoints and settings.</param>
    /// <param name="map">The sample's resources.</param>
    /// <param name="logging">How the console log is written, as for the CoAP server's own lines.</param>
    public static WebApplication Build(IPAddress address, int port, Action<CoapServerOptions> configure, Action<CoapServer> map, Action<ILoggingBuilder> logging)
    {
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions { Args = [] });

        // The command line is the sample's only configuration: an appsettings.json in the working directory is not its own.
        builder.Configuration.Sources.Clear();
        builder.Logging.ClearProviders();
        logging(builder.Logging);
        builder.Logging.SetMinimumLevel(LogLevel.Warning)
            // A port in use is said once, by the program, with the flags that move it: not again as the host's stack trace.
            .AddFilter("Microsoft.Extensions.Hosting", LogLevel.None);
        builder.WebHost.ConfigureKestrel(kestrel => kestrel.Listen(address, port));
        builder.Services.AddCoapServer(configure);
        builder.Services.AddCoapWebSockets().Map((server, _) => map(server));

        WebApplication app = builder.Build();
        app.MapCoapWebSockets();     // ws://HOST:PORT/.well-known/coap
        app.MapCoapExplorer();       // http://HOST:PORT/
        return app;
    }
}
