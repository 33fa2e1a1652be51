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
    private IPEndPoint? _client;

    public LossyUdpRelay(IPEndPoint server, double dropShare, int seed)
    {
        _server = server;
        _dropShare = dropShare;
        _random = new Random(seed);
        _toServer = Task.Run(() => PumpAsync(_clientSide, toServer: true));
        _toClient = Task.Run(() => PumpAsync(_serverSide, toServer: false));
    }

    /// <summary>Where the client sends instead of the server.</summary>
    public IPEndPoint EndPoint => (IPEndPoint)_clientSide.Client.LocalEndPoint!;

    public int DroppedToServer { get; private set; }

    public int DroppedToClient { get; private set; }

    public int ForwardedToServer { get; private set; }

    public int ForwardedToClient { get; private set; }

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
