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

    private static void MapRecorder(CoapNet.Server.CoapServer server, List<(CoapSecurityContext Session, int Port)> seen)
        => server.MapGet("/x", request =>
        {
            lock (seen)
            {
                seen.Add((request.Peer.SecurityContext!, request.Peer.EndPoint.Port));
            }

            return CoapResponse.Content("ok");
        });

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
