using System.Net;
using System.Net.Sockets;
using System.Security.Authentication;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Messages;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Interop;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// What our DTLS client says when its handshake fails: the server's alert at once, by name and with its likely cause,
/// and a handshake that gets no answer as that, over real loopback sockets.
/// </summary>
public sealed class DtlsHandshakeFailureTests
{
    /// <summary>Far past the test's bound: a handshake must end on what the server sent, not on the clock.</summary>
    private static readonly TimeSpan NoClock = TimeSpan.FromMinutes(10);

    [Theory]
    [InlineData(20, "bad_record_mac (wrong key?)")]
    [InlineData(51, "decrypt_error (wrong key?)")]
    public async Task AServersAlertOnOurFinishedFailsTheHandshakeAtOnceAsAWrongKey(byte alert, string said)
    {
        int calls = 0;
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => { Interlocked.Increment(ref calls); return CoapResponse.Content("no"); }), out _);
        FinishedRefusal refusal = new(alert);
        await using UdpRelay relay = new(server.EndPoint, refusal.Rule);
        await using CoapClient client = DtlsLoopback.Client(key: "wrong-key"u8.ToArray(), options: new DtlsClientOptions { HandshakeTimeout = NoClock });

        Func<Task> get = () => client.GetAsync(DtlsLoopback.Uri(relay.EndPoint, "/x")).WaitAsync(Wait.DefaultBound);

        AuthenticationException refused = (await get.Should().ThrowAsync<AuthenticationException>()).Which;
        refused.Message.Should().Be($"The server at {relay.EndPoint} refused the DTLS handshake: {said}.");
        refusal.AlertsSent.Should().BeGreaterThan(0);
        calls.Should().Be(0);
    }

    [Fact]
    public async Task AnUnknownIdentityIsRefusedByNameAtOnce()
    {
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => CoapResponse.Content("no")), out _);
        await using CoapClient client = DtlsLoopback.Client(identity: "stranger", options: new DtlsClientOptions { HandshakeTimeout = NoClock });

        Func<Task> get = () => client.GetAsync(DtlsLoopback.Uri(server.EndPoint, "/x")).WaitAsync(Wait.DefaultBound);

        (await get.Should().ThrowAsync<AuthenticationException>()).Which.Message
            .Should().Be($"The server at 127.0.0.1:{server.EndPoint.Port} refused the DTLS handshake: unknown_psk_identity (unknown identity?).");
    }

    [Fact]
    public async Task AServerThatNeverAnswersIsAHandshakeTimeoutThatSaysSo()
    {
        // A socket that is bound (so no ICMP port unreachable) and never reads.
        using UdpClient silent = new(new IPEndPoint(IPAddress.Loopback, 0));
        IPEndPoint remote = (IPEndPoint)silent.Client.LocalEndPoint!;
        await using DtlsClientTransport transport = new(new CoapNet.Transports.UdpTransport(new IPEndPoint(IPAddress.Loopback, 0)), new DtlsClientOptions
        {
            PskIdentity = DtlsLoopback.Identity,
            PskKey = DtlsLoopback.Key,
            HandshakeTimeout = TimeSpan.FromSeconds(1),
        });

        Func<Task> connect = () => transport.ConnectAsync(remote).WaitAsync(Wait.DefaultBound);

        (await connect.Should().ThrowAsync<TimeoutException>()).Which.Message
            .Should().Be($"The DTLS handshake with {remote} got no answer within 1 s: nothing answers DTLS at that address and port.");
    }

    [Fact]
    public async Task AHandshakeBeforeTheTransportIsStartedIsTheSessionTheFirstRequestGoesIn()
    {
        List<CoapNet.Channels.CoapSecurityContext> sessions = [];
        await using LoopbackServer server = DtlsLoopback.StartServer(s => DtlsLoopback.MapSessionRecorder(s, "/n", sessions), out DtlsServerTransport serverTransport);
        DtlsClientTransport transport = new(new CoapNet.Transports.UdpTransport(new IPEndPoint(IPAddress.Loopback, 0)), new DtlsClientOptions { PskIdentity = DtlsLoopback.Identity, PskKey = DtlsLoopback.Key });

        CoapNet.Channels.CoapSecurityContext first = await transport.ConnectAsync(new IPEndPoint(IPAddress.Loopback, server.EndPoint.Port)).WaitAsync(Wait.DefaultBound);
        await using CoapClient client = new(transport);
        CoapResponse response = await client.GetAsync(DtlsLoopback.Uri(server.EndPoint, "/n"));

        response.Code.Should().Be(CoapCode.Content);
        (await client.ResolvePeerAsync(DtlsLoopback.Uri(server.EndPoint, "/n"))).SecurityContext.Should().BeSameAs(first, "the client resolves a coaps URI to the peer in its session");
        first.Identity.Should().NotBeNull();
        serverTransport.SessionCount.Should().Be(1, "the request went in the session the early handshake made");
        (await transport.ConnectAsync(new IPEndPoint(IPAddress.Loopback, server.EndPoint.Port))).Should().BeSameAs(first);
    }
}
