using System.Net;
using System.Security.Claims;
using System.Security.Cryptography.X509Certificates;
using CoapNet.AspNetCore;
using CoapNet.Client;
using CoapNet.Hosting;
using CoapNet.Messages;
using CoapNet.Server;
using CoapNet.Tests.Tls;
using CoapNet.Tls;
using CoapNet.WebSockets;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace CoapNet.Tests.WebSockets;

/// <summary>
/// A real ASP.NET Core application on Kestrel (127.0.0.1, free ports: HTTP, and HTTPS with the test PKI's server
/// certificate, or one the test gives) serving CoAP over WebSockets with AddCoapWebSockets and MapCoapWebSockets, and UDP on a free port too,
/// all into one hosted CoapServer with the sample's resources and GET /whoami ("scheme address identity").
/// </summary>
internal sealed class KestrelCoapServer : IAsyncDisposable
{
    private readonly WebApplication _app;

    private KestrelCoapServer(WebApplication app)
    {
        _app = app;
    }

    /// <summary>The hosted CoAP server.</summary>
    public CoapServer Coap => _app.Services.GetRequiredService<CoapServer>();

    /// <summary>Kestrel's HTTP port (coap+ws).</summary>
    public int HttpPort => Port("http");

    /// <summary>Kestrel's HTTPS port (coaps+ws).</summary>
    public int HttpsPort => Port("https");

    /// <summary>Starts the application.</summary>
    /// <param name="options">Changes the WebSocket endpoint's settings, or null.</param>
    /// <param name="coap">Changes the CoAP server's settings, or null.</param>
    /// <param name="user">The name every HTTP request is authenticated as (a stand-in for ASP.NET Core authentication), or null for none.</param>
    /// <param name="certificate">The HTTPS certificate, with its key; null for the test PKI's server certificate, which the test CA issued.</param>
    public static async Task<KestrelCoapServer> StartAsync(Action<CoapWebSocketOptions>? options = null, Action<CoapServerOptions>? coap = null, string? user = null, X509Certificate2? certificate = null)
    {
        WebApplicationBuilder builder = WebApplication.CreateBuilder(new WebApplicationOptions { EnvironmentName = "Test" });
        builder.Logging.ClearProviders();

        // No appsettings.json: the test's output folder holds the hosted sample's, whose endpoints are on fixed ports.
        builder.Configuration.Sources.Clear();
        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            kestrel.Listen(IPAddress.Loopback, 0);
            kestrel.Listen(IPAddress.Loopback, 0, listen => listen.UseHttps(certificate ?? TestPki.Instance.Server));
        });
        builder.Services.AddCoapServer(o =>
        {
            o.Endpoint.Blockwise = CoapNet.Samples.Server.SampleResources.Blockwise;
            o.Listen("coap://127.0.0.1:0");
            coap?.Invoke(o);
        });
        builder.Services.AddCoapWebSockets(options)
            .Map((server, _) =>
            {
                CoapNet.Samples.Server.SampleResources.Map(server);
                server.MapGet("/whoami", request => CoapResponse.Content(
                    $"{request.Peer.Scheme} {request.Peer.EndPoint.Address} {request.Peer.Identity?.ToString() ?? "anonymous"}"));
            });
        WebApplication app = builder.Build();
        if (user is not null)
        {
            // What an authentication handler does: the request's user, before the endpoint runs.
            app.Use((context, next) =>
            {
                context.User = new ClaimsPrincipal(new ClaimsIdentity([new Claim(ClaimTypes.Name, user)], "Test"));
                return next(context);
            });
        }

        app.MapCoapWebSockets();
        await app.StartAsync();
        return new KestrelCoapServer(app);
    }

    /// <summary>A client that speaks coap+ws and coaps+ws and trusts the test CA, or only the certificates given.</summary>
    /// <param name="trusted">The certificates the server's must chain to (a self-signed server certificate itself, say); null for the test CA.</param>
    public static CoapClient Client(X509Certificate2Collection? trusted = null)
    {
        CoapClientOptions options = new()
        {
            LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0),
            Tls = new TlsClientOptions { TrustedRoots = trusted ?? TestPki.Instance.Roots },
        };
        options.Transports.Add(new CoapWebSocketTransportFactory(secure: false));
        options.Transports.Add(new CoapWebSocketTransportFactory(secure: true));
        return new CoapClient(options);
    }

    /// <summary>A coap+ws URI on the server.</summary>
    public Uri Ws(string pathAndQuery) => new($"coap+ws://127.0.0.1:{HttpPort}{pathAndQuery}");

    /// <summary>A coaps+ws URI on the server.</summary>
    public Uri Wss(string pathAndQuery) => new($"coaps+ws://127.0.0.1:{HttpsPort}{pathAndQuery}");

    /// <summary>The WebSocket URI of the server's CoAP endpoint over HTTP.</summary>
    public Uri Endpoint => new($"ws://127.0.0.1:{HttpPort}/.well-known/coap");

    /// <summary>A coap:// (UDP) URI on the server.</summary>
    public Uri Udp(string pathAndQuery)
    {
        foreach (Uri uri in Coap.LocalUris)
        {
            if (uri.Scheme == "coap")
            {
                return new Uri($"coap://127.0.0.1:{uri.Port}{pathAndQuery}");
            }
        }

        throw new InvalidOperationException("The server does not listen on coap.");
    }

    /// <summary>Stops the application: the CoAP server releases its connections.</summary>
    public Task StopAsync() => _app.StopAsync();

    public async ValueTask DisposeAsync() => await _app.DisposeAsync();

    private int Port(string scheme)
    {
        foreach (string address in _app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses)
        {
            Uri uri = new(address);
            if (uri.Scheme == scheme)
            {
                return uri.Port;
            }
        }

        throw new InvalidOperationException($"Kestrel does not listen on {scheme}.");
    }
}
