using System.Collections.Concurrent;
using System.Diagnostics;
using System.Diagnostics.Metrics;
using CoapNet.Client;
using CoapNet.Diagnostics;
using CoapNet.Messages;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Diagnostics;

/// <summary>
/// A scripted exchange seen through a <see cref="MeterListener"/> and an <see cref="ActivityListener"/>,
/// as OpenTelemetry would see it: the counts, durations and activities of a server and a client.
/// </summary>
[Collection(ProcessWideCollection.Name)]
public sealed class InstrumentationTests : IDisposable
{
    private readonly CoapMeterRecorder _meters = new();
    private readonly ActivityListener _activities;
    private readonly ConcurrentQueue<Activity> _stopped = new();

    public InstrumentationTests()
    {
        _activities = new ActivityListener
        {
            ShouldListenTo = source => source.Name == CoapInstrumentation.ActivitySourceName,
            Sample = (ref ActivityCreationOptions<ActivityContext> _) => ActivitySamplingResult.AllDataAndRecorded,
            ActivityStopped = _stopped.Enqueue,
        };
        ActivitySource.AddActivityListener(_activities);
    }

    [Fact]
    public async Task AServedRequestIsCountedTimedAndTracedOnBothSides()
    {
        string seenByHandler = string.Empty;
        await using (LoopbackServer server = LoopbackServer.Start(s =>
        {
            s.MapGet("/things/{id}", request =>
            {
                seenByHandler = Activity.Current?.OperationName ?? "none";
                return CoapResponse.Content("thing " + request.GetRouteValue("id"));
            });
            s.MapGet("/broken", request => throw new InvalidOperationException("broken"));
        }))
        {
            await using CoapClient client = new();
            (await client.GetAsync(server.Uri("/things/7"))).GetPayloadString().Should().Be("thing 7");
            (await client.GetAsync(server.Uri("/broken"))).Code.Should().Be(CoapCode.InternalServerError);
        }

        seenByHandler.Should().Be("CoAP GET", "the server's activity is current inside the handler");

        List<Dictionary<string, object?>> served = Tags(CoapInstrumentation.ServerRequests);
        served.Should().HaveCount(2);
        served.Should().ContainSingle(t => (string?)t["coap.route"] == "/things/{id}" && (string?)t["coap.response.code"] == "2.05" && (string?)t["coap.method"] == "GET" && (string?)t["url.scheme"] == "coap");
        served.Should().ContainSingle(t => (string?)t["coap.route"] == "/broken" && (string?)t["coap.response.code"] == "5.00");
        Tags(CoapInstrumentation.ServerRequestDuration).Should().HaveCount(2);
        _meters.Of(CoapInstrumentation.ServerRequestDuration).Should().OnlyContain(m => m.Value >= 0);

        Tags(CoapInstrumentation.ClientRequests).Select(t => (string?)t["coap.response.code"]).Should().BeEquivalentTo(["2.05", "5.00"]);
        _meters.Of(CoapInstrumentation.ActiveExchanges).Sum(m => m.Value).Should().Be(0, "every exchange that started also ended");

        Activity serverActivity = _stopped.Should().ContainSingle(a => a.Kind == ActivityKind.Server && (string?)a.GetTagItem("url.path") == "/things/7").Subject;
        serverActivity.GetTagItem("coap.route").Should().Be("/things/{id}");
        serverActivity.GetTagItem("coap.response.code").Should().Be("2.05");
        serverActivity.GetTagItem("network.transport").Should().Be("udp");
        serverActivity.GetTagItem("network.peer.address").Should().Be("127.0.0.1");
        _stopped.Should().ContainSingle(a => a.Kind == ActivityKind.Server && (string?)a.GetTagItem("url.path") == "/broken")
            .Which.Status.Should().Be(ActivityStatusCode.Error);
        _stopped.Where(a => a.Kind == ActivityKind.Client).Select(a => (string?)a.GetTagItem("url.path")).Should().BeEquivalentTo(["/things/7", "/broken"]);
    }

    [Fact]
    public async Task ARequestThatReachesNoRouteIsCountedUnderTheUnmatchedRoute()
    {
        await using (LoopbackServer server = LoopbackServer.Start(s => s.MapGet("/things/{id}", _ => CoapResponse.Content("thing"))))
        {
            await using CoapClient client = new();
            (await client.GetAsync(server.Uri("/nothing/here"))).Code.Should().Be(CoapCode.NotFound);
        }

        Tags(CoapInstrumentation.ServerRequests).Should().ContainSingle()
            .Which["coap.route"].Should().Be(CoapInstrumentation.UnmatchedRoute, "a 4.04 has a route tag that groups every unmatched request, not an empty one");
        _stopped.Should().ContainSingle(a => a.Kind == ActivityKind.Server).Which.GetTagItem("coap.route").Should().Be("(unmatched)");
    }

