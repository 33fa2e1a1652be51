using System.Net;
using CoapNet.Channels;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Messages;
using CoapNet.Tests.Server;
using CoapNet.Transports;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// Connection ID (RFC 9146) over real loopback sockets: a client whose source port changes mid-session (a NAT
/// rebinding) keeps its session when the server issued it a Connection ID, and loses it without one.
/// </summary>
public sealed class DtlsConnectionIdTests
{
    [Fact]
    public async Task AClientThatChangesItsPortKeepsItsSessionWithAConnectionIdAndAnswersGoToTheNewPort()
    {
        List<(CoapSecurityContext Session, int Port)> seen = [];
        await using LoopbackServer server = DtlsLoopback.StartServer(s => MapRecorder(s, seen), out DtlsServerTransport transport);
        RebindingTransport network = new();
        await using CoapClient client = new(new DtlsClientTransport(network, new DtlsClientOptions { PskIdentity = DtlsLoopback.Identity, PskKey = DtlsLoopback.Key }));
        Uri uri = DtlsLoopback.Uri(server.EndPoint, "/x");
        (await client.GetAsync(uri)).Code.Should().Be(CoapCode.Content);
        int firstPort = network.LocalEndPoint.Port;

        network.Rebind();
        using CancellationTokenSource liveness = new(Infrastructure.Wait.DefaultBound);
        CoapResponse afterMove = await client.GetAsync(uri, liveness.Token);

        afterMove.Code.Should().Be(CoapCode.Content, "the answer reached the client at its new port");
        seen.Should().HaveCount(2);
        seen[1].Session.Should().BeSameAs(seen[0].Session, "the Connection ID found the same session");
        seen[0].Port.Should().Be(firstPort);
        seen[1].Port.Should().Be(network.LocalEndPoint.Port).And.NotBe(firstPort);
        transport.SessionCount.Should().Be(1);
    }

    [Fact]
    public async Task AClientThatChangesItsPortWithoutAConnectionIdIsNotHeardInItsSession()
    {
        List<(CoapSecurityContext Session, int Port)> seen = [];
        await using LoopbackServer server = DtlsLoopback.StartServer(s => MapRecorder(s, seen), out _);
        RebindingTransport network = new();
        await using CoapClient client = new(new DtlsClientTransport(network, new DtlsClientOptions { PskIdentity = DtlsLoopback.Identity, PskKey = DtlsLoopback.Key, UseConnectionId = false }));
        Uri uri = DtlsLoopback.Uri(server.EndPoint, "/x");
        (await client.GetAsync(uri)).Code.Should().Be(CoapCode.Content);

        network.Rebind();
        using CancellationTokenSource abandon = new();
        Task<CoapResponse> lost = client.GetAsync(uri, abandon.Token);
        await Infrastructure.Wait.UntilAsync(() => network.Sent >= 1);

        // The server reads one socket in order: once another client is answered, the moved client's record has been
        // read too, and dropped (from an address without a session, not a ClientHello).
        await using CoapClient other = DtlsLoopback.Client();
        (await other.GetAsync(uri)).Code.Should().Be(CoapCode.Content);

        seen.Should().HaveCount(2, "the first request, then the other client's; the moved client's record reached no handler");
        seen[1].Session.Should().NotBeSameAs(seen[0].Session);
        lost.IsCompleted.Should().BeFalse();
        abandon.Cancel();
        await lost.Invoking(async t => await t).Should().ThrowAsync<OperationCanceledException>();
    }

