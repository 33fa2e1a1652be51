using System.Buffers;
using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;

namespace CoapNet.Transports;

/// <summary>
/// One UDP socket bound to one local endpoint. Receives on a thread of its own with blocking calls and the
/// allocation-free <see cref="SocketAddress"/> overloads into one pooled buffer; a known peer costs no
/// allocation per datagram.
/// </summary>
/// <remarks>
/// A blocking receive thread rather than an awaited <c>ReceiveFromAsync</c> loop: when the socket's queue
/// runs dry an awaited receive parks in the runtime's event loop and resumes on a thread-pool thread, a hand-off
/// per burst; the blocking call wakes its own thread. The measurements that chose it are in issue 11 of
/// benchmarks/RESULTS.md. Disposing the socket interrupts the blocking call, which ends the thread.
/// </remarks>
public sealed class UdpTransport : IDatagramTransport
{
    // Bounds of the address caches: a peer that sprays source ports cannot grow them without limit.
    private const int AddressCacheCapacity = 4096;

    private readonly Socket _socket;
    private readonly int _receiveBufferSize;
    private readonly ConcurrentDictionary<IPEndPoint, SocketAddress> _sendAddresses = new();
    private Task? _receiveLoop;
    private int _disposed;

    /// <summary>Binds a socket to <paramref name="localEndPoint"/>, set up as <paramref name="options"/> say.</summary>
    /// <param name="localEndPoint">
    /// Where to bind; null for [::]:5683. [::] binds a dual-stack socket that serves IPv4 and IPv6 where the OS allows,
    /// and IPv4 only where it has no IPv6; port 0 picks a free one.
    /// </param>
    /// <param name="options">Buffer sizes; null for the defaults.</param>
    /// <exception cref="ArgumentException">A buffer size is out of range; the message names it.</exception>
    /// <exception cref="CoapBindException">The address cannot be bound (in use, not local, ...); the message names it.</exception>
    public UdpTransport(IPEndPoint? localEndPoint = null, UdpTransportOptions? options = null)
    {
        options ??= new UdpTransportOptions();
        options.Validate();
        _receiveBufferSize = options.ReceiveBufferSize;

        IPEndPoint bind = localEndPoint ?? new IPEndPoint(IPAddress.IPv6Any, UdpTransportOptions.DefaultPort);
        _socket = SocketEndPoints.Create(ref bind, SocketType.Dgram, ProtocolType.Udp);
        try
        {
            if (options.SocketReceiveBufferSize is int receive)
            {
                _socket.ReceiveBufferSize = receive;
            }

            if (options.SocketSendBufferSize is int send)
            {
                _socket.SendBufferSize = send;
            }

            SocketEndPoints.Bind(_socket, bind, Channels.CoapPeer.UdpScheme);
        }
        catch
        {
            _socket.Dispose();
            throw;
        }

        LocalEndPoint = SocketEndPoints.Normalize((IPEndPoint)_socket.LocalEndPoint!);
    }

    /// <inheritdoc/>
    public IPEndPoint LocalEndPoint { get; }

    /// <summary>The socket's kernel receive buffer as the OS reports it (Linux reports twice what was set), for tests.</summary>
    internal int SocketReceiveBufferSize => _socket.ReceiveBufferSize;

    /// <summary>The socket's kernel send buffer as the OS reports it, for tests.</summary>
    internal int SocketSendBufferSize => _socket.SendBufferSize;

    /// <inheritdoc/>
    public void Start(IDatagramReceiver receiver)
    {
        ArgumentNullException.ThrowIfNull(receiver);
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        if (Interlocked.CompareExchange(ref _receiveLoop, Task.CompletedTask, null) is not null)
        {
            throw new InvalidOperationException("The transport is already started.");
        }

        TaskCompletionSource ended = new(TaskCreationOptions.RunContinuationsAsynchronously);
        _receiveLoop = ended.Task;
        new Thread(() =>
        {
            try
            {
                ReceiveLoop(receiver);
                ended.TrySetResult();
            }
            catch (Exception e)
            {
                // As a faulted receive task did before: the loop ends, and closing the transport observes why.
                ended.TrySetException(e);
            }
        })
        {
            IsBackground = true,
            Name = "CoapNet UDP receive",
        }.Start();
    }