    [Fact]
    public void TheDurationHistogramsAdviseBucketsInSecondsUpToMaxTransmitWait()
    {
        // A MeterListener sees the advice an OpenTelemetry SDK takes its default buckets from.
        List<Instrument> histograms = [];
        using MeterListener listener = new()
        {
            InstrumentPublished = (instrument, _) =>
            {
                if (instrument.Meter.Name == CoapInstrumentation.MeterName && instrument is Histogram<double>)
                {
                    histograms.Add(instrument);
                }
            },
        };
        listener.Start();

        histograms.Select(h => h.Name).Should().BeEquivalentTo([CoapInstrumentation.ServerRequestDuration, CoapInstrumentation.ClientRequestDuration, CoapInstrumentation.NotificationLag]);
        foreach (Instrument histogram in histograms)
        {
            IReadOnlyList<double>? buckets = ((Histogram<double>)histogram).Advice?.HistogramBucketBoundaries;
            buckets.Should().NotBeNull().And.BeInAscendingOrder().And.Equal(CoapInstrumentation.DurationBuckets);
            buckets![0].Should().BeLessThanOrEqualTo(0.0001, "a loopback request takes a fraction of a millisecond");
            buckets[^1].Should().BeGreaterThan(93, "a confirmable exchange may take MAX_TRANSMIT_WAIT, 93 s (RFC 7252 section 4.8.2)");
        }
    }

    [Fact]
    public async Task AFailedClientRequestIsCountedWithItsErrorType()
    {
        // A port nobody answers on: ICMP or silence, then a timeout (shortened) or a reset.
        await using CoapClient client = new(new CoapClientOptions
        {
            Endpoint = new CoapNet.Messaging.CoapEndpointOptions { TransmissionParameters = new CoapNet.Messaging.CoapTransmissionParameters { AckTimeout = TimeSpan.FromMilliseconds(20), MaxRetransmit = 1 } },
        });
        int port = FreePorts.UdpAndTcp();

        await client.Invoking(c => c.GetAsync(new Uri($"coap://127.0.0.1:{port}/nobody"))).Should().ThrowAsync<CoapNet.Messaging.CoapException>();

        Dictionary<string, object?> tags = Tags(CoapInstrumentation.ClientRequests).Should().ContainSingle().Subject;
        tags["error.type"].Should().Be(nameof(CoapNet.Messaging.CoapTimeoutException));
        tags.Should().NotContainKey("coap.response.code");
        _meters.Of(CoapInstrumentation.Retransmissions).Sum(m => m.Value).Should().Be(1);
        _stopped.Should().ContainSingle(a => a.Kind == ActivityKind.Client).Which.Status.Should().Be(ActivityStatusCode.Error);
    }

    [Fact]
    public void EachPeerOfACocoaEndpointReportsItsRetransmissionTimeout()
    {
        using CoapNet.Tests.Messaging.MessagingHarness h = new();
        CoapNet.Tests.Infrastructure.TestPeer server = h.Peer("10.0.0.77");
        CoapNet.Tests.Infrastructure.TestPeer other = h.Peer("10.0.0.78:5684");
        CoapNet.Messaging.CoapEndpointOptions options = h.Options();
        CoapNet.Messaging.CoapEndpoint client = h.Endpoint("10.0.0.76", new CoapNet.Messaging.CoapEndpointOptions
        {
            TimeProvider = h.Time,
            Random = options.Random,
            RetransmissionPolicy = CoapNet.Messaging.Retransmission.CoapRetransmissionPolicy.Cocoa(),
        });

        // A strong round trip of 300 ms to one peer (RTO 0.5 x 0.9 + 0.5 x 2 = 1.45 s); the other has not answered yet (blind, 2 s).
        _ = client.SendRequestAsync(CoapNet.Tests.Messaging.MessagingHarness.Get(), server.EndPoint);
        _ = client.SendRequestAsync(CoapNet.Tests.Messaging.MessagingHarness.Get(), other.EndPoint);
        h.Network.DeliverAll();
        h.Time.Advance(TimeSpan.FromMilliseconds(300));
        server.SendPiggybacked(server.Last.Parsed, client.LocalEndPoint, CoapCode.Content);
        h.Network.DeliverAll();

        List<CoapMeasurement> rtos = [.. _meters.Collect(CoapInstrumentation.PeerRetransmissionTimeout)
            .Where(m => ((string?)m.Tags["network.peer.address"])!.StartsWith("10.0.0.7", StringComparison.Ordinal))];
        rtos.Should().HaveCount(2);
        rtos.Should().ContainSingle(m => (string?)m.Tags["network.peer.address"] == "10.0.0.77" && (int?)m.Tags["network.peer.port"] == 5683 && (string?)m.Tags["url.scheme"] == "coap")
            .Which.Value.Should().BeApproximately(1.45, 1e-9);
        rtos.Should().ContainSingle(m => (string?)m.Tags["network.peer.address"] == "10.0.0.78" && (int?)m.Tags["network.peer.port"] == 5684)
            .Which.Value.Should().Be(2);

        // A disposed endpoint reports nothing more.
        _meters.Measurements.Clear();
        client.Dispose();
        _meters.Collect(CoapInstrumentation.PeerRetransmissionTimeout).Should().NotContain(m => (string?)m.Tags["network.peer.address"] == "10.0.0.77");
    }

    public void Dispose()
    {
        _meters.Dispose();
        _activities.Dispose();
    }

    private List<Dictionary<string, object?>> Tags(string instrument) => _meters.Tags(instrument);
}
