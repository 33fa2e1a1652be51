using System.Buffers;
using System.Net.Sockets;

namespace CoapNet.Transports;

/// <summary>
/// One connected TCP socket as a duplex pipe over <see cref="System.Net.Sockets.Socket"/>'s asynchronous calls: the receive
/// pump copies the socket into the input pipe and the send pump copies the output pipe into the socket, each bounded
/// (<see cref="PumpedConnection"/>). Where <see cref="EpollLoop"/> is not available (any OS but Linux).
/// </summary>
internal sealed class SocketConnection : SocketStreamConnection
{
    /// <summary>Wraps a connected socket and starts the pumps; use <see cref="SocketStreamConnection.Start"/>.</summary>
    internal SocketConnection(Socket socket, TcpTransportOptions options)
        : base(socket, options)
    {
        StartPumps();
    }

    /// <inheritdoc/>
    protected override ValueTask<int> ReadBelowAsync(Memory<byte> buffer) => Socket.ReceiveAsync(buffer, SocketFlags.None);

    /// <inheritdoc/>
    protected override async ValueTask WriteBelowAsync(ReadOnlySequence<byte> buffer)
    {
        foreach (ReadOnlyMemory<byte> segment in buffer)
        {
            int offset = 0;
            while (offset < segment.Length)
            {
                offset += await Socket.SendAsync(segment[offset..], SocketFlags.None).ConfigureAwait(false);
            }
        }
    }

    /// <inheritdoc/>
    protected override void CloseBelow(Exception reason) => Socket.Dispose();
}
