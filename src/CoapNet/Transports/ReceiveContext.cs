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

    // The clock t_batchClock was read from; null for no reading.
    [ThreadStatic]
    private static TimeProvider? t_batchClockSource;

    [ThreadStatic]
    private static long t_batchClock;

    /// <summary>
    /// The last reading of the clock on this thread in the batch of received work it is delivering: the end of the last
    /// handler call that ran inline, or the datagram message layer's reading for the request on its way up. The server
    /// takes it as the start of the next inline call, and the message layer as a request's arrival, so a quick request
    /// reads the clock once, not three times (issue 39). What passes between two readings is a message's own parsing and
    /// stages, microseconds against the inline gate's millisecond and lifetimes of minutes. None outside a batch, where
    /// the thread may wait before its next call and a wait must not count as a handler's time, nor before the batch's
    /// first reading.
    /// </summary>
    /// <param name="clock">The clock the caller reads: a reading from another (an endpoint with a clock of its own) is none.</param>
    /// <param name="reading">The reading.</param>
    /// <returns>True with a reading of <paramref name="clock"/>.</returns>
    internal static bool TryGetBatchClock(TimeProvider clock, out long reading)
    {
        reading = t_batchClock;
        return ReferenceEquals(t_batchClockSource, clock);
    }

    /// <summary>Keeps <paramref name="reading"/> of <paramref name="clock"/> for the batch's next call (<see cref="TryGetBatchClock"/>); nothing outside a batch.</summary>
    internal static void SetBatchClock(TimeProvider clock, long reading)
    {
        if (t_inBatch)
        {
            t_batchClock = reading;
            t_batchClockSource = clock;
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
        t_batchClockSource = null;
    }

    /// <summary>Ends the calling thread's batch: its calls read the clock for their start again.</summary>
    internal static void EndBatch()
    {
        t_inBatch = false;
        t_batchClockSource = null;
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
