using System.Net;
using System.Text.RegularExpressions;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.WebSockets;

/// <summary>The ASP.NET Core sample run as a process on a free port: Kestrel serves its CoAP routes over coap+ws.</summary>
public sealed partial class WebSocketSampleTests
{
    private static readonly TimeSpan Liveness = TimeSpan.FromSeconds(30);

    [SkippableFact]
    public async Task TheSampleServesCoapOverWebSocketsAndStopsWithTheHost()
    {
        Skip.If(OperatingSystem.IsWindows(), "POSIX signals");
        string dll = Path.Combine(AppContext.BaseDirectory, "CoapNet.Samples.WebSockets.dll");
        TaskCompletionSource<int> listening = new(TaskCreationOptions.RunContinuationsAsynchronously);

        // A content root of its own: the test's output folder holds the hosted sample's appsettings.json, on fixed ports.
        DirectoryInfo root = Directory.CreateTempSubdirectory("coapnet-ws-sample-");
        using ChildProcess sample = ChildProcess.StartDll(dll, ["--urls", "http://127.0.0.1:0", "--contentRoot", root.FullName], line =>
        {
            if (Listening().Match(line) is { Success: true } match)
            {
                listening.TrySetResult(int.Parse(match.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture));
            }
        });
        await sample.UntilAsync(listening.Task, Liveness, "say where Kestrel listens");
        await using CoapClient client = KestrelCoapServer.Client();

        CoapResponse hello = await client.GetAsync(new Uri($"coap+ws://127.0.0.1:{await listening.Task}/hello"));

        hello.GetPayloadString().Should().Be("Hello over WebSockets!");
        await sample.SignalAsync("TERM");
        (await sample.WaitForExitAsync(Liveness)).Should().Be(0, sample.Output);
        root.Delete(recursive: true);
    }

    [GeneratedRegex(@"Now listening on: http://127\.0\.0\.1:(\d+)")]
    private static partial Regex Listening();
}
