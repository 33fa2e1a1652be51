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
        DtlsServerTransport dtls = new(DtlsLoopback.ServerOptions());
        await using LoopbackServer server = LoopbackServer.Start(s => SampleResources.Map(s), new CoapNet.Server.CoapServerOptions { DatagramTransports = [dtls] });
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

    [GeneratedRegex(@"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+\+00:00")]
    private static partial Regex Timestamp();
}
