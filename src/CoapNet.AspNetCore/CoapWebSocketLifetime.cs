using CoapNet.Server;
using Microsoft.Extensions.Hosting;

namespace CoapNet.AspNetCore;

/// <summary>
/// Stops the hosted <see cref="CoapServer"/> as soon as the host begins to stop, before any hosted service stops. The web
/// server stops first and waits for the requests in progress, and the request of a WebSocket lasts as long as its CoAP
/// connection, which only the CoAP server's stop ends, with Release (RFC 8323 section 5.5): left to its turn after the
/// web server, it would hold the host's shutdown for its whole timeout and the WebSockets would be cut without one.
/// </summary>
/// <remarks>The server's own hosted service stops it again later, which then has nothing left to do.</remarks>
internal sealed class CoapWebSocketLifetime(CoapServer server) : IHostedLifecycleService
{
    public Task StartingAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StartedAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StoppingAsync(CancellationToken cancellationToken) => server.StopAsync(cancellationToken);

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StoppedAsync(CancellationToken cancellationToken) => Task.CompletedTask;
}
