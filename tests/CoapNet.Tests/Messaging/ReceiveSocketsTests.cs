using System.Collections.Concurrent;
using System.Net;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Server;
using CoapNet.Transports;

namespace CoapNet.Tests.Messaging;

/// <summary>
/// Several receive sockets on one UDP endpoint (SO_REUSEPORT, Linux): the kernel spreads peers over them, one peer's
/// datagrams always reach the same socket, and the one endpoint behind them answers every request.
/// </summary>
public class ReceiveSocketsTests
{
    [Fact]
    public async Task PeersAreSpreadOverTheSocketsAndEachPeerStaysOnOne()
    {
        if (!OperatingSystem.IsLinux())
        {
            // SO_REUSEPORT spreads datagrams only on Linux; elsewhere one socket receives (covered below).
            return;
        }

        const int Peers = 64;
        const int RequestsPerPeer = 4;
        ConcurrentQueue<(IPEndPoint Peer, string Thread)> handled = new();
        await using CoapEndpoint server = new(new UdpTransport(new IPEndPoint(IPAddress.Loopback, 0), new UdpTransportOptions { ReceiveSockets = 4 }))
        {
            // An endpoint's handler runs on the thread that received the request: the thread names the socket.
            RequestHandler = exchange =>
            {
                handled.Enqueue((exchange.RemoteEndPoint, Thread.CurrentThread.Name!));
                exchange.Respond(exchange.Request.CreateResponse(CoapCode.Content));
            },
        };
        server.Start();

        RawPeer[] peers = new RawPeer[Peers];
        try
        {
            for (int i = 0; i < Peers; i++)
            {
                peers[i] = new RawPeer(server.LocalEndPoint);
            }

            await Task.WhenAll(peers.Select(async peer =>
            {
                for (int r = 0; r < RequestsPerPeer; r++)
                {
                    await peer.SendAsync(peer.Request(CoapMessageType.Confirmable, CoapCode.Get, "/x", token: (byte)r));
                    (await peer.ReceiveAsync()).Message.Code.Should().Be(CoapCode.Content);
                }
            }));
        }
        finally
        {
            foreach (RawPeer? peer in peers)
            {
                peer?.Dispose();
            }
        }

        handled.Should().HaveCount(Peers * RequestsPerPeer);
        var byPeer = handled.GroupBy(h => h.Peer).ToList();
        byPeer.Should().HaveCount(Peers);
        byPeer.Should().OnlyContain(g => g.Select(h => h.Thread).Distinct().Count() == 1, "one peer's datagrams always reach the same socket");
        handled.Select(h => h.Thread).Distinct().Count().Should().BeGreaterThan(1, "64 peers hash to more than one of 4 sockets (all on one: about 4^-63)");
    }

    [Fact]
    public void TheSocketsShareOnePortAndAllCloseWithTheTransport()
    {
        UdpTransport transport = new(new IPEndPoint(IPAddress.Loopback, 0), new UdpTransportOptions { ReceiveSockets = 3 });
        int port = transport.LocalEndPoint.Port;
        transport.ReceiveSocketCount.Should().Be(OperatingSystem.IsLinux() ? 3 : 1);
        transport.Dispose();

        // Every socket is closed: the port binds again without SO_REUSEPORT.
        using UdpTransport again = new(new IPEndPoint(IPAddress.Loopback, port));
        again.LocalEndPoint.Port.Should().Be(port);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(65)]
    public void ACountOutsideOneToSixtyFourIsRefusedWithItsName(int count)
    {
        Action create = () => new UdpTransport(new IPEndPoint(IPAddress.Loopback, 0), new UdpTransportOptions { ReceiveSockets = count }).Dispose();

        create.Should().Throw<ArgumentException>().WithMessage("ReceiveSockets must be 1 to 64.*");
    }
}
