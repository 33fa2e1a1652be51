using System.Net;
using CoapNet.Channels;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.RateLimiting;
using CoapNet.Server;
using CoapNet.Tests.Dtls;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.RateLimiting;

/// <summary>
/// The request rate per device (issue 41): a token bucket per identity, or per source for unsecured peers, answered with
/// 4.29 and Max-Age past it (RFC 8516 section 3) and never reaching the handler; in virtual time, and over DTLS on
/// loopback with several sessions of one identity.
/// </summary>
public sealed class IdentityRateLimitTests
{
    [Fact]
    public void UnsecuredPeersShareTheBucketOfTheirAddressAndAreAnsweredTooManyRequestsWithMaxAgePastIt()
    {
        int handled = 0;
        using VirtualTimeServer server = new(
            s => s.MapGet("/r", _ => { handled++; return CoapResponse.Content("ok"); }),
            configure: o => o.Endpoint.UseIdentityRateLimit(new CoapIdentityRateLimitOptions { RequestsPerSecond = 0.5, Burst = 2 }));
        using TestPeer a = new(server.Network, "10.0.0.1:5001");
        using TestPeer b = new(server.Network, "10.0.0.1:5002");
        using TestPeer c = new(server.Network, "10.0.0.3");

        CoapMessage first = Get(server, a, 1)!;
        CoapMessage second = Get(server, a, 2)!;
        CoapMessage third = Get(server, b, 3)!;
        Get(server, b, 4, CoapMessageType.NonConfirmable).Should().BeNull("a NON request past the rate is dropped, as shed load is");
        CoapMessage other = Get(server, c, 5)!;
        server.Time.Advance(TimeSpan.FromSeconds(2));
        CoapMessage later = Get(server, b, 6)!;

        first.Code.Should().Be(CoapCode.Content);
        second.Code.Should().Be(CoapCode.Content);
        third.Code.Should().Be(CoapCode.TooManyRequests, "10.0.0.1 spent its burst of 2, whichever port it used");
        third.MaxAge.Should().Be(2, "RFC 8516 section 3: the seconds until a request may go, at 0.5 a second");
        other.Code.Should().Be(CoapCode.Content, "another address has a bucket of its own");
        later.Code.Should().Be(CoapCode.Content, "two seconds later a token has come back");
        handled.Should().Be(4, "a refused request reaches no handler");
    }

    [Fact]
    public async Task EverySessionOfOneDeviceDrawsFromItsIdentitysBucketOverDtls()
    {
        DtlsServerOptions options = new() { PskKeys = DtlsServerOptions.PskTable(new Dictionary<string, byte[]> { ["device-1"] = [1], ["device-2"] = [2] }) };
        CoapServerOptions serverOptions = new();

        // So slow a rate that no token comes back while the test runs: what is asserted does not depend on time.
        serverOptions.Endpoint.UseIdentityRateLimit(new CoapIdentityRateLimitOptions { RequestsPerSecond = 0.001, Burst = 2 });
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/r", _ => CoapResponse.Content("ok")), out _, options, server: serverOptions);
        Uri uri = DtlsLoopback.Uri(server.EndPoint, "/r");
        await using CoapClient first = DtlsLoopback.Client("device-1", [1]);
        await using CoapClient reconnected = DtlsLoopback.Client("device-1", [1]);
        await using CoapClient other = DtlsLoopback.Client("device-2", [2]);

        (await first.GetAsync(uri)).Code.Should().Be(CoapCode.Content);
        (await first.GetAsync(uri)).Code.Should().Be(CoapCode.Content);
        CoapResponse limited = await reconnected.GetAsync(uri);

        limited.Code.Should().Be(CoapCode.TooManyRequests, "a new session of device-1 is still device-1");
        limited.Message.MaxAge.Should().Be(1000);
        (await other.GetAsync(uri)).Code.Should().Be(CoapCode.Content);
    }

    [Fact]
    public void SettingsOutOfRangeAreRefusedByName()
    {
        CoapEndpointOptions endpoint = new();

        FluentActions.Invoking(() => endpoint.UseIdentityRateLimit(new CoapIdentityRateLimitOptions { RequestsPerSecond = 0 })).Should().Throw<ArgumentException>().WithParameterName("RequestsPerSecond");
        FluentActions.Invoking(() => endpoint.UseIdentityRateLimit(new CoapIdentityRateLimitOptions { Burst = 0 })).Should().Throw<ArgumentException>().WithParameterName("Burst");
        FluentActions.Invoking(() => endpoint.UseIdentityRateLimit(new CoapIdentityRateLimitOptions { MaxIdentities = 0 })).Should().Throw<ArgumentException>().WithParameterName("MaxIdentities");
    }

    [Fact]
    public void TheTableForgetsADeviceOnceItsBucketHasRefilledAndRefusesNewcomersAtItsBoundUntilThen()
    {
        ManualTimeProvider time = new();
        CoapTokenBuckets<PeerIdentityKey> buckets = new(perSecond: 1, burst: 2, maxKeys: 2, time);
        PeerIdentityKey a = Key("10.0.0.1");
        PeerIdentityKey b = Key("10.0.0.2");
        PeerIdentityKey c = Key("10.0.0.3");

        buckets.TryTake(a).Should().Be(0);
        buckets.TryTake(b).Should().Be(0);
        buckets.TryTake(c).Should().BeGreaterThan(0, "the table is full of devices whose buckets have not refilled");
        time.Advance(TimeSpan.FromSeconds(1));

        buckets.TryTake(c).Should().Be(0, "a and b refilled and were forgotten, which gives nothing away");
        buckets.Count.Should().Be(1);
    }

    private static PeerIdentityKey Key(string address) => PeerIdentityKey.Of(CoapPeer.Udp(new IPEndPoint(IPAddress.Parse(address), 5683)));

    private static CoapMessage? Get(VirtualTimeServer server, TestPeer peer, ushort messageId, CoapMessageType type = CoapMessageType.Confirmable)
    {
        peer.ClearReceived();
        CoapMessage request = new() { Type = type, Code = CoapCode.Get, MessageId = messageId, Token = new byte[] { (byte)messageId } };
        request.UriPath = "/r";
        peer.Send(request, VirtualTimeServer.Address);
        server.Settle();
        return peer.Received.Count == 0 ? null : peer.Received[^1].Parsed;
    }
}
