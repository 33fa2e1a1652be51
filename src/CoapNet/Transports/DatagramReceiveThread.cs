namespace CoapNet.Transports;

/// <summary>
/// What the thread that is delivering a datagram can tell the layers above about its socket, so a receiver may do the
/// datagram's work on that thread instead of handing it to another (the server runs a quick handler there while its
/// pipeline is idle). Set only on a transport's own receive thread, for the duration of its receive loop; null on any
/// other thread, where nothing should run inline.
/// </summary>
/// <remarks>
/// Ambient rather than a parameter of <see cref="IDatagramReceiver.OnDatagram(ReadOnlySpan{byte}, System.Net.IPEndPoint)"/>:
/// the datagram passes the channels, the message layer, the exchange layer and the stages before anything asks, and a
/// secure transport decrypts on its inner socket's receive thread, so the answer belongs to that thread, not to the call.
/// A transport sets it only for a receiver that allows it (<see cref="IDatagramReceiver.SupportsInlineWork"/>, the public
/// contract), and then also keeps the socket served when a receiver call does not return (<see cref="UdpTransport"/> hands
/// the socket to a new thread), which is what makes running work there safe. It stays inside the library: only its own
/// UDP transport gives that guarantee, and only its own server reads it.
/// </remarks>
internal abstract class DatagramReceiveThread
{
    [ThreadStatic]
    private static DatagramReceiveThread? t_current;

    /// <summary>The receive context of the calling thread; null when it is not a transport's receive thread.</summary>
    public static DatagramReceiveThread? Current => t_current;

    /// <summary>
    /// True when the datagram's work is better handed to another thread: more datagrams already wait on the socket and
    /// another processor can run the work beside the next receive. False on an empty socket, where this thread would
    /// only sleep until the next datagram, and with one processor, where a hand-off adds a switch and no parallelism.
    /// </summary>
    public abstract bool HandOff { get; }

    /// <summary>Makes this the calling thread's context until the returned scope is disposed.</summary>
    public Scope Enter()
    {
        DatagramReceiveThread? previous = t_current;
        t_current = this;
        return new Scope(previous);
    }

    /// <summary>Restores the thread's previous context.</summary>
    public readonly struct Scope(DatagramReceiveThread? previous) : IDisposable
    {
        /// <inheritdoc/>
        public void Dispose() => t_current = previous;
    }
}
