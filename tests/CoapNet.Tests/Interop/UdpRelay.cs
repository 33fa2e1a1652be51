using System.Net;
using System.Net.Sockets;

namespace CoapNet.Tests.Interop;

/// <summary>What a <see cref="UdpRelay"/> sends on for one datagram it received: nothing (a loss), the datagram, or others in its place.</summary>
/// <param name="toServer">True for a datagram from the client to the server.</param>
/// <param name="datagram">The datagram as received.</param>
/// <returns>The datagrams to send on, in order.</returns>
public delegate IReadOnlyList<byte[]> UdpRelayRule(bool toServer, byte[] datagram);

/// <summary>
/// A UDP relay on loopback between one client (whoever sent to it last) and one server, passing every datagram through
/// a rule that may drop, alter or repeat it: the path a test puts between two real peers.
/// </summary>
public sealed class UdpRelay : IAsyncDisposable
{
    private readonly UdpClient _clientSide = new(new IPEndPoint(IPAddress.Loopback, 0));
    private readonly UdpClient _serverSide = new(new IPEndPoint(IPAddress.Loopback, 0));
    private readonly IPEndPoint _server;
    private readonly UdpRelayRule _rule;
    private readonly object _gate = new();
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _toServer;
    private readonly Task _toClient;
    private IPEndPoint? _client;

    /// <param name="server">Where the client's datagrams go.</param>
    /// <param name="rule">Called for each datagram, one at a time (under the relay's lock), in the order received per direction.</param>
    public UdpRelay(IPEndPoint server, UdpRelayRule rule)
    {
        _server = server;
        _rule = rule;
        _toServer = Task.Run(() => PumpAsync(_clientSide, toServer: true));
        _toClient = Task.Run(() => PumpAsync(_serverSide, toServer: false));
    }

    /// <summary>Where the client sends instead of the server.</summary>
    public IPEndPoint EndPoint => (IPEndPoint)_clientSide.Client.LocalEndPoint!;

    /// <summary>Sends <paramref name="datagram"/> on to the server as if the client had just sent it: a datagram the rule held back, released.</summary>
    public async Task SendToServerAsync(byte[] datagram) => await _serverSide.SendAsync(datagram, _server, _stop.Token);

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
            IReadOnlyList<byte[]> onward;
            lock (_gate)
            {
                if (toServer)
                {
                    _client = received.RemoteEndPoint;
                }

                destination = toServer ? _server : _client;
                onward = _rule(toServer, received.Buffer);
            }

            if (destination is null)
            {
                continue;
            }

            UdpClient to = toServer ? _serverSide : _clientSide;
            foreach (byte[] datagram in onward)
            {
                try
                {
                    await to.SendAsync(datagram, destination, _stop.Token);
                }
                catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException or SocketException)
                {
                    return;
                }
            }
        }
    }
}
