using System.Diagnostics;
using System.Text.RegularExpressions;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Samples.Server;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Interop;

/// <summary>
/// Observe (RFC 7641) with libcoap 4.3 in both directions over real loopback sockets, once over UDP
/// and once over TCP: coap-client-notls -s observes our sample /time, and our client observes
/// coap-server-notls's /time. Both clocks tick once a second, so these tests take seconds of real time.
/// </summary>
public abstract partial class LibCoapObserveTests
{
    private readonly string _scheme;

    private protected LibCoapObserveTests(string scheme) => _scheme = scheme;

    [SkippableFact]
    public async Task LibcoapObservesOurTimeForTenSecondsInOrderAndDeregistersAtTheEnd()
    {
        await using LoopbackServer server = LoopbackServer.Start(s => SampleResources.Map(s), LoopbackServer.Options(tcp: _scheme == "coap+tcp"));
        Process client = LibCoap.Start(LibCoap.Client, "-s", "10", "-B", "15", server.Uri("/time", _scheme).ToString());
        string output;
        try
        {
            Task<string> stdout = client.StandardOutput.ReadToEndAsync();
            using (CancellationTokenSource timeout = new(TimeSpan.FromSeconds(40)))
            {
                await client.WaitForExitAsync(timeout.Token);
            }

            output = await stdout;
        }
        finally
        {
            LibCoap.Stop(client);
        }

        List<DateTimeOffset> times = [.. Timestamp().Matches(output).Select(m => DateTimeOffset.Parse(m.Value, System.Globalization.CultureInfo.InvariantCulture))];
        times.Count.Should().BeInRange(8, 13, "the registration's response and about one notification a second for ten seconds");
        times.Should().BeInAscendingOrder();

        // Over UDP libcoap sends GET with Observe=1 at the end; over TCP it closes the connection. Either way the server forgets it.
        await Wait.UntilAsync(() => server.Server.Observations == 0);
        server.Server.Observations.Should().Be(0);
    }

    [SkippableFact]
    public async Task OurClientObservesLibcoapTimeAndStopsCleanly()
    {
        using LibCoapServer libcoap = LibCoapServer.Start();
        await using CoapClient client = new();
        Uri uri = new(libcoap.Uri("/time").ToString().Replace("coap://", _scheme + "://", StringComparison.Ordinal));
        List<CoapResponse> received = [];
        using CancellationTokenSource timeout = new(TimeSpan.FromSeconds(30));

        await foreach (CoapResponse response in client.ObserveAsync(uri, timeout.Token))
        {
            received.Add(response);
            if (received.Count == 4)
            {
                break;
            }
        }

        received.Should().OnlyContain(r => r.Code == CoapCode.Content);
        received.Select(r => r.Observe).Should().OnlyContain(o => o != null, "libcoap observes /time");
        received.Select(r => r.Observe!.Value).Should().BeInAscendingOrder().And.OnlyHaveUniqueItems();
        received.Select(r => r.GetPayloadString()).Distinct().Count().Should().BeGreaterThan(2, "the time changes between notifications");
    }

    [GeneratedRegex(@"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+\+00:00")]
    private static partial Regex Timestamp();
}

/// <summary>Observe with libcoap over UDP.</summary>
public sealed class LibCoapObserveOverUdpTests() : LibCoapObserveTests("coap");

/// <summary>Observe with libcoap over TCP (RFC 8323 section 7).</summary>
public sealed class LibCoapObserveOverTcpTests() : LibCoapObserveTests("coap+tcp");
