using System.Net;
using System.Net.Sockets;
using CoapNet.Channels;

namespace CoapNet.Transports;

/// <summary>
/// Accepts TCP connections on a local endpoint and hands each up as a <see cref="TransportConnection"/>
/// (scheme "coap+tcp", RFC 8323). Knows nothing of CoAP.
/// </summary>
public sealed class TcpConnectionListener : IConnectionListener
{
    /// <summary>The IANA port of coap+tcp (RFC 8323 section 8.1).</summary>
    public const int DefaultPort = 5683;

    private readonly Socket _socket;
    private readonly TcpTransportOptions _options;
    private int _disposed;

    /// <summary>Binds and listens on <paramref name="endPoint"/>.</summary>
    /// <param name="endPoint">
    /// The local endpoint; port 0 picks a free one (see <see cref="LocalEndPoint"/>). Null for [::]:5683,
    /// dual-stack like <see cref="UdpTransport"/>, or 0.0.0.0:5683 where the OS has no IPv6.
    /// </param>
    /// <param name="options">Buffering bounds; null for the defaults.</param>
    /// <param name="backlog">The queue of connections the OS completes before they are accepted.</param>
    /// <exception cref="ArgumentOutOfRangeException">An option or the backlog is out of range.</exception>
    /// <exception cref="CoapBindException">The endpoint cannot be bound (in use, not local, ...); the message names it.</exception>
    public TcpConnectionListener(IPEndPoint? endPoint = null, TcpTransportOptions? options = null, int backlog = 512)
    {
        _options = options ?? new TcpTransportOptions();
        _options.Validate();
        ArgumentOutOfRangeException.ThrowIfLessThan(backlog, 1);
        endPoint ??= new IPEndPoint(IPAddress.IPv6Any, DefaultPort);
        _socket = SocketEndPoints.Create(ref endPoint, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            SocketEndPoints.Bind(_socket, endPoint, CoapPeer.TcpScheme);
            _socket.Listen(backlog);
        }
        catch
        {
            _socket.Dispose();
            throw;
        }

        LocalEndPoint = SocketEndPoints.Normalize((IPEndPoint)_socket.LocalEndPoint!);
    }

    /// <inheritdoc/>
    public string Scheme => CoapPeer.TcpScheme;

    /// <inheritdoc/>
    public IPEndPoint LocalEndPoint { get; }

    /// <inheritdoc/>
    public async ValueTask<TransportConnection?> AcceptAsync(CancellationToken cancellationToken = default)
    {
        while (true)
        {
            Socket accepted;
            try
            {
                accepted = await _socket.AcceptAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (ObjectDisposedException)
            {
                return null;
            }
            catch (SocketException) when (Volatile.Read(ref _disposed) != 0)
            {
                return null;
            }
            catch (SocketException exception) when (exception.SocketErrorCode is SocketError.ConnectionReset or SocketError.ConnectionAborted)
            {
                // A client that gave up between the handshake and the accept concerns nobody else.
                continue;
            }

            try
            {
                return SocketStreamConnection.Start(accepted, _options);
            }
            catch (SocketException)
            {
                // Gone before we could read its endpoints, or the kernel would not watch it (out of memory or descriptors).
                accepted.Dispose();
            }
        }
    }

    /// <summary>Stops listening; a pending <see cref="AcceptAsync"/> returns null. Accepted connections stay open.</summary>
    /// <returns>A completed task.</returns>
    public ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            _socket.Dispose();
        }

        return ValueTask.CompletedTask;
    }
}
