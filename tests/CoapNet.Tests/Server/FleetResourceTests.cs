using System.Text;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Messages;
using CoapNet.Samples.Server;
using CoapNet.Tests.Dtls;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Server;

/// <summary>
/// The sample server's /fleet/{identity} (issue 41) over real coaps on loopback: who may report where, what GET returns,
/// and which observers an accepted report notifies (RFC 7641 section 4.2).
/// </summary>
public sealed class FleetResourceTests
{
    private static readonly Dictionary<string, byte[]> Keys = new(StringComparer.Ordinal)
    {
        ["dev-000001"] = Convert.FromHexString("00112233445566778899aabbccddeeff"),
        ["dev-000002"] = Convert.FromHexString("ffeeddccbbaa99887766554433221100"),
        ["dash-001"] = Convert.FromHexString("0f1e2d3c4b5a69788796a5b4c3d2e1f0"),
    };

    [Fact]
    public async Task A_device_reports_to_its_own_path_and_GET_returns_the_reading()
    {
        await using LoopbackServer server = Start();
        await using CoapClient device = Device("dev-000001");
        await using CoapClient dashboard = Device("dash-001");

        CoapResponse post = await device.PostAsync(Uri(server, "dev-000001"), Reading("dev-000001", 21.5), CoapContentFormat.SenmlJson);
        CoapResponse get = await dashboard.GetAsync(Uri(server, "dev-000001"));

        post.Code.Should().Be(CoapCode.Changed);
        get.Code.Should().Be(CoapCode.Content);
        get.ContentFormat.Should().Be(CoapContentFormat.SenmlJson);
        get.Payload.ToArray().Should().Equal(Reading("dev-000001", 21.5));
    }

    [Fact]
    public async Task A_device_reporting_to_another_devices_path_gets_forbidden_and_changes_nothing()
    {
        await using LoopbackServer server = Start();
        await using CoapClient owner = Device("dev-000002");
        await using CoapClient other = Device("dev-000001");
        await using CoapClient dashboard = Device("dash-001");
        (await owner.PostAsync(Uri(server, "dev-000002"), Reading("dev-000002", 19.0), CoapContentFormat.SenmlJson)).Code.Should().Be(CoapCode.Changed);

        CoapResponse forged = await other.PostAsync(Uri(server, "dev-000002"), Reading("dev-000002", 99.9), CoapContentFormat.SenmlJson);
        CoapResponse byDashboard = await dashboard.PostAsync(Uri(server, "dev-000002"), Reading("dev-000002", 0), CoapContentFormat.SenmlJson);
        CoapResponse get = await owner.GetAsync(Uri(server, "dev-000002"));

        forged.Code.Should().Be(CoapCode.Forbidden);
        byDashboard.Code.Should().Be(CoapCode.Forbidden);
        get.Payload.ToArray().Should().Equal(Reading("dev-000002", 19.0), "the forged report was not stored");
    }

    [Fact]
    public async Task Without_a_DTLS_identity_a_report_is_forbidden()
    {
        await using LoopbackServer server = LoopbackServer.Start(s => FleetResource.Map(s, DtlsServerOptions.PskTable(Keys)));
        await using CoapClient client = new();

        CoapResponse post = await client.PostAsync(server.Uri("/fleet/dev-000001"), Reading("dev-000001", 20), CoapContentFormat.SenmlJson);

        post.Code.Should().Be(CoapCode.Forbidden, "plain coap authenticates nobody");
    }

