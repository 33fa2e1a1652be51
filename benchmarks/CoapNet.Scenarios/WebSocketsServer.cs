using System.Globalization;
using System.Net;
using CoapNet.AspNetCore;
using CoapNet.Hosting;
using CoapNet.Samples.Server;
using CoapNet.Server;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace CoapNet.Scenarios;

/// <summary>
/// The server of the websockets scenario ("websockets-server"), a child process so that its CPU time is its own: one
/// ASP.NET Core application whose hosted CoapServer serves the sample server's resources over coap+tcp (its own
/// listener) and over coap+ws (Kestrel, MapCoapWebSockets), both on 127.0.0.1 on free ports. Prints
/// "listening TCP-PORT WS-PORT" once both listen, and stops when its standard input closes.
/// </summary>
internal static class WebSocketsServer
{
    public static async Task<int> RunAsync()
    {
        WebApplicationBuilder builder = WebApplication.CreateBuilder(new WebApplicationOptions { EnvironmentName = "Benchmark" });

        // What is measured is CoAP, not the console: no logging, and no configuration files or variables to change the setup.
        builder.Logging.ClearProviders();
        builder.Configuration.Sources.Clear();
        builder.WebHost.ConfigureKestrel(kestrel => kestrel.Listen(IPAddress.Loopback, 0));
        builder.Services.AddCoapServer(options => options.Listen("coap+tcp://127.0.0.1:0"));
        builder.Services.AddCoapWebSockets().Map((server, _) => SampleResources.Map(server));
        await using WebApplication app = builder.Build();
        app.MapCoapWebSockets();
        await app.StartAsync();

        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"listening {TcpPort(app.Services.GetRequiredService<CoapServer>())} {HttpPort(app)}"));
        await Console.In.ReadToEndAsync();
        await app.StopAsync();
        return 0;
    }

    private static int TcpPort(CoapServer server)
    {
        foreach (Uri uri in server.LocalUris)
        {
            if (uri.Scheme == "coap+tcp")
            {
                return uri.Port;
            }
        }

        throw new InvalidOperationException("The CoAP server does not listen on coap+tcp.");
    }

    private static int HttpPort(WebApplication app)
    {
        foreach (string address in app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()?.Addresses ?? [])
        {
            if (Uri.TryCreate(address, UriKind.Absolute, out Uri? uri) && uri.Scheme == "http")
            {
                return uri.Port;
            }
        }

        throw new InvalidOperationException("Kestrel does not listen on http.");
    }
}
