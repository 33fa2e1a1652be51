using System.IO.Pipelines;
using System.Net;

namespace CoapNet.Transports;

/// <summary>
/// One byte stream to a peer (a TCP connection, later a TLS session or a WebSocket), handed up by a
/// connection transport that knows nothing of CoAP. The protocol layers read and write its
/// <see cref="Transport"/> pipe; the transport moves the bytes between the pipe and the socket.
/// </summary>
/// <remarks>
/// The transport bounds what it buffers in both directions: when the peer stops reading, writes to
/// <see cref="Transport"/> stop completing their flush instead of buffering without limit.
/// </remarks>
public abstract class TransportConnection : IAsyncDisposable
{
    /// <summary>The duplex pipe: read what the peer sent from its input, write what to send to its output.</summary>
    public abstract IDuplexPipe Transport { get; }

    /// <summary>The peer's endpoint.</summary>
    public abstract IPEndPoint RemoteEndPoint { get; }

    /// <summary>This side's endpoint.</summary>
    public abstract IPEndPoint LocalEndPoint { get; }

    /// <summary>
    /// The session a secure transport established on this connection (TLS, RFC 8323 section 9.1) and the identity it
    /// authenticated for the peer; null on a plain one. The connection layer makes it part of the connection's
    /// <see cref="Channels.CoapPeer"/>, so handlers read it as <c>request.Peer.Identity</c>.
    /// </summary>
    public virtual Channels.CoapSecurityContext? SecurityContext => null;

    /// <summary>Completes when the connection is closed, by either side or by <see cref="Abort"/>.</summary>
    public abstract CancellationToken ConnectionClosed { get; }

    /// <summary>Closes the connection at once, without flushing what is buffered; pending reads and writes end.</summary>
    /// <param name="reason">Why, for the log and for the readers of the pipe; null for no particular reason.</param>
    public abstract void Abort(Exception? reason = null);

    /// <summary>Flushes what was written, closes the connection gracefully and releases its resources.</summary>
    /// <returns>A task that completes when the connection is closed.</returns>
    public abstract ValueTask DisposeAsync();
}
