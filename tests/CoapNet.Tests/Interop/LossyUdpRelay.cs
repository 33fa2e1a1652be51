using System.Net;
using System.Net.Sockets;

namespace CoapNet.Tests.Interop;

/// <summary>
/// A UDP relay on loopback between one client and one server that drops a given share of the
/// datagrams in each direction, chosen by a seeded random generator, so a lossy path is repeatable.
/// </summary>
public sealed class LossyUdpRelay : IAsyncDisposable
{
    private readonly UdpClient _clientSide = new(new IPEndPoint(IPAddress.Loopback, 0));
    private readonly UdpClient _serverSide = new(new IPEndPoint(IPAddress.Loopback, 0));
    private readonly IPEndPoint _server;
    private readonly double _dropShare;
    private readonly Random _random;
    private readonly object _gate = new();
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _toServer;
    private readonly Task _toClient;
    private readonly List<RelayedDatagram>? _log;
    private IPEndPoint? _client;

    public LossyUdpRelay(IPEndPoint server, double dropShare, int seed, bool record = false)
    {
        _server = server;
        _dropShare = dropShare;
        _random = new Random(seed);
        _log = record ? [] : null;
        _toServer = Task.Run(() => PumpAsync(_clientSide, toServer: true));
        _toClient = Task.Run(() => PumpAsync(_serverSide, toServer: false));
    }

    /// <summary>Where the client sends instead of the server.</summary>
    public IPEndPoint EndPoint => (IPEndPoint)_clientSide.Client.LocalEndPoint!;

    public int DroppedToServer { get; private set; }

    public int DroppedToClient { get; private set; }

    public int ForwardedToServer { get; private set; }

    public int ForwardedToClient { get; private set; }

    /// <summary>Every datagram the relay saw, in order, when made to record them (forwarded or dropped).</summary>
    public IReadOnlyList<RelayedDatagram> Relayed
    {
        get
        {
            lock (_gate)
            {
                return _log is null ? throw new InvalidOperationException("The relay was not made to record.") : [.. _log];
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        _clientSide.Dispose();
        _serverSide.Dispose();
        await Task.WhenAll(_toServer, _toClient).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        _stop.Dispose();
    }

    private async Task PumpAsync(UdpClient from, bool toServer)
    {
        while (!_stop.IsCancellationRequested)
        {
            UdpReceiveResult received;
            try
            {
                received = await from.ReceiveAsync(_stop.Token);
            }
            catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException or SocketException)
            {
                return;
            }

            IPEndPoint? destination;
            bool drop;
            lock (_gate)
            {
                if (toServer)
                {
                    _client = received.RemoteEndPoint;
                }

                destination = toServer ? _server : _client;
                drop = _random.NextDouble() < _dropShare;
                _log?.Add(new RelayedDatagram(toServer, received.Buffer, drop));
                if (drop)
                {
                    _ = toServer ? DroppedToServer++ : DroppedToClient++;
                }
                else
                {
                    _ = toServer ? ForwardedToServer++ : ForwardedToClient++;
                }
            }

            if (!drop && destination is not null)
            {
                UdpClient to = toServer ? _serverSide : _clientSide;
                try
                {
                    await to.SendAsync(received.Buffer, destination, _stop.Token);
                }
                catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException or SocketException)
                {
                    return;
                }
            }
        }
    }
}

/// <summary>One datagram a <see cref="LossyUdpRelay"/> saw.</summary>
/// <param name="ToServer">True from the client to the server.</param>
/// <param name="Bytes">Its bytes.</param>
/// <param name="Dropped">True when the relay dropped it.</param>
public sealed record RelayedDatagram(bool ToServer, byte[] Bytes, bool Dropped)
{
    /// <summary>The bytes as a CoAP message; fails the test when they are not one.</summary>
    public CoapNet.Messages.CoapMessage Message => CoapNet.Serialization.CoapMessageSerializer.Udp.Deserialize((ReadOnlyMemory<byte>)Bytes);
}
