using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using CoapNet.Tests.Infrastructure;
using CoapNet.Transports;

namespace CoapNet.Tests.Messaging;

/// <summary>
/// What <see cref="UdpTransport"/> moves, whichever calls move it (on Linux the C library's recvmmsg, recvfrom and
/// sendto, issues 25 and 39; elsewhere <see cref="Socket"/>'s): whole datagrams with their sender, also when many wait
/// and one call takes several, answers that reach IPv4 and IPv6 peers of one dual-stack socket, and a datagram too long
/// for the receive buffer dropped without stopping the socket.
/// Real sockets on loopback; waits are liveness bounds only.
/// </summary>
public class UdpTransportDatagramTests
{
    [Fact]
    public void ADatagramLongerThanTheReceiveBufferIsDroppedAndTheSocketKeepsServing()
    {
        Recorder receiver = new();
        using UdpTransport transport = new(new IPEndPoint(IPAddress.Loopback, 0), new UdpTransportOptions { ReceiveBufferSize = 1024 });
        using UdpClient sender = new(new IPEndPoint(IPAddress.Loopback, 0));
        transport.Start(receiver);

        byte[] tooLong = new byte[1500];
        tooLong.AsSpan().Fill(0xAB);
        sender.Send(tooLong, transport.LocalEndPoint);
        sender.Send([1, 2, 3], transport.LocalEndPoint);
        byte[] fits = new byte[1024];
        fits.AsSpan().Fill(0xCD);
        sender.Send(fits, transport.LocalEndPoint);

        Wait.Until(() => receiver.Datagrams.Count == 2, "the two datagrams that fit arrive");
        receiver.Datagrams.Select(d => d.Bytes).Should().BeEquivalentTo([new byte[] { 1, 2, 3 }, fits], options => options.WithStrictOrdering(), "the 1,500-byte one is dropped, not cut to 1,024 bytes and delivered");
        receiver.Datagrams.Should().OnlyContain(d => d.From.Equals(sender.Client.LocalEndPoint));
    }

    [Theory]
    [InlineData("127.0.0.1")]
    [InlineData("::1")]
    public void DatagramsThatQueuedBeforeTheReceiveAreEachDeliveredWholeWithTheirOwnSender(string address)
    {
        IPAddress loopback = IPAddress.Parse(address);
        if (loopback.AddressFamily == AddressFamily.InterNetworkV6 && !Socket.OSSupportsIPv6)
        {
            return;
        }

        // Sent before the transport starts, so they wait in the kernel together and a receive call can take several: the
        // slots of one call must not mix up bytes, lengths or senders. A datagram near UDP's largest sits among short ones.
        Recorder receiver = new();
        using UdpTransport transport = new(new IPEndPoint(loopback, 0));
        UdpClient[] senders = new UdpClient[5];
        List<(byte[] Bytes, string From)> sent = [];
        try
        {
            for (int s = 0; s < senders.Length; s++)
            {
                senders[s] = new UdpClient(new IPEndPoint(loopback, 0));
            }

            for (int i = 0; i < 60; i++)
            {
                UdpClient sender = senders[i % senders.Length];
                byte[] datagram = new byte[i == 30 ? 60_000 : 1 + (i * 7)];
                datagram.AsSpan().Fill((byte)i);
                sender.Send(datagram, transport.LocalEndPoint);
                sent.Add((datagram, sender.Client.LocalEndPoint!.ToString()!));
            }

            transport.Start(receiver);

            Wait.Until(() => receiver.Datagrams.Count == sent.Count, "every queued datagram arrives");
            receiver.Datagrams.Select(d => (d.Bytes, d.From.ToString())).Should().BeEquivalentTo(sent, options => options.WithStrictOrdering(), "one socket's datagrams keep their order, each with the bytes and sender it was sent with");
        }
        finally
        {
            foreach (UdpClient? sender in senders)
            {
                sender?.Dispose();
            }
        }
    }

