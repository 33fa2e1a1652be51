using CoapNet.Server;
using Microsoft.Extensions.Hosting;

namespace CoapNet.Samples.Hosted;

/// <summary>
/// A singleton and a hosted service: the reading of /sensors/temperature (degrees Celsius, a sine of period one minute
/// around 20), whose observers it notifies every second while the host runs, for a chart such as the explorer's.
/// </summary>
public sealed class Thermometer(CoapServer server, TimeProvider? time = null) : BackgroundService
{
    /// <summary>The path of the resource it notifies the observers of.</summary>
    public const string Path = "/sensors/temperature";

    private readonly TimeProvider _time = time ?? TimeProvider.System;

    /// <summary>The temperature now.</summary>
    /// <returns>The value as text, such as "21.37".</returns>
    public string Read()
        => (20 + (5 * Math.Sin(2 * Math.PI * _time.GetUtcNow().ToUnixTimeMilliseconds() / 60_000.0))).ToString("F2", System.Globalization.CultureInfo.InvariantCulture);

    /// <summary>Notifies the observers once a second until the host stops.</summary>
    /// <param name="stoppingToken">Signalled when the host stops.</param>
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        using PeriodicTimer timer = new(TimeSpan.FromSeconds(1), _time);
        try
        {
            while (await timer.WaitForNextTickAsync(stoppingToken))
            {
                server.NotifyObservers(Path);
            }
        }
        catch (OperationCanceledException)
        {
            // The host stops.
        }
    }
}
