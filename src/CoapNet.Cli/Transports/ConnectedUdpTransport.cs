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
/// <remarks>
/// It receives on a thread of its own with blocking calls, as the library's UdpTransport does and for its reason: a
/// block-wise download is one datagram after another, and an awaited receive would hand each one from the runtime's
/// event loop to a pool thread. Closing the socket interrupts the blocking call and ends the thread.
/// </remarks>
internal sealed class ConnectedUdpTransport : IDatagramTransport
{
    private const int ReceiveBufferSize = 65535;

    private readonly Socket _socket;
    private readonly IPEndPoint _remote;
    private readonly Action<IPEndPoint> _onPortUnreachable;
    private readonly TaskCompletionSource _ended = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _started;
    private volatile bool _stopping;

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
        ObjectDisposedException.ThrowIf(_stopping, this);
        if (Interlocked.Exchange(ref _started, 1) != 0)
        {
            throw new InvalidOperationException("The transport is already started.");
        }

        new Thread(() => ReceiveLoop(receiver)) { IsBackground = true, Name = "coap UDP receive" }.Start();
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
    public void Dispose()
    {
        if (_stopping)
        {
            return;
        }

        _stopping = true;
        _socket.Dispose();
        if (Volatile.Read(ref _started) != 0)
        {
            _ended.Task.Wait(TimeSpan.FromSeconds(5));
        }
    }

    /// <inheritdoc/>
    public ValueTask DisposeAsync()
    {
        Dispose();
        return ValueTask.CompletedTask;
    }

    private void Check(IPEndPoint remote)
    {
        ObjectDisposedException.ThrowIf(_stopping, this);
        if (!_remote.Equals(remote))
        {
            throw new ArgumentException($"This transport talks to {_remote} only, not {remote}.", nameof(remote));
        }
    }

    private void ReceiveLoop(IDatagramReceiver receiver)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(ReceiveBufferSize);
        try
        {
            while (!_stopping)
            {
                int length;
                try
                {
                    length = _socket.Receive(buffer, SocketFlags.None);
                }
                catch (SocketException e) when (e.SocketErrorCode == SocketError.ConnectionRefused && !_stopping)
                {
                    _onPortUnreachable(_remote);
                    continue;
                }
                catch (SocketException e) when (e.SocketErrorCode == SocketError.MessageSize && !_stopping)
                {
                    // Larger than any CoAP message we take: dropped, as the library's transport drops it.
                    continue;
                }
                catch (Exception e) when (e is ObjectDisposedException || (e is SocketException && _stopping))
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
            _ended.TrySetResult();
        }
    }
}