    [Fact]
    public void AnswersToDatagramsThatQueuedTogetherReachEachPeerWholeAndInOrder()
    {
        // Answers made while a batch is delivered may leave together at its end (sendmmsg, issue 39): each must still go
        // to its own peer with its own bytes, and one too long to be held goes after those held before it.
        UdpTransport? transport = null;
        Echo echo = new(() => transport!);
        transport = new UdpTransport(new IPEndPoint(IPAddress.Loopback, 0));
        using (transport)
        {
            UdpClient[] peers = new UdpClient[4];
            Dictionary<UdpClient, List<byte[]>> sent = [];
            try
            {
                for (int p = 0; p < peers.Length; p++)
                {
                    peers[p] = new UdpClient(new IPEndPoint(IPAddress.Loopback, 0));
                    peers[p].Client.ReceiveTimeout = (int)Wait.DefaultBound.TotalMilliseconds;
                    sent[peers[p]] = [];
                }

                for (int i = 0; i < 40; i++)
                {
                    UdpClient peer = peers[i % peers.Length];
                    byte[] datagram = new byte[i == 21 ? 3000 : 4 + i];
                    datagram.AsSpan().Fill((byte)i);
                    peer.Send(datagram, transport.LocalEndPoint);
                    sent[peer].Add(datagram);
                }

                transport.Start(echo);

                foreach (UdpClient peer in peers)
                {
                    foreach (byte[] expected in sent[peer])
                    {
                        IPEndPoint? from = null;
                        peer.Receive(ref from).Should().Equal(expected, "each peer gets its own answers, whole and in the order it asked");
                    }
                }
            }
            finally
            {
                foreach (UdpClient? peer in peers)
                {
                    peer?.Dispose();
                }
            }
        }
    }

    [Fact]
    public void ACallThatStallsDoesNotHoldBackTheAnswersMadeBeforeItInItsBatch()
    {
        using ManualResetEventSlim release = new();
        UdpTransport? transport = null;
        Echo echo = new(() => transport!, datagram =>
        {
            if (datagram[0] == 0xFF)
            {
                // Until the test has its answers or gives up: longer than the peer waits for them.
                release.Wait();
            }
        });
        transport = new UdpTransport(new IPEndPoint(IPAddress.Loopback, 0));
        using (transport)
        using (UdpClient peer = new(new IPEndPoint(IPAddress.Loopback, 0)))
        {
            peer.Client.ReceiveTimeout = (int)Wait.DefaultBound.TotalMilliseconds;
            peer.Send([1], transport.LocalEndPoint);
            peer.Send([2], transport.LocalEndPoint);
            peer.Send([0xFF], transport.LocalEndPoint);
            transport.Start(echo);
            try
            {
                IPEndPoint? from = null;
                peer.Receive(ref from).Should().Equal([1], "the answers made before the stalled call are sent while it stalls");
                peer.Receive(ref from).Should().Equal([2]);
            }
            finally
            {
                release.Set();
            }
        }
    }

