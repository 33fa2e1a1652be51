using CoapNet.Server;
using Microsoft.Extensions.Hosting;

namespace CoapNet.Hosting;

/// <summary>
/// Runs the registered <see cref="CoapServer"/> with the host: it binds its endpoints when the host
/// starts and, when the host stops, stops taking requests, answers those in flight until the host's
/// shutdown token fires, then closes. The container disposes the server with the host.
/// </summary>
internal sealed class CoapServerHostedService(CoapServer server) : IHostedService
{
    public Task StartAsync(CancellationToken cancellationToken) => server.StartAsync(cancellationToken);

    public Task StopAsync(CancellationToken cancellationToken) => server.StopAsync(cancellationToken);
}