    /// <inheritdoc/>
    public void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        _socket.SendTo(datagram, SocketFlags.None, GetSocketAddress(remote));
    }

    /// <inheritdoc/>
    public async ValueTask SendAsync(ReadOnlyMemory<byte> datagram, IPEndPoint remote, CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        await _socket.SendToAsync(datagram, SocketFlags.None, GetSocketAddress(remote), cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Closes the socket; a pending receive completes and the receive loop ends.</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        _socket.Dispose();
        try
        {
            _receiveLoop?.Wait(TimeSpan.FromSeconds(5));
        }
        catch (AggregateException)
        {
            // The loop ends by its receive being aborted; nothing to report.
        }
    }

    /// <summary>Closes the socket and waits for the receive loop to end.</summary>
    /// <returns>A task that completes when the transport is closed.</returns>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        _socket.Dispose();
        if (_receiveLoop is not null)
        {
            await _receiveLoop.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        }
    }

    private SocketAddress GetSocketAddress(IPEndPoint remote)
    {
        ArgumentNullException.ThrowIfNull(remote);
        if (_sendAddresses.TryGetValue(remote, out SocketAddress? address))
        {
            return address;
        }

        if (_sendAddresses.Count >= AddressCacheCapacity)
        {
            _sendAddresses.Clear();
        }

        // The SocketAddress overloads need the socket's own family: IPv4 destinations of a dual-stack socket are mapped.
        IPEndPoint target = _socket.AddressFamily == AddressFamily.InterNetworkV6 && remote.AddressFamily == AddressFamily.InterNetwork
            ? new IPEndPoint(remote.Address.MapToIPv6(), remote.Port)
            : remote;
        address = target.Serialize();
        _sendAddresses[remote] = address;
        return address;
    }

    /// <summary>Set before the socket is closed, so the receive it interrupts is known to be the shutdown.</summary>
    private bool Stopping => Volatile.Read(ref _disposed) != 0;

    private void ReceiveLoop(IDatagramReceiver receiver)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(_receiveBufferSize);
        SocketAddress received = new(_socket.AddressFamily);
        IPEndPoint template = _socket.AddressFamily == AddressFamily.InterNetworkV6 ? new IPEndPoint(IPAddress.IPv6Any, 0) : new IPEndPoint(IPAddress.Any, 0);
        Dictionary<SocketAddress, IPEndPoint> peers = [];
        try
        {
            while (!Stopping)
            {
                int length;
                try
                {
                    length = _socket.ReceiveFrom(buffer, SocketFlags.None, received);
                }
                catch (SocketException e) when (e.SocketErrorCode is SocketError.ConnectionReset or SocketError.MessageSize && !Stopping)
                {
                    // ICMP port unreachable from an earlier send (Windows) or an oversized datagram: keep serving.
                    continue;
                }

                if (!peers.TryGetValue(received, out IPEndPoint? remote))
                {
                    if (peers.Count >= AddressCacheCapacity)
                    {
                        peers.Clear();
                    }

                    SocketAddress key = new(received.Family, received.Size);
                    received.Buffer.Span[..received.Size].CopyTo(key.Buffer.Span);
                    remote = SocketEndPoints.Normalize((IPEndPoint)template.Create(key));
                    peers[key] = remote;
                }

                try
                {
                    receiver.OnDatagram(buffer.AsSpan(0, length), remote);
                }
                catch (Exception e) when (e is not (OutOfMemoryException or OperationCanceledException or ObjectDisposedException))
                {
                    // A receiver must not throw; if one does, that datagram is lost but the socket keeps serving.
                }
            }
        }
        catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException || (e is SocketException && Stopping))
        {
            // Shutdown: the socket was closed under the pending receive.
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }
}
