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

    [ThreadStatic]
    private static bool t_inBatch;

    [ThreadStatic]
    private static bool t_hasBatchClock;

    [ThreadStatic]
    private static long t_batchClock;

    /// <summary>
    /// The end of the last handler call that ran inline on this thread in the batch of received work it is delivering, by
    /// the server's clock, which the server takes as the start of the next inline call: then it reads the clock once a
    /// quick call, not twice (issue 39). What passes between two calls is the next message's own parsing and stages,
    /// microseconds against the inline gate's millisecond. None outside a batch, where the thread may wait before its next
    /// call and a wait must not count as a handler's time, nor in a batch before its first call.
    /// </summary>
    /// <param name="reading">The reading.</param>
    /// <returns>True with a reading.</returns>
    internal static bool TryGetBatchClock(out long reading)
    {
        reading = t_batchClock;
        return t_hasBatchClock;
    }

    /// <summary>Keeps <paramref name="reading"/> for the batch's next call (<see cref="TryGetBatchClock"/>); nothing outside a batch.</summary>
    internal static void SetBatchClock(long reading)
    {
        if (t_inBatch)
        {
            t_batchClock = reading;
            t_hasBatchClock = true;
        }
    }

    /// <summary>
    /// A receive loop starts a batch of work on the calling thread: after a wait, before any of the batch's calls, so no
    /// reading taken before the wait is taken for a start. A UDP receive thread calls it before each receive; a stream
    /// connection's read loop enters each batch with <see cref="EnterBatch"/> instead.
    /// </summary>
    internal static void StartBatch()
    {
        t_inBatch = true;
        t_hasBatchClock = false;
    }

    /// <summary>Ends the calling thread's batch: its calls read the clock for their start again.</summary>
    internal static void EndBatch()
    {
        t_inBatch = false;
        t_hasBatchClock = false;
    }

    /// <summary>Makes this the calling thread's context until the returned scope is disposed.</summary>
    public Scope Enter()
    {
        ReceiveContext? previous = t_current;
        t_current = this;
        return new Scope(previous, batch: false);
    }

    /// <summary>
    /// Makes this the calling thread's context for one batch of work (<see cref="StartBatch"/>), until the returned scope is
    /// disposed, which ends the batch: a thread that goes on to other work then reads the clock for its calls again.
    /// </summary>
    public Scope EnterBatch()
    {
        Scope scope = new(t_current, batch: true);
        t_current = this;
        StartBatch();
        return scope;
    }

    /// <summary>Restores the thread's previous context, and ends the batch it entered, if it entered one.</summary>
    public readonly struct Scope(ReceiveContext? previous, bool batch) : IDisposable
    {
        /// <inheritdoc/>
        public void Dispose()
        {
            t_current = previous;
            if (batch)
            {
                EndBatch();
            }
        }
    }
}
