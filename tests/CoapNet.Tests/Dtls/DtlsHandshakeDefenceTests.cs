using System.Net;
using CoapNet.Channels;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Dtls.Sessions;
using CoapNet.Messages;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Interop;
using CoapNet.Tests.Server;
using CoapNet.Tests.Tcp;
using Microsoft.Extensions.Logging;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// The DTLS server's handshake places under attack (issue 34), over real loopback sockets with the server's timers on
/// a manual clock: a handshake silent after the cookie exchange ends at the stall timeout, one that keeps answering
/// its flights does not, a stalled one gives its place to a new client, a source has a bound of its own, and a full
/// server evicts an idle session or refuses with an alert.
/// </summary>
public sealed class DtlsHandshakeDefenceTests
{
    private const byte InternalError = 80;
    private static readonly TimeSpan Stall = TimeSpan.FromSeconds(5);

    [Fact]
    public async Task AHandshakeSilentAfterTheCookieExchangeEndsAtTheStallTimeoutAndANewClientGetsItsPlace()
    {
        (LoopbackServer started, ManualTimeProvider time, ListLoggerFactory log) = Start(o => o.MaxConcurrentHandshakes = 1);
        await using LoopbackServer server = started;
        using DtlsAttacker silent = await DtlsAttacker.CompleteCookieExchangeAsync(server.EndPoint);
        await silent.ReceiveServerHelloAsync();
        await using CoapClient client = PatientClient();
        Task<CoapResponse> get = client.GetAsync(DtlsLoopback.Uri(server.EndPoint, "/x"));

        // The only place is held by a handshake that has not stalled yet: the client's verified ClientHello is dropped,
        // and its retransmissions go on (RFC 6347 section 4.2.4).
        Wait.Until(() => log.Warnings.Any(l => l.Contains("Refused a DTLS handshake", StringComparison.Ordinal) && l.Contains("MaxConcurrentHandshakes", StringComparison.Ordinal)), "the client was refused while the place was held");
        time.Advance(Stall);

        (await silent.ReceiveAlertAsync()).Should().Be(InternalError, "the stalled handshake was ended, and BouncyCastle says so with internal_error");
        (await get.WaitAsync(Wait.DefaultBound)).GetPayloadString().Should().Be("ok", "the client's next retransmission took the freed place");
        log.Warnings.Should().Contain(l => l.Contains("stalled", StringComparison.Ordinal) && l.Contains("HandshakeStallTimeout", StringComparison.Ordinal));
    }

