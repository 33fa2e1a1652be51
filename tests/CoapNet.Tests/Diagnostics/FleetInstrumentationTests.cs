using System.Diagnostics.Metrics;
using System.Net;
using System.Net.Sockets;
using CoapNet.Client;
using CoapNet.Diagnostics;
using CoapNet.Dtls;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Server;
using CoapNet.Tests.Dtls;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Diagnostics;

/// <summary>
/// What a fleet's operator watches (issue 41): the DTLS sessions held, how they end, handshakes refused for their cookie
/// or failed for an unknown identity, and notifications with their lag, through a <see cref="MeterListener"/> while real
/// handshakes run over loopback or a server runs in virtual time.
/// </summary>
[Collection(ProcessWideCollection.Name)]
public sealed class FleetInstrumentationTests : IDisposable
{
    private readonly CoapMeterRecorder _meters = new();

    public void Dispose() => _meters.Dispose();

    [Fact]
    public async Task TheSessionGaugeFollowsTheServersSessionsAndEachEndIsCountedWithItsReason()
    {
        ManualTimeProvider time = new();
        DtlsServerOptions options = DtlsLoopback.ServerOptions(time);
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => CoapResponse.Content("ok")), out _, options);
        Uri uri = DtlsLoopback.Uri(server.EndPoint, "/x");
        await using CoapClient first = DtlsLoopback.Client();
        await using CoapClient second = DtlsLoopback.Client();
        CoapClient leaving = DtlsLoopback.Client();
        await first.GetAsync(uri);
        await second.GetAsync(uri);
        await leaving.GetAsync(uri);

        SessionsOf(server.EndPoint.Port).Should().Be(3);
        await leaving.DisposeAsync();
        Wait.Until(() => Closed("peer_closed") == 1, "the client's close_notify ended its session");
        SessionsOf(server.EndPoint.Port).Should().Be(2);
        time.Advance(options.SessionIdleTimeout + TimeSpan.FromMinutes(1));
        Wait.Until(() => Closed("idle_timeout") == 2, "both idle sessions aged out");

        SessionsOf(server.EndPoint.Port).Should().Be(0);
        Measured(CoapInstrumentation.SessionsClosed).Should().OnlyContain(t => Equals(t["url.scheme"], "coaps"));
    }

    [Fact]
    public async Task AClientHelloWithAForgedCookieAndAnUnknownIdentityAreCountedAsSuch()
    {
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => CoapResponse.Content("ok")), out _);
        using UdpClient forger = new(new IPEndPoint(IPAddress.Loopback, 0));
        byte[] hello = await DtlsAttacker.ClientHelloAsync();
        await forger.SendAsync(DtlsAttacker.WithCookie(hello, new byte[32], recordSequence: 1), server.EndPoint);
        byte[] answer = await DtlsAttacker.ReceiveAsync(forger);
        await using CoapClient stranger = DtlsLoopback.Client(identity: "stranger");
        await FluentActions.Awaiting(() => stranger.GetAsync(DtlsLoopback.Uri(server.EndPoint, "/x"))).Should().ThrowAsync<System.Security.Authentication.AuthenticationException>();
        await using CoapClient known = DtlsLoopback.Client();
        await known.GetAsync(DtlsLoopback.Uri(server.EndPoint, "/x"));

        answer[13].Should().Be(3, "a cookie that does not verify is answered with a HelloVerifyRequest (RFC 6347 section 4.2.1)");
        Wait.Until(() => Handshakes("failed", "unknown_psk_identity") >= 1, "the unknown identity was counted");
        Handshakes("refused", "cookie").Should().Be(1, "only the forged cookie: a first ClientHello carries none, and every client sends one");
    }

    [Fact]
    public void EachNotificationIsCountedWithTheTimeFromTheChangeToItsSend()
    {
        int value = 0;
        CoapRouteBuilder? route = null;
        using VirtualTimeServer server = new(s => route = s.MapGet("/v", _ => CoapResponse.Content(value.ToString(System.Globalization.CultureInfo.InvariantCulture))).Observable());
        CoapMessage registration = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get, MessageId = 1, Token = new byte[] { 7 }, Observe = 0 };
        registration.UriPath = "/v";
        server.Send(registration);
        server.Settle();

        value = 1;
        route!.NotifyObservers();
        server.Time.Advance(TimeSpan.FromMilliseconds(250));
        server.Settle();

        server.Peer.Received.Should().Contain(r => r.Parsed.Observe != null && r.Parsed.GetPayloadString() == "1");
        Measured(CoapInstrumentation.NotificationsSent).Should().ContainSingle().Which["url.scheme"].Should().Be("coap");
        _meters.Of(CoapInstrumentation.NotificationLag).Select(m => m.Value).Should().Equal([0.25], "from NotifyObservers to the send, on the server's clock");
    }

    private List<Dictionary<string, object?>> Measured(string instrument) => _meters.Tags(instrument);

    private int Closed(string reason) => Measured(CoapInstrumentation.SessionsClosed).Count(t => Equals(t["coap.session.close_reason"], reason));

    private int Handshakes(string outcome, string errorType)
        => Measured(CoapInstrumentation.DtlsHandshakes).Count(t => Equals(t["coap.handshake.outcome"], outcome) && Equals(t.GetValueOrDefault("error.type"), errorType));

    /// <summary>Collects the gauge now and reads this server's measurement.</summary>
    private double SessionsOf(int port)
    {
        return _meters.Collect(CoapInstrumentation.Sessions).Single(m => Equals(m.Tags["server.port"], port)).Value;
    }
}
