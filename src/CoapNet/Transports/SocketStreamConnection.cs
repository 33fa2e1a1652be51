using System.Net;
using System.Net.Sockets;

namespace CoapNet.Transports;

/// <summary>
/// One connected TCP socket as a duplex pipe (<see cref="PumpedConnection"/>): what every way of moving its bytes shares,
/// its endpoints, its end of sending, its close and its errors. A subclass reads and writes it.
/// </summary>
internal abstract class SocketStreamConnection : PumpedConnection
{
    private readonly CancellationTokenSource _closed = new();

    /// <summary>Takes <paramref name="socket"/>, connected.</summary>
    protected SocketStreamConnection(Socket socket, TcpTransportOptions options)
        : base(options)
    {
        Socket = socket;
        RemoteEndPoint = SocketEndPoints.Normalize((IPEndPoint)socket.RemoteEndPoint!);
        LocalEndPoint = SocketEndPoints.Normalize((IPEndPoint)socket.LocalEndPoint!);
    }

    /// <inheritdoc/>
    public override IPEndPoint RemoteEndPoint { get; }

    /// <inheritdoc/>
    public override IPEndPoint LocalEndPoint { get; }

    /// <inheritdoc/>
    public override CancellationToken ConnectionClosed => _closed.Token;

    /// <summary>The socket; the connection owns it.</summary>
    protected Socket Socket { get; }

    /// <summary>Wraps a connected socket; from now on the connection owns it.</summary>
    /// <remarks>
    /// On Linux the connection's pumps run on an <see cref="EpollLoop"/> (<see cref="EpollConnection"/>); elsewhere on
    /// <see cref="System.Net.Sockets.Socket"/>'s own asynchronous calls (<see cref="SocketConnection"/>).
    /// </remarks>
    /// <exception cref="SocketException">The kernel refused to watch the socket.</exception>
    public static SocketStreamConnection Start(Socket socket, TcpTransportOptions options)
    {
        // CoAP messages are small and request/response: Nagle's delay would only add latency (RFC 8323 leaves framing to the stream).
        socket.NoDelay = true;
        return EpollLoop.IsAvailable ? new EpollConnection(socket, options) : new SocketConnection(socket, options);
    }

    /// <inheritdoc/>
    protected override ValueTask FinishSendingAsync()
    {
        Socket.Shutdown(SocketShutdown.Send);
        return ValueTask.CompletedTask;
    }

    /// <inheritdoc/>
    protected override async Task CloseAsync(Task receiving, Task sending)
    {
        // The send pump shut the socket down for sending after the last byte; closing it ends the receive pump.
        Abort(new IOException("The connection was closed."));
        await Task.WhenAll(receiving, sending).ConfigureAwait(false);
    }

    /// <inheritdoc/>
    protected override IOException Describe(Exception exception) => new(exception.Message, exception);

    /// <inheritdoc/>
    protected override bool IsConnectionFailure(Exception exception) => exception is SocketException or ObjectDisposedException;

    /// <inheritdoc/>
    protected override void OnAborted() => SignalClosed();

    /// <inheritdoc/>
    protected override void OnReceiveEnded() => SignalClosed();

    private void SignalClosed()
    {
        try
        {
            _closed.Cancel();
        }
        catch (ObjectDisposedException)
        {
        }
    }
}
