using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using CoapNet.Tests.Infrastructure;
using CoapNet.Transports;

namespace CoapNet.Tests.Messaging;

/// <summary>
/// A UDP socket stays served while a receiver call that runs work on the receive thread does not return (issue 25): the
/// transport hands the socket to a new thread, and the stalled one ends when its call returns. Real sockets and
/// threads, since the stall is a real thread blocked; waits are liveness bounds only.
/// </summary>
public class ReceiveStallTests
{
    [Fact]
    public void ADatagramArrivingWhileAReceiverCallIsStuckIsStillDelivered()
    {
        using ManualResetEventSlim release = new();
        StallingReceiver receiver = new(release);
        UdpTransport transport = new(new IPEndPoint(IPAddress.Loopback, 0));
        using UdpClient sender = new(new IPEndPoint(IPAddress.Loopback, 0));
        try
        {
            transport.Start(receiver);
            sender.Send([1], transport.LocalEndPoint);
            Wait.Until(() => receiver.Stuck, "the first call blocks its thread");

            sender.Send([2], transport.LocalEndPoint);
            Wait.Until(() => receiver.Delivered.Contains((byte)2), "another thread took the socket over");

            release.Set();
            Wait.Until(() => receiver.Delivered.Contains((byte)1), "the stuck call returned");
            sender.Send([3], transport.LocalEndPoint);
            Wait.Until(() => receiver.Delivered.Contains((byte)3), "the socket is still served");
        }
        finally
        {
            release.Set();
            transport.Dispose();
        }

        // The socket is closed: the port binds again.
        using UdpTransport again = new(transport.LocalEndPoint);
    }

    /// <summary>Blocks on a datagram whose first byte is 1 until released; records what it got.</summary>
    private sealed class StallingReceiver(ManualResetEventSlim release) : IDatagramReceiver
    {
        private volatile bool _stuck;

        // Work may run on the receive thread: the transport then keeps the socket served through a stalled call.
        public bool SupportsInlineWork => true;

        public ConcurrentBag<byte> Delivered { get; } = [];

        public bool Stuck => _stuck;

        public void OnDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote)
        {
            if (datagram[0] == 1)
            {
                _stuck = true;
                release.Wait();
            }

            Delivered.Add(datagram[0]);
        }
    }
}