    [Fact]
    public async Task ASessionQuietFor240SecondsIsNotMovedByItsOwnFinishedReplayedFromElsewhere()
    {
        ManualTimeProvider time = new();
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => CoapResponse.Content("ok")), out DtlsServerTransport transport, DtlsLoopback.ServerOptions(time));
        RecordingTransport network = new();
        await using DtlsClientTransport client = new(network, new DtlsClientOptions { PskIdentity = DtlsLoopback.Identity, PskKey = DtlsLoopback.Key });
        client.Start(new Ignoring());
        await client.ConnectAsync(new IPEndPoint(IPAddress.Loopback, server.EndPoint.Port));

        // The client may finish before the server has recorded the session (the server's last flight goes out first);
        // the server's clock must not move before it has.
        await Infrastructure.Wait.UntilAsync(() => transport.SessionCount == 1);

        // The client's Finished: its first record with the Connection ID the server issued (RFC 9146), epoch 1, sequence 0.
        byte[] finished = network.Sent.First(d => d[0] == 25);
        time.Advance(TimeSpan.FromMinutes(5));

        // Past 2 MSL (RFC 6347 section 4.2.4) the server's session, quiet since its handshake, is on its own record
        // protection: the Finished replayed from another address must count as read there, not as the newest record.
        using System.Net.Sockets.UdpClient attacker = new(new IPEndPoint(IPAddress.Parse("127.0.0.2"), 0));
        await attacker.SendAsync(finished, server.EndPoint);
        await DtlsAttacker.BarrierAsync(server.EndPoint);

        // The session ages out with close_notify, sent to where the session is: the client hears it only if it was not moved.
        time.Advance(TimeSpan.FromMinutes(31));
        await Infrastructure.Wait.UntilAsync(() => client.SessionCount == 0);
    }

    private static void MapRecorder(CoapNet.Server.CoapServer server, List<(CoapSecurityContext Session, int Port)> seen)
        => server.MapGet("/x", request =>
        {
            lock (seen)
            {
                seen.Add((request.Peer.SecurityContext!, request.Peer.EndPoint.Port));
            }

            return CoapResponse.Content("ok");
        });

    /// <summary>A UDP transport on 127.0.0.1 that keeps a copy of every datagram it sends.</summary>
    private sealed class RecordingTransport : IDatagramTransport
    {
        private readonly UdpTransport _udp = new(new IPEndPoint(IPAddress.Loopback, 0));
        private readonly List<byte[]> _sent = [];

        public IPEndPoint LocalEndPoint => _udp.LocalEndPoint;

        public IReadOnlyList<byte[]> Sent
        {
            get
            {
                lock (_sent)
                {
                    return [.. _sent];
                }
            }
        }

        public void Start(IDatagramReceiver receiver) => _udp.Start(receiver);

        public void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote)
        {
            lock (_sent)
            {
                _sent.Add(datagram.ToArray());
            }

            _udp.Send(datagram, remote);
        }

        public ValueTask SendAsync(ReadOnlyMemory<byte> datagram, IPEndPoint remote, CancellationToken cancellationToken = default)
        {
            Send(datagram.Span, remote);
            return ValueTask.CompletedTask;
        }

        public void Dispose() => _udp.Dispose();

        public ValueTask DisposeAsync() => _udp.DisposeAsync();
    }

    private sealed class Ignoring : IDatagramReceiver
    {
        public void OnDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote)
        {
        }
    }

    /// <summary>A UDP transport on 127.0.0.1 that can move to a new source port, as a NAT rebinding does; it counts what it sends after a move.</summary>
    private sealed class RebindingTransport : IDatagramTransport
    {
        private UdpTransport _udp = new(new IPEndPoint(IPAddress.Loopback, 0));
        private IDatagramReceiver? _receiver;
        private int _sent;

        public IPEndPoint LocalEndPoint => Volatile.Read(ref _udp).LocalEndPoint;

        /// <summary>Datagrams sent since the last <see cref="Rebind"/>.</summary>
        public int Sent => Volatile.Read(ref _sent);

        public void Rebind()
        {
            UdpTransport moved = new(new IPEndPoint(IPAddress.Loopback, 0));
            moved.Start(_receiver!);
            UdpTransport old = Interlocked.Exchange(ref _udp, moved);
            Volatile.Write(ref _sent, 0);
            old.Dispose();
        }

        public void Start(IDatagramReceiver receiver)
        {
            _receiver = receiver;
            _udp.Start(receiver);
        }

        public void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote)
        {
            Volatile.Read(ref _udp).Send(datagram, remote);
            Interlocked.Increment(ref _sent);
        }

        public ValueTask SendAsync(ReadOnlyMemory<byte> datagram, IPEndPoint remote, CancellationToken cancellationToken = default)
        {
            Send(datagram.Span, remote);
            return ValueTask.CompletedTask;
        }

        public void Dispose() => Volatile.Read(ref _udp).Dispose();

        public ValueTask DisposeAsync() => Volatile.Read(ref _udp).DisposeAsync();
    }
}