    [Fact]
    public async Task An_identity_outside_the_fleet_is_not_found_and_a_reading_too_long_is_refused()
    {
        await using LoopbackServer server = Start();
        await using CoapClient device = Device("dev-000001");

        CoapResponse unknownGet = await device.GetAsync(Uri(server, "dev-999999"));
        CoapResponse unknownPost = await device.PostAsync(Uri(server, "dev-999999"), Reading("dev-999999", 20), CoapContentFormat.SenmlJson);
        CoapResponse tooLong = await device.PostAsync(Uri(server, "dev-000001"), new byte[FleetResource.MaxReadingLength + 1], CoapContentFormat.SenmlJson);
        CoapResponse before = await device.GetAsync(Uri(server, "dev-000001"));

        unknownGet.Code.Should().Be(CoapCode.NotFound);
        unknownPost.Code.Should().Be(CoapCode.NotFound);
        tooLong.Code.Should().Be(CoapCode.RequestEntityTooLarge);
        before.Code.Should().Be(CoapCode.Content);
        before.Payload.Length.Should().Be(0, "nothing was stored: the device has not reported yet");
    }

    [Fact]
    public async Task An_accepted_report_notifies_the_observers_of_that_device_and_no_other()
    {
        await using LoopbackServer server = Start();
        await using CoapClient dashboard = Device("dash-001");
        await using CoapClient first = Device("dev-000001");
        await using CoapClient second = Device("dev-000002");
        List<string> ofFirst = [], ofSecond = [];

        using CoapObservation observeFirst = dashboard.Observe(Uri(server, "dev-000001"), n => Add(ofFirst, n));
        using CoapObservation observeSecond = dashboard.Observe(Uri(server, "dev-000002"), n => Add(ofSecond, n));
        (await first.PostAsync(Uri(server, "dev-000001"), Reading("dev-000001", 21.0), CoapContentFormat.SenmlJson)).Code.Should().Be(CoapCode.Changed);
        Wait.Until(() => Count(ofFirst) == 2);
        (await second.PostAsync(Uri(server, "dev-000002"), Reading("dev-000002", 22.0), CoapContentFormat.SenmlJson)).Code.Should().Be(CoapCode.Changed);
        Wait.Until(() => Count(ofSecond) == 2);
        (await first.PostAsync(Uri(server, "dev-000002"), Reading("dev-000002", 66.0), CoapContentFormat.SenmlJson)).Code.Should().Be(CoapCode.Forbidden);
        (await first.PostAsync(Uri(server, "dev-000001"), Reading("dev-000001", 23.0), CoapContentFormat.SenmlJson)).Code.Should().Be(CoapCode.Changed);
        Wait.Until(() => Count(ofFirst) == 3);

        observeFirst.IsActive.Should().BeTrue();
        lock (ofFirst)
        {
            ofFirst.Should().Equal(string.Empty, Text("dev-000001", 21.0), Text("dev-000001", 23.0));
        }

        lock (ofSecond)
        {
            // Had a report notified the whole route, this observer would have had dev-000001's reports as (unchanged) notifications too.
            ofSecond.Should().Equal(string.Empty, Text("dev-000002", 22.0));
        }
    }

    private static LoopbackServer Start()
        => DtlsLoopback.StartServer(s => FleetResource.Map(s, DtlsServerOptions.PskTable(Keys)), out _, new DtlsServerOptions { PskKeys = DtlsServerOptions.PskTable(Keys) });

    private static CoapClient Device(string identity) => DtlsLoopback.Client(identity, Keys[identity]);

    private static Uri Uri(LoopbackServer server, string identity) => DtlsLoopback.Uri(server.EndPoint, "/fleet/" + identity);

    private static string Text(string identity, double value)
        => string.Create(System.Globalization.CultureInfo.InvariantCulture, $"[{{\"bn\":\"{identity}/\",\"n\":\"temperature\",\"u\":\"Cel\",\"v\":{value}}}]");

    private static byte[] Reading(string identity, double value) => Encoding.UTF8.GetBytes(Text(identity, value));

    private static void Add(List<string> seen, CoapResponse notification)
    {
        lock (seen)
        {
            seen.Add(notification.GetPayloadString());
        }
    }

    private static int Count(List<string> seen)
    {
        lock (seen)
        {
            return seen.Count;
        }
    }
}
