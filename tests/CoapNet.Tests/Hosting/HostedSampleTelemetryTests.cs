using System.Net;
using CoapNet.Client;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Hosting;

/// <summary>
/// The hosted sample with its OpenTelemetry console exporter on (<c>--Telemetry:Console=true</c>): what it exports names
/// the service, so a collector can tell this server's metrics and traces from another's.
/// </summary>
public sealed class HostedSampleTelemetryTests
{
    private static readonly TimeSpan Liveness = TimeSpan.FromSeconds(30);

    [SkippableFact]
    public async Task TheSamplesTelemetryNamesItsService()
    {
        Skip.If(OperatingSystem.IsWindows(), "POSIX signals");
        string dll = Path.Combine(AppContext.BaseDirectory, "CoapNet.Samples.Hosted.dll");
        using HostedSampleSettings settings = new();
        TaskCompletionSource<Uri> listening = new(TaskCreationOptions.RunContinuationsAsynchronously);
        TaskCompletionSource traced = new(TaskCreationOptions.RunContinuationsAsynchronously);
        using ChildProcess sample = ChildProcess.StartDll(dll, [.. settings.Arguments, "--Telemetry:Console", "true"], line =>
        {
            if (HostedSampleSettings.ListeningOn(line) is { } uri)
            {
                listening.TrySetResult(uri);
            }

            // The console exporter prints the resource with every exported activity.
            if (line.Contains("service.name: CoapNet.Samples.Hosted", StringComparison.Ordinal))
            {
                traced.TrySetResult();
            }
        });
        await sample.UntilAsync(listening.Task, Liveness, "say where it listens");
        Uri server = await listening.Task;
        await using CoapClient client = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) });

        (await client.GetAsync(new Uri(server, "/hello"))).IsSuccess.Should().BeTrue();

        await sample.UntilAsync(traced.Task, Liveness, "export a trace naming its service");
        await sample.SignalAsync("TERM");
        (await sample.WaitForExitAsync(Liveness)).Should().Be(0, sample.Output);
    }
}