    [Fact]
    public async Task AClientOnASlowLinkThatAnswersEachFlightCompletesLongAfterTheStallTimeout()
    {
        ManualTimeProvider time = new();
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => CoapResponse.Content("ok")), out _, Options(time));
        HeldFlights held = new();
        await using UdpRelay relay = new(server.EndPoint, held.Rule);
        await using DtlsClientTransport client = PatientTransport();
        client.Start(new IgnoringReceiver());
        Task<CoapSecurityContext> connecting = client.ConnectAsync(relay.EndPoint);

        // BouncyCastle's client sends its second flight (key exchange, ChangeCipherSpec, Finished) one record a datagram;
        // each arrives 4 s after the one before: never 5 s without progress, 12 s in all.
        for (int i = 0; i < 3; i++)
        {
            byte[] next = await held.NextAsync();
            time.Advance(TimeSpan.FromSeconds(4));
            await relay.SendToServerAsync(next);
            await DtlsAttacker.BarrierAsync(server.EndPoint);
        }

        (await connecting.WaitAsync(Wait.DefaultBound)).Should().NotBeNull("the server kept the handshake while each flight came within the stall timeout");
    }

    [Fact]
    public async Task AClientSilentForTheStallTimeoutAfterTheCookieExchangeIsToldWithAnAlert()
    {
        ManualTimeProvider time = new();
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => CoapResponse.Content("ok")), out _, Options(time));
        HeldFlights held = new();
        await using UdpRelay relay = new(server.EndPoint, held.Rule);
        await using DtlsClientTransport client = PatientTransport();
        client.Start(new IgnoringReceiver());
        Task<CoapSecurityContext> connecting = client.ConnectAsync(relay.EndPoint);
        byte[] keyExchange = await held.NextAsync();

        time.Advance(Stall);
        await relay.SendToServerAsync(keyExchange);

        Func<Task> connect = () => connecting.WaitAsync(Wait.DefaultBound);
        (await connect.Should().ThrowAsync<System.Security.Authentication.AuthenticationException>()).Which.Message.Should().Contain("internal_error");
    }

    [Fact]
    public async Task WhenEveryPlaceIsTakenANewClientTakesThePlaceOfTheHandshakeStalledLongest()
    {
        (LoopbackServer started, ManualTimeProvider time, ListLoggerFactory log) = Start(o =>
        {
            o.MaxConcurrentHandshakes = 2;
            o.HandshakeStallTimeout = TimeSpan.FromMinutes(1);
        });
        await using LoopbackServer server = started;
        using DtlsAttacker older = await DtlsAttacker.CompleteCookieExchangeAsync(server.EndPoint, IPAddress.Parse("127.0.0.2"));
        await older.ReceiveServerHelloAsync();
        time.Advance(TimeSpan.FromSeconds(1));
        using DtlsAttacker newer = await DtlsAttacker.CompleteCookieExchangeAsync(server.EndPoint, IPAddress.Parse("127.0.0.3"));
        await newer.ReceiveServerHelloAsync();
        time.Advance(TimeSpan.FromSeconds(1.5));
        await using CoapClient client = PatientClient();

        CoapResponse response = await client.GetAsync(DtlsLoopback.Uri(server.EndPoint, "/x")).WaitAsync(Wait.DefaultBound);

        response.GetPayloadString().Should().Be("ok");
        (await older.ReceiveAlertAsync()).Should().Be(InternalError, "the handshake silent longest gave its place up");
        log.Warnings.Where(l => l.Contains("evicted", StringComparison.Ordinal)).Should().ContainSingle().Which.Should().Contain("127.0.0.2");
    }

    [Fact]
    public async Task AHandshakeIsNotTakenFromAPeerThatMayStillBeAnsweringAndTheClientsRetransmissionGetsInOnceItIsLate()
    {
        (LoopbackServer started, ManualTimeProvider time, ListLoggerFactory log) = Start(o =>
        {
            o.MaxConcurrentHandshakes = 1;
            o.HandshakeStallTimeout = TimeSpan.FromMinutes(1);
        });
        await using LoopbackServer server = started;
        using DtlsAttacker first = await DtlsAttacker.CompleteCookieExchangeAsync(server.EndPoint, IPAddress.Parse("127.0.0.2"));
        await first.ReceiveServerHelloAsync();

        // Within RFC 6347's initial retransmission timer the first handshake's peer may yet answer: the newcomer's
        // ClientHello (record 1) is dropped. A second later the first is late, and the newcomer's retransmission (record 2) takes its place.
        using DtlsAttacker second = await DtlsAttacker.CompleteCookieExchangeAsync(server.EndPoint, IPAddress.Parse("127.0.0.3"));
        Wait.Until(() => log.Warnings.Any(l => l.Contains("127.0.0.3", StringComparison.Ordinal) && l.Contains("none has stalled", StringComparison.Ordinal)), "the newcomer was refused");
        time.Advance(TimeSpan.FromSeconds(1));
        await second.ResendClientHelloAsync(recordSequence: 2);

        DtlsAttacker.Sequence(await second.ReceiveServerHelloAsync()).Should().Be(2, "RFC 6347 section 4.2.1: the ServerHello answers the ClientHello it echoes the record sequence number of");
        (await first.ReceiveAlertAsync()).Should().Be(InternalError);
    }

    [Fact]
    public async Task ASourceAtItsBoundCannotTakeThePlacesOfOthers()
    {
        (LoopbackServer started, ManualTimeProvider time, ListLoggerFactory log) = Start(o => o.MaxConcurrentHandshakesPerAddress = 1);
        await using LoopbackServer server = started;
        using DtlsAttacker first = await DtlsAttacker.CompleteCookieExchangeAsync(server.EndPoint, IPAddress.Parse("127.0.0.2"));
        await first.ReceiveServerHelloAsync();

        using DtlsAttacker sameSource = await DtlsAttacker.CompleteCookieExchangeAsync(server.EndPoint, IPAddress.Parse("127.0.0.2"));
        Wait.Until(() => log.Warnings.Any(l => l.Contains("127.0.0.2", StringComparison.Ordinal) && l.Contains("MaxConcurrentHandshakesPerAddress", StringComparison.Ordinal)), "the second handshake from 127.0.0.2 was refused");
        using DtlsAttacker otherSource = await DtlsAttacker.CompleteCookieExchangeAsync(server.EndPoint, IPAddress.Parse("127.0.0.3"));
        await otherSource.ReceiveServerHelloAsync();
        await using CoapClient client = PatientClient();

        (await client.GetAsync(DtlsLoopback.Uri(server.EndPoint, "/x")).WaitAsync(Wait.DefaultBound)).GetPayloadString().Should().Be("ok", "127.0.0.1 has a bound of its own");
    }

    [Fact]
    public async Task AtMaxSessionsTheLeastRecentlyActiveSessionIdlePastTheThresholdIsEvictedForANewClient()
    {
        ManualTimeProvider time = new();
        DtlsServerOptions options = Options(time);
        options.MaxSessions = 2;
        options.SessionEvictionThreshold = TimeSpan.FromMinutes(10);
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => CoapResponse.Content("ok")), out DtlsServerTransport transport, options);
        Uri uri = DtlsLoopback.Uri(server.EndPoint, "/x");
        (CoapClient Client, DtlsClientTransport Transport) oldest = Connected();
        (CoapClient Client, DtlsClientTransport Transport) other = Connected();
        await using CoapClient oldestClient = oldest.Client;
        await using CoapClient otherClient = other.Client;
        await oldestClient.GetAsync(uri);
        time.Advance(TimeSpan.FromMinutes(1));
        await otherClient.GetAsync(uri);
        time.Advance(TimeSpan.FromMinutes(10));
        await using CoapClient newcomer = PatientClient();

        (await newcomer.GetAsync(uri).WaitAsync(Wait.DefaultBound)).Code.Should().Be(CoapCode.Content);

        // The evicted session was closed with close_notify, which its client heard; the other one is still there.
        await Wait.UntilAsync(() => oldest.Transport.SessionCount == 0);
        other.Transport.SessionCount.Should().Be(1);
        transport.SessionCount.Should().Be(2);
        (await otherClient.GetAsync(uri)).Code.Should().Be(CoapCode.Content);
    }

    [Fact]
    public async Task ARecordThatDoesNotAuthenticateBeforeTheFirstRequestLeavesTheSessionAlone()
    {
        List<CoapSecurityContext> sessions = [];
        await using LoopbackServer server = DtlsLoopback.StartServer(s => DtlsLoopback.MapSessionRecorder(s, "/x", sessions), out _);
        RawUdpTransport network = new();
        await using DtlsClientTransport client = PatientTransport(network);
        AnswerQueue answers = new();
        client.Start(answers);
        IPEndPoint target = new(IPAddress.Loopback, server.EndPoint.Port);
        CoapSecurityContext session = await client.ConnectAsync(target);

        // Established, and still on BouncyCastle's record layer (no application record yet): a forged record of epoch 1
        // from the client's own address fails authentication there, and must not end the session (RFC 6347 section 4.1.2.7).
        Random random = new(3);
        network.SendRaw(DtlsAttacker.Forged(random, 22, epoch: 1), target);
        network.SendRaw(DtlsAttacker.Forged(random, 23, epoch: 1), target);
        await DtlsAttacker.BarrierAsync(target);

        client.Send(Get(1), target, session);
        (await answers.NextAsync()).Should().NotBeEmpty();
        sessions.Should().ContainSingle("the request came in the session the forged records did not end");
    }

    [Fact]
    public async Task AFinishedThatAuthenticatesButDoesNotVerifyIsAnsweredWithDecryptError()
    {
        // A handshake altered on the way without the keys changing: the PSK identity hint is not part of the key
        // derivation without the extended master secret (RFC 7627), so the record of the client's Finished
        // authenticates while its verify_data, over the altered transcript, does not (RFC 5246 section 7.4.9).
        DtlsServerOptions options = DtlsLoopback.ServerOptions();
        options.PskIdentityHint = "hint-aaaa";
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => CoapResponse.Content("ok")), out _, options);
        await using UdpRelay relay = new(server.EndPoint, (toServer, datagram) => [toServer ? datagram : Replace(datagram, "hint-aaaa"u8, "hint-bbbb"u8)]);

        Org.BouncyCastle.Tls.TlsFatalAlertReceived refused = await Assert.ThrowsAsync<Org.BouncyCastle.Tls.TlsFatalAlertReceived>(() => BouncyCastlePskClient.ConnectAsync(relay.EndPoint, DtlsLoopback.Identity, DtlsLoopback.Key, extendedMasterSecret: false));

        refused.AlertDescription.Should().Be(Org.BouncyCastle.Tls.AlertDescription.decrypt_error);
    }

    [Fact]
    public void AnIPv6SourceIsCountedByItsSlash64AndAnIPv4SourceByItsAddressAlsoWhenMapped()
    {
        CoapNet.Transports.AddressGroup.Of(IPAddress.Parse("2001:db8:1:2::1")).Should().Be(CoapNet.Transports.AddressGroup.Of(IPAddress.Parse("2001:db8:1:2:abcd:ef01:2345:6789")));
        CoapNet.Transports.AddressGroup.Of(IPAddress.Parse("2001:db8:1:2::1")).Should().NotBe(CoapNet.Transports.AddressGroup.Of(IPAddress.Parse("2001:db8:1:3::1")));
        CoapNet.Transports.AddressGroup.Of(IPAddress.Parse("::ffff:192.0.2.7")).Should().Be(CoapNet.Transports.AddressGroup.Of(IPAddress.Parse("192.0.2.7")), "a dual-stack socket reports IPv4 peers mapped into IPv6");
        CoapNet.Transports.AddressGroup.Of(IPAddress.Parse("::ffff:192.0.2.7")).Should().NotBe(CoapNet.Transports.AddressGroup.Of(IPAddress.Parse("::ffff:192.0.2.8")), "mapped IPv4 addresses share one /64, and must not share one place");
        CoapNet.Transports.AddressGroup.Of(IPAddress.Parse("192.0.2.7")).ToString().Should().Be("192.0.2.7");
        CoapNet.Transports.AddressGroup.Of(IPAddress.Parse("2001:db8:1:2::1")).ToString().Should().Be("2001:db8:1:2::/64");
    }

    /// <summary>A server on a manual clock that answers GET /x with "ok" and keeps its log, its options adjusted by <paramref name="configure"/>.</summary>
    private static (LoopbackServer Server, ManualTimeProvider Time, ListLoggerFactory Log) Start(Action<DtlsServerOptions> configure)
    {
        ManualTimeProvider time = new();
        ListLoggerFactory log = new(LogLevel.Information);
        DtlsServerOptions options = Options(time, log);
        configure(options);
        return (DtlsLoopback.StartServer(s => s.MapGet("/x", _ => CoapResponse.Content("ok")), out _, options), time, log);
    }

    private static DtlsServerOptions Options(ManualTimeProvider time, ILoggerFactory? log = null)
    {
        DtlsServerOptions options = DtlsLoopback.ServerOptions(time);
        options.HandshakeStallTimeout = Stall;
        options.LoggerFactory = log;

        // BouncyCastle's own bound on a handshake runs on the real clock: far past the test's liveness bound, so only
        // what the server does on the manual clock ends a handshake here.
        options.HandshakeTimeout = TimeSpan.FromMinutes(10);
        return options;
    }

    /// <summary>A client whose own handshake timeout is far past the test's liveness bound: only the server's answers end its handshakes.</summary>
    private static CoapClient PatientClient() => DtlsLoopback.Client(options: new DtlsClientOptions { HandshakeTimeout = TimeSpan.FromMinutes(10) });

    private static DtlsClientTransport PatientTransport(CoapNet.Transports.IDatagramTransport? network = null)
    {
        DtlsClientOptions options = new() { PskIdentity = DtlsLoopback.Identity, PskKey = DtlsLoopback.Key, HandshakeTimeout = TimeSpan.FromMinutes(10) };
        return new DtlsClientTransport(network ?? new CoapNet.Transports.UdpTransport(new IPEndPoint(IPAddress.Loopback, 0)), options);
    }

    private static (CoapClient Client, DtlsClientTransport Transport) Connected()
    {
        DtlsClientTransport transport = new(new CoapNet.Transports.UdpTransport(new IPEndPoint(IPAddress.Loopback, 0)), new DtlsClientOptions { PskIdentity = DtlsLoopback.Identity, PskKey = DtlsLoopback.Key });
        return (new CoapClient(transport, new CoapClientOptions()), transport);
    }

    private static byte[] Get(ushort messageId)
    {
        CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get, MessageId = messageId, Token = new byte[] { (byte)messageId } };
        request.UriPath = "/x";
        return CoapNet.Serialization.CoapMessageSerializer.Udp.Serialize(request);
    }

    private static byte[] Replace(byte[] datagram, ReadOnlySpan<byte> find, ReadOnlySpan<byte> with)
    {
        int at = datagram.AsSpan().IndexOf(find);
        if (at >= 0)
        {
            with.CopyTo(datagram.AsSpan(at));
        }

        return datagram;
    }

    /// <summary>Holds back the client's datagrams after its ClientHellos (its second flight), for the test to release one at a time.</summary>
    private sealed class HeldFlights
    {
        private readonly System.Threading.Channels.Channel<byte[]> _held = System.Threading.Channels.Channel.CreateUnbounded<byte[]>();

        public IReadOnlyList<byte[]> Rule(bool toServer, byte[] datagram)
        {
            if (toServer && !DtlsRecords.IsClientHello(datagram))
            {
                _held.Writer.TryWrite(datagram);
                return [];
            }

            return [datagram];
        }

        public async Task<byte[]> NextAsync()
        {
            using CancellationTokenSource bound = new(Wait.DefaultBound);
            return await _held.Reader.ReadAsync(bound.Token);
        }
    }

    private sealed class IgnoringReceiver : CoapNet.Transports.IDatagramReceiver
    {
        public void OnDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote)
        {
        }
    }

    private sealed class AnswerQueue : CoapNet.Transports.IDatagramReceiver
    {
        private readonly System.Threading.Channels.Channel<byte[]> _answers = System.Threading.Channels.Channel.CreateUnbounded<byte[]>();

        public void OnDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote) => _answers.Writer.TryWrite(datagram.ToArray());

        public async Task<byte[]> NextAsync()
        {
            using CancellationTokenSource bound = new(Wait.DefaultBound);
            return await _answers.Reader.ReadAsync(bound.Token);
        }
    }
}