    [Theory]
    [InlineData("127.0.0.1")]
    [InlineData("::")]
    public async Task PeersPastTheFullAddressCachesAreHeardAndAnsweredAtTheirOwnAddress(string bind)
    {
        IPAddress local = IPAddress.Parse(bind);
        if (local.AddressFamily == AddressFamily.InterNetworkV6 && !Socket.OSSupportsIPv6)
        {
            return;
        }

        // The caches hold 4,096 peers each and then serve the rest without caching (issue 41): the send address is written
        // afresh for each datagram, so a wrong byte in it would send an answer astray. 4,100 peers fill both caches first.
        UdpTransport? transport = null;
        Echo echo = new(() => transport!);
        transport = new UdpTransport(new IPEndPoint(local, 0));
        using (transport)
        {
            transport.Start(echo);
            int port = transport.LocalEndPoint.Port;
            List<Socket> fillers = [];
            try
            {
                for (int i = 0; i < 4100; i++)
                {
                    Socket filler = new(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
                    fillers.Add(filler);
                    filler.Bind(new IPEndPoint(IPAddress.Loopback, 0));
                    filler.SendTo([0], new IPEndPoint(IPAddress.Loopback, port));
                }

                Wait.Until(() => echo.Senders.Count >= fillers.Count, "every filler is heard");
            }
            finally
            {
                foreach (Socket filler in fillers)
                {
                    filler.Dispose();
                }
            }

            List<(UdpClient Client, IPEndPoint Server)> peers = [(new UdpClient(new IPEndPoint(IPAddress.Loopback, 0)), new IPEndPoint(IPAddress.Loopback, port))];
            if (local.AddressFamily == AddressFamily.InterNetworkV6)
            {
                peers.Add((new UdpClient(new IPEndPoint(IPAddress.IPv6Loopback, 0)), new IPEndPoint(IPAddress.IPv6Loopback, port)));
            }

            try
            {
                foreach ((UdpClient client, IPEndPoint server) in peers)
                {
                    client.Client.ReceiveTimeout = (int)Wait.DefaultBound.TotalMilliseconds;
                    for (byte i = 1; i <= 3; i++)
                    {
                        client.Send([7, i], server);
                        IPEndPoint? from = null;
                        client.Receive(ref from).Should().Equal(7, i);
                        from!.Port.Should().Be(port);
                    }

                    echo.Senders.Should().Contain((IPEndPoint)client.Client.LocalEndPoint!, "a peer the full cache does not hold is seen at its own address");

                    // The asynchronous send, which may not use a thread's scratch address, reaches an uncached peer too.
                    await transport.SendAsync(new byte[] { 9 }, (IPEndPoint)client.Client.LocalEndPoint!);
                    IPEndPoint? again = null;
                    client.Receive(ref again).Should().Equal(9);
                }
            }
            finally
            {
                foreach ((UdpClient client, _) in peers)
                {
                    client.Dispose();
                }
            }
        }
    }

    [Fact]
    public void ADualStackSocketAnswersIPv4AndIPv6PeersAtTheAddressTheyCameFrom()
    {
        if (!Socket.OSSupportsIPv6)
        {
            return;
        }

        UdpTransport? transport = null;
        Echo echo = new(() => transport!);
        transport = new UdpTransport(new IPEndPoint(IPAddress.IPv6Any, 0));
        using (transport)
        {
            transport.Start(echo);
            int port = transport.LocalEndPoint.Port;
            using UdpClient v4 = new(new IPEndPoint(IPAddress.Loopback, 0));
            using UdpClient v6 = new(new IPEndPoint(IPAddress.IPv6Loopback, 0));
            v4.Client.ReceiveTimeout = v6.Client.ReceiveTimeout = (int)Wait.DefaultBound.TotalMilliseconds;

            for (byte i = 1; i <= 3; i++)
            {
                v4.Send([4, i], new IPEndPoint(IPAddress.Loopback, port));
                v6.Send([6, i], new IPEndPoint(IPAddress.IPv6Loopback, port));
                IPEndPoint? from4 = null, from6 = null;
                v4.Receive(ref from4).Should().Equal(4, i);
                v6.Receive(ref from6).Should().Equal(6, i);
                from4!.Port.Should().Be(port);
                from6!.Port.Should().Be(port);
            }

            echo.Senders.Should().Contain(e => e.AddressFamily == AddressFamily.InterNetwork, "an IPv4 peer of a dual-stack socket is seen as IPv4 (mapped addresses normalized)");
            echo.Senders.Should().Contain(e => e.AddressFamily == AddressFamily.InterNetworkV6);
        }
    }

    private sealed class Recorder : IDatagramReceiver
    {
        public ConcurrentQueue<(byte[] Bytes, IPEndPoint From)> Datagrams { get; } = new();

        public void OnDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote) => Datagrams.Enqueue((datagram.ToArray(), remote));
    }

    /// <summary>Sends each datagram back to its sender through the transport, on the receive thread (inline, as the channels work).</summary>
    private sealed class Echo(Func<UdpTransport> transport, Action<byte[]>? afterAnswer = null) : IDatagramReceiver
    {
        public ConcurrentBag<IPEndPoint> Senders { get; } = [];

        public bool SupportsInlineWork => true;

        public void OnDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote)
        {
            Senders.Add(remote);
            transport().Send(datagram, remote);
            afterAnswer?.Invoke(datagram.ToArray());
        }
    }
}
