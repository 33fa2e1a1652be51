using System.Buffers;
using System.Net;
using System.Net.Sockets;

namespace CoapNet.Transports;

/// <summary>
/// One connected TCP socket as a duplex pipe: the receive pump copies the socket into the input pipe and the send pump
/// copies the output pipe into the socket, each bounded (<see cref="PumpedConnection"/>).
/// </summary>
internal sealed class SocketConnection : PumpedConnection
{
    private readonly Socket _socket;
    private readonly CancellationTokenSource _closed = new();

    private SocketConnection(Socket socket, TcpTransportOptions options)
        : base(options)
    {
        _socket = socket;
        RemoteEndPoint = SocketEndPoints.Normalize((IPEndPoint)socket.RemoteEndPoint!);
        LocalEndPoint = SocketEndPoints.Normalize((IPEndPoint)socket.LocalEndPoint!);
        StartPumps();
    }

    /// <inheritdoc/>
    public override IPEndPoint RemoteEndPoint { get; }

    /// <inheritdoc/>
    public override IPEndPoint LocalEndPoint { get; }

    /// <inheritdoc/>
    public override CancellationToken ConnectionClosed => _closed.Token;

    /// <summary>Wraps a connected socket; from now on the connection owns it.</summary>
    public static SocketConnection Start(Socket socket, TcpTransportOptions options)
    {
        // CoAP messages are small and request/response: Nagle's delay would only add latency (RFC 8323 leaves framing to the stream).
        socket.NoDelay = true;
        return new SocketConnection(socket, options);
    }

    /// <inheritdoc/>
    protected override ValueTask<int> ReadBelowAsync(Memory<byte> buffer) => _socket.ReceiveAsync(buffer, SocketFlags.None);

    /// <inheritdoc/>
    protected override async ValueTask WriteBelowAsync(ReadOnlySequence<byte> buffer)
    {
        foreach (ReadOnlyMemory<byte> segment in buffer)
        {
            int offset = 0;
            while (offset < segment.Length)
            {
                offset += await _socket.SendAsync(segment[offset..], SocketFlags.None).ConfigureAwait(false);
            }
        }
    }

    /// <inheritdoc/>
    protected override ValueTask FinishSendingAsync()
    {
        _socket.Shutdown(SocketShutdown.Send);
        return ValueTask.CompletedTask;
    }

    /// <inheritdoc/>
    protected override void CloseBelow(Exception reason) => _socket.Dispose();

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
