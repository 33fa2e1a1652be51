namespace CoapNet.Transports;

/// <summary>
/// What the thread that is delivering received bytes can tell the layers above about where they came from, so a receiver
/// may do their work on that thread instead of handing it to another (the server runs a quick handler there while its
/// pipeline is idle). Set only on a transport's own receive thread for the duration of its receive loop, and on a stream
/// connection's read loop while it handles the frames of one read; null on any other thread, where nothing should run
/// inline.
/// </summary>
/// <remarks>
/// Ambient rather than a parameter of <see cref="IDatagramReceiver.OnDatagram(ReadOnlySpan{byte}, System.Net.IPEndPoint)"/>:
/// a message passes the channels, the message layer, the exchange layer and the stages before anything asks, and a
/// secure transport decrypts on its inner socket's receive thread, so the answer belongs to that thread, not to the call.
/// A UDP transport sets it only for a receiver that allows it (<see cref="IDatagramReceiver.SupportsInlineWork"/>, the
/// public contract), and then also keeps the socket served when a receiver call does not return (<see cref="UdpTransport"/>
/// hands the socket to a new thread); a stream connection's read loop likewise hands the connection to a new read loop
/// when one message's call does not return (<c>StreamConnection</c>). That is what makes running work there safe. It
/// stays inside the library: only its own transports and connection layer give that guarantee, and only its own server
/// reads it.
/// </remarks>
internal abstract class ReceiveContext
{
    /// <summary>
    /// How often the watchdogs look: a receive thread or read loop found inside the same call at two looks in a row (so
    /// for 25-50 ms) hands its socket or connection to a new one. The watchdogs tick only while calls run.
    /// </summary>
    internal static readonly TimeSpan StallCheckInterval = TimeSpan.FromMilliseconds(25);

    /// <summary>The most threads that serve one socket, or read loops one connection: the one receiving and those still inside a call that stalled.</summary>
    internal const int MaxThreads = 17;

    [ThreadStatic]
    private static ReceiveContext? t_current;

    /// <summary>The receive context of the calling thread; null when it is neither a transport's receive thread nor a read loop handling frames.</summary>
    public static ReceiveContext? Current => t_current;

    /// <summary>
    /// True when the received work is better handed to another thread: on a UDP socket, more datagrams already wait and
    /// another processor can run the work beside the next receive. False on an empty socket, where this thread would
    /// only sleep until the next datagram, and with one processor, where a hand-off adds a switch and no parallelism.
    /// A stream connection's read loop says false: its frames are handled in order anyway, and the parallelism of a
    /// server with many connections is their read loops.
    /// </summary>
    public abstract bool HandOff { get; }

    /// <summary>Makes this the calling thread's context until the returned scope is disposed.</summary>
    public Scope Enter()
    {
        ReceiveContext? previous = t_current;
        t_current = this;
        return new Scope(previous);
    }

    /// <summary>Restores the thread's previous context.</summary>
    public readonly struct Scope(ReceiveContext? previous) : IDisposable
    {
        /// <inheritdoc/>
        public void Dispose() => t_current = previous;
    }
}
