using System.Net;
using System.Net.Sockets;
using CoapNet.Channels;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Messages;
using CoapNet.Serialization;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Interop;
using CoapNet.Tests.Server;
using CoapNet.Transports;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// The DTLS server's defences and bounds over real loopback sockets: cookies (RFC 6347 section 4.2.1), a flood of
/// spoofed ClientHellos, records that do not authenticate, the session bound, and ageing on a manual clock.
/// </summary>
public sealed class DtlsSessionTests
{
    private const byte Handshake = 22;
    private const byte HelloVerifyRequest = 3;

    [Fact]
    public async Task AClientHelloWithoutACookieIsAnsweredWithAHelloVerifyRequestAndNothingElse()
    {
        byte[] clientHello = await DtlsAttacker.ClientHelloAsync();
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => CoapResponse.Content("x")), out _);
        using UdpClient raw = new(new IPEndPoint(IPAddress.Loopback, 0));

        await raw.SendAsync(clientHello, server.EndPoint);
        byte[] answer = (await ReceiveAsync(raw)).Buffer;

        answer[0].Should().Be(Handshake);
        answer[13].Should().Be(HelloVerifyRequest, "RFC 6347 section 4.2.1: the server asks for the cookie before it keeps anything");
        (await TryReceiveAsync(raw, TimeSpan.FromMilliseconds(300))).Should().BeNull("a ClientHello without a cookie starts no handshake");
    }

    [Fact]
    public async Task RecordsThatDoNotAuthenticateAreDroppedAndTheSessionGoesOn()
    {
        List<CoapSecurityContext> sessions = [];
        await using LoopbackServer server = DtlsLoopback.StartServer(
            s => DtlsLoopback.MapSessionRecorder(s, "/x", sessions),
            out _);
        RawUdpTransport network = new();
        await using CoapClient client = new(new DtlsClientTransport(network, new DtlsClientOptions { PskIdentity = DtlsLoopback.Identity, PskKey = DtlsLoopback.Key }));
        Uri uri = DtlsLoopback.Uri(server.EndPoint, "/x");
        (await client.GetAsync(uri)).Code.Should().Be(CoapCode.Content);

        // From the session's own address: noise, truncated headers, an application record with a forged MAC, a record
        // of an epoch that does not exist, a plaintext CoAP request, an alert record that does not decrypt.
        Random random = new(1);
        List<byte[]> junk = [[], [0x17], [0x17, 0xFE, 0xFD, 0x00, 0x01], [0x40, 0x01, 0x12, 0x34, 0xB1, 0x78]];
        for (int i = 0; i < 50; i++)
        {
            byte[] noise = new byte[random.Next(1, 200)];
            random.NextBytes(noise);
            junk.Add(noise);
        }

        junk.Add(DtlsAttacker.Forged(random, 0x17, epoch: 1));
        junk.Add(DtlsAttacker.Forged(random, 0x17, epoch: 7));
        junk.Add(DtlsAttacker.Forged(random, 0x15, epoch: 1));
        foreach (byte[] datagram in junk)
        {
            network.SendRaw(datagram, server.EndPoint);
        }

        (await client.GetAsync(uri)).GetPayloadString().Should().Be("ok");
        sessions.Distinct().Should().ContainSingle("the session survived every record that did not authenticate");
    }

    [Fact]
    public async Task PastMaxSessionsANewClientIsRefusedWithAnAlertWhileTheConnectedOneKeepsItsSession()
    {
        DtlsServerOptions options = DtlsLoopback.ServerOptions();
        options.MaxSessions = 1;
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => CoapResponse.Content("ok")), out _, options);
        Uri uri = DtlsLoopback.Uri(server.EndPoint, "/x");
        await using CoapClient first = DtlsLoopback.Client();
        (await first.GetAsync(uri)).Code.Should().Be(CoapCode.Content);
        await using CoapClient second = DtlsLoopback.Client(options: new DtlsClientOptions { HandshakeTimeout = TimeSpan.FromMinutes(10) });

        Func<Task> refused = () => second.GetAsync(uri).WaitAsync(Wait.DefaultBound);

        // RFC 5246 section 7.2.2: internal_error, at once, instead of silence until the client's handshake times out;
        // the connected session has not been idle for SessionEvictionThreshold, so it stays.
        (await refused.Should().ThrowAsync<System.Security.Authentication.AuthenticationException>()).Which.Message.Should().Contain("refused the DTLS handshake: internal_error");
        (await first.GetAsync(uri)).Code.Should().Be(CoapCode.Content);
    }

    [Fact]
    public async Task AQuietSessionLetsGoOfItsCiphersAndItsNextRequestsAreReadAndAnsweredInTheSameSession()
    {
        ManualTimeProvider time = new();
        List<CoapSecurityContext> sessions = [];
        await using LoopbackServer server = DtlsLoopback.StartServer(s => DtlsLoopback.MapSessionRecorder(s, "/x", sessions), out _, DtlsLoopback.ServerOptions(time));
        await using CoapClient client = DtlsLoopback.Client();
        Uri uri = DtlsLoopback.Uri(server.EndPoint, "/x");
        (await client.GetAsync(uri)).Code.Should().Be(CoapCode.Content);

        // The server's sweeps (once a minute) find the session quiet: it keeps its keys and drops the expanded ciphers.
        time.Advance(TimeSpan.FromMinutes(2));

        (await client.GetAsync(uri)).Code.Should().Be(CoapCode.Content, "the request decrypts and the answer encrypts with ciphers made again");
        (await client.GetAsync(uri)).Code.Should().Be(CoapCode.Content);
        sessions.Should().HaveCount(3);
        sessions.Distinct().Should().ContainSingle("resting is not a new session: no handshake, the same sequence numbers");
    }

    [Fact]
    public async Task AnIdleSessionAgesOutOnTheClockWithCloseNotifyAndTheClientMakesANewOne()
    {
        ManualTimeProvider time = new();
        List<CoapSecurityContext> sessions = [];
        DtlsServerOptions options = DtlsLoopback.ServerOptions(time);
        options.SessionIdleTimeout = TimeSpan.FromMinutes(10);
        await using LoopbackServer server = DtlsLoopback.StartServer(
            s => DtlsLoopback.MapSessionRecorder(s, "/x", sessions),
            out DtlsServerTransport transport,
            options);
        DtlsClientTransport clientTransport = new(new UdpTransport(new IPEndPoint(IPAddress.Loopback, 0)), new DtlsClientOptions { PskIdentity = DtlsLoopback.Identity, PskKey = DtlsLoopback.Key });
        await using CoapClient client = new(clientTransport);
        Uri uri = DtlsLoopback.Uri(server.EndPoint, "/x");
        await client.GetAsync(uri);
        time.Advance(TimeSpan.FromMinutes(9));
        await client.GetAsync(uri);

        time.Advance(TimeSpan.FromMinutes(11));

        // The server closed it with close_notify, which the client heard: its next request makes a new session.
        await Wait.UntilAsync(() => clientTransport.SessionCount == 0);
        transport.SessionCount.Should().Be(0);
        (await client.GetAsync(uri)).Code.Should().Be(CoapCode.Content);
        sessions.Should().HaveCount(3);
        sessions[1].Should().BeSameAs(sessions[0], "nine idle minutes are within the timeout");
        sessions[2].Should().NotBeSameAs(sessions[1], "past the timeout the session was closed and a new one made");
    }

    [Fact]
    public async Task ASweepThatSpansSeveralWorkItemsAgesOutEverySession()
    {
        ManualTimeProvider time = new();
        DtlsServerOptions options = DtlsLoopback.ServerOptions(time);
        options.SessionIdleTimeout = TimeSpan.FromMinutes(10);
        options.SweepSlice = 1;
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => CoapResponse.Content("ok")), out DtlsServerTransport transport, options);
        Uri uri = DtlsLoopback.Uri(server.EndPoint, "/x");
        List<CoapClient> clients = [.. Enumerable.Range(0, 3).Select(_ => DtlsLoopback.Client())];
        try
        {
            foreach (CoapClient client in clients)
            {
                (await client.GetAsync(uri)).Code.Should().Be(CoapCode.Content);
            }

            transport.SessionCount.Should().Be(3);

            // One session a work item: the first is looked at on the timer's call, the others by the pass going on in the pool.
            time.Advance(TimeSpan.FromMinutes(11));

            await Wait.UntilAsync(() => transport.SessionCount == 0);
        }
        finally
        {
            foreach (CoapClient client in clients)
            {
                await client.DisposeAsync();
            }
        }
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task WithOneSessionPerIdentityADeviceBackFromANewAddressReplacesItsOldSession(bool oneSessionPerIdentity)
    {
        List<CoapSecurityContext> sessions = [];
        DtlsServerOptions options = DtlsLoopback.ServerOptions();
        options.OneSessionPerIdentity = oneSessionPerIdentity;
        await using LoopbackServer server = DtlsLoopback.StartServer(s => DtlsLoopback.MapSessionRecorder(s, "/x", sessions), out DtlsServerTransport transport, options);
        Uri uri = DtlsLoopback.Uri(server.EndPoint, "/x");
        DtlsClientTransport before = new(new UdpTransport(new IPEndPoint(IPAddress.Loopback, 0)), new DtlsClientOptions { PskIdentity = DtlsLoopback.Identity, PskKey = DtlsLoopback.Key });
        await using CoapClient first = new(before);
        (await first.GetAsync(uri)).Code.Should().Be(CoapCode.Content);

        // The same device (its identity and key) from another socket, as after a NAT rebinding.
        await using CoapClient second = DtlsLoopback.Client();
        (await second.GetAsync(uri)).Code.Should().Be(CoapCode.Content);

        if (oneSessionPerIdentity)
        {
            // The old session was closed with close_notify, which its client heard.
            await Wait.UntilAsync(() => transport.SessionCount == 1 && before.SessionCount == 0);
        }
        else
        {
            transport.SessionCount.Should().Be(2, "identities may be shared unless the option says otherwise (RFC 7252 section 9.1.3.1)");
            before.SessionCount.Should().Be(1);
        }

        (await second.GetAsync(uri)).Code.Should().Be(CoapCode.Content);
        sessions.Should().HaveCount(3);
        sessions[2].Should().BeSameAs(sessions[1], "the newest session goes on");
    }

    [Fact]
    public async Task ASessionQuietSinceItsHandshakeStillServesAfterItsLastFlightIsLetGo()
    {
        ManualTimeProvider time = new();
        List<CoapSecurityContext> sessions = [];
        await using LoopbackServer server = DtlsLoopback.StartServer(s => DtlsLoopback.MapSessionRecorder(s, "/x", sessions), out DtlsServerTransport transport, DtlsLoopback.ServerOptions(time));
        await using DtlsClientTransport client = new(new UdpTransport(new IPEndPoint(IPAddress.Loopback, 0)), new DtlsClientOptions { PskIdentity = DtlsLoopback.Identity, PskKey = DtlsLoopback.Key });
        AnswerReceiver answers = new();
        client.Start(answers);
        IPEndPoint target = new(IPAddress.Loopback, server.EndPoint.Port);
        CoapSecurityContext session = await client.ConnectAsync(target);

        // The client has the server's Finished, which the server sends before it counts the session: wait for that, or
        // the clock moves before the server's session exists and nothing is let go.
        await Wait.UntilAsync(() => transport.SessionCount == 1);

        // Past RFC 6347's 2 MSL the server's session lets go of the Finished it kept, without a record received yet.
        time.Advance(TimeSpan.FromMinutes(5));

        for (ushort id = 1; id <= 2; id++)
        {
            CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get, MessageId = id, Token = new byte[] { (byte)id } };
            request.UriPath = "/x";
            client.Send(CoapMessageSerializer.Udp.Serialize(request), target, session);
            CoapMessage response = await NextResponseAsync(answers, client, target, session);
            response.Code.Should().Be(CoapCode.Content);
            response.Token.ToArray().Should().Equal((byte)id);
        }

        sessions.Should().HaveCount(2).And.OnlyContain(s => ReferenceEquals(s, sessions[0]));
        transport.SessionCount.Should().Be(1);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task AClientThatLostTheServersFinishedGetsItAgainUnderNewSequenceNumbersAndItsRequestIsAnswered(bool connectionId)
    {
        // RFC 6347 section 4.2.4: the server's ChangeCipherSpec and Finished are the handshake's last flight; a client
        // that lost them retransmits its own flight, and the server, which has already left the handshake behind, must
        // answer with its last flight again. The relay loses the datagram of the server's first record in epoch 1.
        List<(int Epoch, long Sequence)> fromServer = [];
        int dropped = 0;
        List<CoapSecurityContext> sessions = [];
        DtlsServerOptions options = DtlsLoopback.ServerOptions();
        options.UseConnectionId = connectionId;
        await using LoopbackServer server = DtlsLoopback.StartServer(s => DtlsLoopback.MapSessionRecorder(s, "/x", sessions), out DtlsServerTransport transport, options);
        await using UdpRelay relay = new(server.EndPoint, (toServer, datagram) =>
        {
            if (toServer || datagram.Length < 13)
            {
                return [datagram];
            }

            // Every record of the datagram: epoch and sequence number sit at the same place with a Connection ID too.
            bool epochOne = false;
            for (int at = 0; at + 13 <= datagram.Length;)
            {
                int epoch = (datagram[at + 3] << 8) | datagram[at + 4];
                long sequence = 0;
                for (int i = 5; i < 11; i++)
                {
                    sequence = (sequence << 8) | datagram[at + i];
                }

                lock (fromServer)
                {
                    fromServer.Add((epoch, sequence));
                }

                epochOne |= epoch == 1;
                if (datagram[at] == 25)
                {
                    break;
                }

                at += 13 + ((datagram[at + 11] << 8) | datagram[at + 12]);
            }

            if (epochOne && dropped == 0)
            {
                dropped++;
                return [];
            }

            return [datagram];
        });
        await using CoapClient client = DtlsLoopback.Client(options: new DtlsClientOptions { UseConnectionId = connectionId });

        CoapResponse response = await client.GetAsync(DtlsLoopback.Uri(relay.EndPoint, "/x"));

        response.Code.Should().Be(CoapCode.Content);
        dropped.Should().Be(1);
        List<(int Epoch, long Sequence)> seen;
        lock (fromServer)
        {
            seen = [.. fromServer];
        }

        int lost = seen.FindIndex(r => r.Epoch == 1);
        int again = seen.FindIndex(lost + 1, r => r.Epoch == 1);
        again.Should().BePositive("the server sent its Finished again");
        seen[again].Sequence.Should().BeGreaterThan(seen[lost].Sequence, "a retransmitted record has a new sequence number (RFC 6347 section 4.1)");
        seen[again - 1].Epoch.Should().Be(0, "the ChangeCipherSpec in epoch 0 comes before the Finished");
        seen[again - 1].Sequence.Should().BeGreaterThan(seen.Take(lost).Where(r => r.Epoch == 0).Max(r => r.Sequence), "the ChangeCipherSpec is retransmitted under a new sequence number too");
        sessions.Should().ContainSingle();
        transport.SessionCount.Should().Be(1);
    }

    /// <summary>
    /// The next response in the session: piggybacked on the ACK, or, when the server's handler was slow enough that it
    /// acknowledged first (a loaded machine), the separate response after the empty ACK, which is acknowledged in turn
    /// (RFC 7252 section 5.2.2).
    /// </summary>
    private static async Task<CoapMessage> NextResponseAsync(AnswerReceiver answers, DtlsClientTransport client, IPEndPoint target, CoapSecurityContext session)
    {
        while (true)
        {
            byte[] answer = await answers.NextAsync();
            CoapMessageSerializer.Udp.TryDeserialize(answer, out CoapMessage? message, out _).Should().BeTrue();
            if (message!.Code == CoapCode.Empty)
            {
                message.Type.Should().Be(CoapMessageType.Acknowledgement, "the only empty message a server sends here is the ACK before a separate response");
                continue;
            }

            if (message.Type == CoapMessageType.Confirmable)
            {
                CoapMessage ack = new() { Type = CoapMessageType.Acknowledgement, Code = CoapCode.Empty, MessageId = message.MessageId };
                client.Send(CoapMessageSerializer.Udp.Serialize(ack), target, session);
            }

            return message;
        }
    }

    /// <summary>Hands each plaintext the client receives to the test, in order.</summary>
    private sealed class AnswerReceiver : IDatagramReceiver
    {
        private readonly System.Threading.Channels.Channel<byte[]> _answers = System.Threading.Channels.Channel.CreateUnbounded<byte[]>();

        public void OnDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote) => _answers.Writer.TryWrite(datagram.ToArray());

        public async Task<byte[]> NextAsync()
        {
            using CancellationTokenSource bound = new(Wait.DefaultBound);
            return await _answers.Reader.ReadAsync(bound.Token);
        }
    }

    private static async Task<UdpReceiveResult> ReceiveAsync(UdpClient socket)
        => await TryReceiveAsync(socket, Wait.DefaultBound) ?? throw new TimeoutException("Nothing arrived.");

    private static async Task<UdpReceiveResult?> TryReceiveAsync(UdpClient socket, TimeSpan within)
    {
        using CancellationTokenSource timeout = new(within);
        try
        {
            return await socket.ReceiveAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            return null;
        }
    }
}
