using System.Diagnostics;
using System.Text.RegularExpressions;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Messages;
using CoapNet.Samples.Server;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Interop;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// Observe (RFC 7641) over coaps with libcoap 4.3's OpenSSL build, both ways, with a pre-shared key: notifications
/// go out in the session the registration came in. Both clocks tick once a second, so these take seconds of real time.
/// </summary>
public sealed partial class DtlsLibCoapObserveTests
{
    [SkippableFact]
    public async Task LibcoapObservesOurTimeOverDtlsAndDeregistersAtTheEnd()
    {
        string executable = LibCoap.ClientOpenSsl;
        await using LoopbackServer server = DtlsLoopback.StartEndpoint(s => SampleResources.Map(s));
        Process client = LibCoap.Start(executable, "-u", DtlsLoopback.Identity, "-k", "secretPSK", "-s", "5", "-B", "10", DtlsLoopback.Uri(server.EndPoint, "/time").ToString());
        string output;
        try
        {
            output = await LibCoap.ReadOutputAsync(client, TimeSpan.FromSeconds(40));
        }
        finally
        {
            LibCoap.Stop(client);
        }

        List<DateTimeOffset> times = [.. Timestamp().Matches(output).Select(m => DateTimeOffset.Parse(m.Value, System.Globalization.CultureInfo.InvariantCulture))];
        times.Count.Should().BeInRange(4, 8, "the registration's response and about one notification a second for five seconds");
        times.Should().BeInAscendingOrder();
        await Wait.UntilAsync(() => server.Server.Observations == 0);
    }

    [SkippableFact]
    public async Task OurClientObservesLibcoapsTimeOverDtls()
    {
        using LibCoapServer libcoap = LibCoapServer.Start(LibCoap.ServerOpenSsl, "-k", "secretPSK");
        await using CoapClient client = DtlsLoopback.Client();
        List<CoapResponse> received = [];
        using CancellationTokenSource timeout = new(TimeSpan.FromSeconds(30));

        await foreach (CoapResponse response in client.ObserveAsync(new Uri($"coaps://127.0.0.1:{libcoap.Port + 1}/time"), timeout.Token))
        {
            received.Add(response);
            if (received.Count == 3)
            {
                break;
            }
        }

        received.Should().OnlyContain(r => r.Code == CoapCode.Content);
        received.Select(r => r.Observe!.Value).Should().BeInAscendingOrder().And.OnlyHaveUniqueItems();
        received.Select(r => r.GetPayloadString()).Distinct().Count().Should().BeGreaterThan(1, "the time changes between notifications");
    }

    [SkippableFact]
    public async Task OurObservationOfLibcoapResumesInANewSessionAfterLibcoapIsKilledAndStartedAgainOnItsPort()
    {
        using LibCoapServer libcoap = LibCoapServer.Start(LibCoap.ServerOpenSsl, "-k", "secretPSK");
        ManualTimeProvider time = new();
        DtlsObservationResumeTests.ClientHellos hellos = new();
        await using CoapClient client = DtlsObservationResumeTests.ClientOnClock(time, hellos.Network);
        await using IAsyncEnumerator<CoapResponse> observation = client.ObserveAsync(new Uri($"coaps://127.0.0.1:{libcoap.Port + 1}/time")).GetAsyncEnumerator();
        await observation.NextAsync();
        await observation.NextAsync();
        int handshaken = hellos.Count;

        // No close_notify from a killed process: the client finds out when its re-registration, sent after Max-Age of
        // silence, goes unacknowledged in the old session, which the new process drops.
        libcoap.Restart();
        await DtlsObservationResumeTests.AdvanceUntilAsync(time, () => hellos.Count > handshaken, "the client to give the lost session up and handshake again");

        List<CoapResponse> resumed = [await observation.NextAsync(), await observation.NextAsync(), await observation.NextAsync()];
        resumed.Should().OnlyContain(r => r.Code == CoapCode.Content && r.Observe != null);
        resumed.Select(r => r.GetPayloadString()).Distinct().Count().Should().BeGreaterThan(1, "the new process's time goes on changing in notifications to the same loop");
    }

    [GeneratedRegex(@"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+\+00:00")]
    private static partial Regex Timestamp();
}
