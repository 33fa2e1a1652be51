using System.Buffers;
using System.Net;
using System.Net.Sockets;
using CoapNet.Transports;

namespace CoapNet.Cli.Transports;

/// <summary>
/// The tool's UDP transport: one socket connected to the one server a command talks to. A connected socket is told of
/// an ICMP port unreachable answering what it sent (the kernel reports ECONNREFUSED on it; an unconnected socket, such
/// as a server's, hears nothing), so "nothing listens there" is reported as it happens instead of after the 93 s a CON
/// takes to time out (RFC 7252 section 4.8.2, EXCHANGE_LIFETIME). Only datagrams from that server are received.
/// </summary>
internal sealed class ConnectedUdpTransport : IDatagramTransport
{
    private const int ReceiveBufferSize = 65535;

    private readonly Socket _socket;
    private readonly IPEndPoint _remote;
    private readonly Action<IPEndPoint> _onPortUnreachable;
    private readonly CancellationTokenSource _stop = new();
    private Task? _receiving;

    /// <summary>Opens a socket on a free port and connects it to <paramref name="remote"/>.</summary>
    /// <param name="remote">The server.</param>
    /// <param name="onPortUnreachable">Called, on the receive loop, each time the server's host answers with ICMP port unreachable.</param>
    /// <exception cref="SocketException">The socket cannot be opened or connected (no route, say).</exception>
    public ConnectedUdpTransport(IPEndPoint remote, Action<IPEndPoint> onPortUnreachable)
    {
        _remote = remote;
        _onPortUnreachable = onPortUnreachable;
        _socket = new Socket(remote.AddressFamily, SocketType.Dgram, ProtocolType.Udp);
        try
        {
            _socket.Connect(remote);
        }
        catch
        {
            _socket.Dispose();
            throw;
        }

        LocalEndPoint = (IPEndPoint)_socket.LocalEndPoint!;
    }

    /// <inheritdoc/>
    public IPEndPoint LocalEndPoint { get; }

    /// <inheritdoc/>
    public void Start(IDatagramReceiver receiver)
    {
        ArgumentNullException.ThrowIfNull(receiver);
        ObjectDisposedException.ThrowIf(_stop.IsCancellationRequested, this);
        if (Interlocked.CompareExchange(ref _receiving, Task.CompletedTask, null) is not null)
        {
            throw new InvalidOperationException("The transport is already started.");
        }

        _receiving = Task.Run(() => ReceiveLoopAsync(receiver));
    }

    /// <inheritdoc/>
    public void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote)
    {
        Check(remote);
        try
        {
            _socket.Send(datagram, SocketFlags.None);
        }
        catch (SocketException e) when (e.SocketErrorCode == SocketError.ConnectionRefused)
        {
            // An ICMP error for an earlier datagram is reported on the next call, a send as well as a receive.
            _onPortUnreachable(_remote);
        }
    }

    /// <inheritdoc/>
    public async ValueTask SendAsync(ReadOnlyMemory<byte> datagram, IPEndPoint remote, CancellationToken cancellationToken = default)
    {
        Check(remote);
        try
        {
            await _socket.SendAsync(datagram, SocketFlags.None, cancellationToken).ConfigureAwait(false);
        }
        catch (SocketException e) when (e.SocketErrorCode == SocketError.ConnectionRefused)
        {
            _onPortUnreachable(_remote);
        }
    }

    /// <inheritdoc/>
    public void Dispose() => DisposeAsync().AsTask().GetAwaiter().GetResult();

    /// <inheritdoc/>
    public async ValueTask DisposeAsync()
    {
        if (_stop.IsCancellationRequested)
        {
            return;
        }

        await _stop.CancelAsync().ConfigureAwait(false);
        _socket.Dispose();
        if (_receiving is not null)
        {
            await _receiving.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        }

        _stop.Dispose();
    }

    private void Check(IPEndPoint remote)
    {
        ObjectDisposedException.ThrowIf(_stop.IsCancellationRequested, this);
        if (!_remote.Equals(remote))
        {
            throw new ArgumentException($"This transport talks to {_remote} only, not {remote}.", nameof(remote));
        }
    }

    private async Task ReceiveLoopAsync(IDatagramReceiver receiver)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(ReceiveBufferSize);
        try
        {
            while (!_stop.IsCancellationRequested)
            {
                int length;
                try
                {
                    length = await _socket.ReceiveAsync(buffer, SocketFlags.None, _stop.Token).ConfigureAwait(false);
                }
                catch (SocketException e) when (e.SocketErrorCode == SocketError.ConnectionRefused)
                {
                    _onPortUnreachable(_remote);
                    continue;
                }
                catch (SocketException e) when (e.SocketErrorCode == SocketError.MessageSize)
                {
                    // Larger than any CoAP message we take: dropped, as the library's transport drops it.
                    continue;
                }
                catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException || (e is SocketException && _stop.IsCancellationRequested))
                {
                    return;
                }

                try
                {
                    receiver.OnDatagram(buffer.AsSpan(0, length), _remote);
                }
                catch (Exception e) when (e is not (OutOfMemoryException or OperationCanceledException or ObjectDisposedException))
                {
                    // A receiver must not throw; if one does, that datagram is lost but the socket keeps receiving.
                }
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }
}
