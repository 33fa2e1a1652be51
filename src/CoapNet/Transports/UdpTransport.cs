using System.Buffers;
using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace CoapNet.Transports;

/// <summary>
/// A UDP endpoint: one socket bound to one local endpoint (or, with <see cref="UdpTransportOptions.ReceiveSockets"/>
/// on Linux, several sharing it). Each socket receives on a thread of its own with blocking calls and the
/// allocation-free <see cref="SocketAddress"/> overloads into one pooled buffer; a known peer costs no
/// allocation per datagram.
/// </summary>
/// <remarks>
/// A blocking receive thread rather than an awaited <c>ReceiveFromAsync</c> loop: when the socket's queue
/// runs dry an awaited receive parks in the runtime's event loop and resumes on a thread-pool thread, a hand-off
/// per burst; the blocking call wakes its own thread. The measurements that chose it are in issue 11 of
/// benchmarks/RESULTS.md. Disposing the socket interrupts the blocking call, which ends the thread.
/// <para>
/// The layers above may do a datagram's work on the receive thread (<see cref="ReceiveContext"/>, offered
/// only to a receiver whose <see cref="IDatagramReceiver.SupportsInlineWork"/> is true), so a receiver call that does not return must not leave the socket unserved: a watchdog, armed while datagrams arrive,
/// hands a socket whose receiver has been inside one call for a whole check interval (25-50 ms) to a new receive
/// thread, and the old one ends when its call returns. At most <see cref="MaxThreadsPerSocket"/> threads serve a
/// socket, the stuck ones included.
/// </para>
/// </remarks>
public sealed class UdpTransport : IDatagramTransport
{
    // Bounds of the address caches: a peer that sprays source ports cannot grow them without limit. A full cache keeps
    // what it holds and serves the rest without caching: emptied and refilled, it would turn over on every datagram of a
    // fleet of more peers than it holds, an allocation each that lives a while and dies (issue 41).
    private const int AddressCacheCapacity = 4096;

    // The destination of a send to a peer the full cache does not hold, written afresh for each: Send uses it only
    // during the call (a held datagram's batch copies the address).
    [ThreadStatic]
    private static SocketAddress? t_sendAddressV4;
    [ThreadStatic]
    private static SocketAddress? t_sendAddressV6;

    // SOL_SOCKET and SO_REUSEPORT on Linux (asm-generic/socket.h); .NET has no name for the latter.
    private const int SolSocket = 1;
    private const int SoReusePort = 15;

    // A thread inside one receiver call for a whole interval hands its socket over; the watchdog ticks only while
    // datagrams arrive, so an idle transport has no timer running.
    private static readonly TimeSpan StallCheckInterval = ReceiveContext.StallCheckInterval;

    private readonly Socket _socket;
    private readonly Socket[] _receivers;
    private readonly int _receiveBufferSize;
    private readonly ConcurrentDictionary<IPEndPoint, SocketAddress> _sendAddresses = new();

    // How many _sendAddresses holds (it only grows): ConcurrentDictionary.Count takes every lock of the table, which at a
    // fleet's size (every send past the cache asks) was the top managed frame of a send (issue 41).
    private int _sendAddressCount;

    // The socket whose batch of received datagrams the calling thread is delivering: sends made meanwhile are held and
    // leave together when the batch is done (NativeSendBatch).
    [ThreadStatic]
    private static ReceiveSocket? t_holding;

    // The sender of the datagram the calling receive thread delivers, with its address as received (the peer cache's key,
    // never changed): the answer of a handler run on this thread goes to it without a lookup in _sendAddresses (issue 39).
    [ThreadStatic]
    private static LastSender? t_lastSender;
    private readonly object _watchGate = new();
    private ReceiveSocket[] _receiving = [];
    private int _watching;
    private Task? _receiveLoop;
    private int _disposed;

    /// <summary>The most threads that serve one socket: the one receiving and those still inside a receiver call that stalled.</summary>
    internal const int MaxThreadsPerSocket = ReceiveContext.MaxThreads;

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
        int count = OperatingSystem.IsLinux() ? options.ReceiveSockets : 1;
        _receivers = new Socket[count];
        try
        {
            for (int i = 0; i < count; i++)
            {
                // The first socket takes the port (a free one for port 0); the others share exactly that one.
                _receivers[i] = Open(ref bind, options, shared: count > 1);
                if (i == 0)
                {
                    bind = new IPEndPoint(bind.Address, ((IPEndPoint)_receivers[0].LocalEndPoint!).Port);
                }
            }
        }
        catch
        {
            foreach (Socket? socket in _receivers)
            {
                socket?.Dispose();
            }

            throw;
        }

        _socket = _receivers[0];
        LocalEndPoint = SocketEndPoints.Normalize((IPEndPoint)_socket.LocalEndPoint!);
    }

    /// <summary>How many sockets receive (more than one only on Linux, as <see cref="UdpTransportOptions.ReceiveSockets"/> asks).</summary>
    internal int ReceiveSocketCount => _receivers.Length;

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

        Task[] loops = new Task[_receivers.Length];
        ReceiveSocket[] receiving = new ReceiveSocket[_receivers.Length];
        for (int i = 0; i < _receivers.Length; i++)
        {
            receiving[i] = new ReceiveSocket(this, _receivers[i], receiver, _receivers.Length == 1 ? "CoapNet UDP receive" : $"CoapNet UDP receive {i}");
            loops[i] = receiving[i].Ended;
        }

        _receiving = receiving;

        // A thread of its own rather than a timer: a timer's callback wakes a thread-pool worker, which then spins
        // (yielding the core to the receive thread and back, dozens of times on one core) before it sleeps again, about
        // 1-2% of a loaded one-core server's time at 40 ticks a second (issue 25). This thread sleeps while no datagram arrives.
        new Thread(static state => ((UdpTransport)state!).WatchLoop())
        {
            IsBackground = true,
            Name = "CoapNet UDP watchdog",
        }.Start(this);
        foreach (ReceiveSocket socket in receiving)
        {
            StartThread(socket);
        }

        _receiveLoop = loops.Length == 1 ? loops[0] : Task.WhenAll(loops);
    }

    /// <inheritdoc/>
    public void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        // A null remote never matches: the last sender has an address exactly when it has an endpoint.
        SocketAddress address = t_lastSender is { Address: { } cached } last && ReferenceEquals(last.Remote, remote) && ReferenceEquals(last.Transport, this)
            ? cached
            : GetSocketAddress(remote, scratch: true);
        if (t_holding is { } holding && ReferenceEquals(holding.Transport, this) && holding.TryHold(datagram, address))
        {
            return;
        }

        if (!NativeDatagram.IsAvailable || !NativeDatagram.TrySendTo(_socket, datagram, address))
        {
            _socket.SendTo(datagram, SocketFlags.None, address);
        }
    }

    /// <inheritdoc/>
    public async ValueTask SendAsync(ReadOnlyMemory<byte> datagram, IPEndPoint remote, CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        await _socket.SendToAsync(datagram, SocketFlags.None, GetSocketAddress(remote, scratch: false), cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Closes the socket; a pending receive completes and the receive loop ends.</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        CloseSockets();
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

        CloseSockets();
        if (_receiveLoop is not null)
        {
            await _receiveLoop.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        }
    }

    /// <param name="remote">The destination.</param>
    /// <param name="scratch">The caller uses the address only during a synchronous call, so one the cache does not hold may be this thread's.</param>
    private SocketAddress GetSocketAddress(IPEndPoint remote, bool scratch)
    {
        ArgumentNullException.ThrowIfNull(remote);
        if (_sendAddresses.TryGetValue(remote, out SocketAddress? address))
        {
            return address;
        }

        // The SocketAddress overloads need the socket's own family: IPv4 destinations of a dual-stack socket are mapped.
        bool mapped = _socket.AddressFamily == AddressFamily.InterNetworkV6 && remote.AddressFamily == AddressFamily.InterNetwork;
        bool full = Volatile.Read(ref _sendAddressCount) >= AddressCacheCapacity;
        if (full && scratch)
        {
            return WriteScratch(remote, mapped);
        }

        address = (mapped ? new IPEndPoint(remote.Address.MapToIPv6(), remote.Port) : remote).Serialize();
        // Racing threads may each add one past the capacity: the bound holds within the number of sending threads.
        if (!full && _sendAddresses.TryAdd(remote, address))
        {
            Interlocked.Increment(ref _sendAddressCount);
        }

        return address;
    }

    /// <summary>
    /// <paramref name="remote"/> written into this thread's scratch address: the port and address at the offsets every
    /// platform's sockaddr_in and sockaddr_in6 share (the constructor writes the family the platform's way).
    /// </summary>
    private static SocketAddress WriteScratch(IPEndPoint remote, bool mapped)
    {
        IPAddress address = remote.Address;
        if (address.AddressFamily == AddressFamily.InterNetwork && !mapped)
        {
            SocketAddress v4 = t_sendAddressV4 ??= new SocketAddress(AddressFamily.InterNetwork);
            Span<byte> bytes = v4.Buffer.Span;
            BinaryPrimitives.WriteUInt16BigEndian(bytes[2..], (ushort)remote.Port);
            address.TryWriteBytes(bytes.Slice(4, 4), out _);
            return v4;
        }

        SocketAddress v6 = t_sendAddressV6 ??= new SocketAddress(AddressFamily.InterNetworkV6);
        Span<byte> six = v6.Buffer.Span;
        BinaryPrimitives.WriteUInt16BigEndian(six[2..], (ushort)remote.Port);
        six.Slice(4, 4).Clear(); // sin6_flowinfo
        if (mapped)
        {
            // ::ffff:a.b.c.d (RFC 4291 section 2.5.5.2).
            six.Slice(8, 10).Clear();
            six[18] = 0xFF;
            six[19] = 0xFF;
            address.TryWriteBytes(six.Slice(20, 4), out _);
            MemoryMarshal.Write(six.Slice(24, 4), 0u);
        }
        else
        {
            address.TryWriteBytes(six.Slice(8, 16), out _);
            MemoryMarshal.Write(six.Slice(24, 4), (uint)address.ScopeId);
        }

        return v6;
    }

    /// <summary>Set before the socket is closed, so the receive it interrupts is known to be the shutdown.</summary>
    private bool Stopping => Volatile.Read(ref _disposed) != 0;

    private static Socket Open(ref IPEndPoint bind, UdpTransportOptions options, bool shared)
    {
        Socket socket = SocketEndPoints.Create(ref bind, SocketType.Dgram, ProtocolType.Udp);
        try
        {
            if (options.SocketReceiveBufferSize is int receive)
            {
                socket.ReceiveBufferSize = receive;
            }

            if (options.SocketSendBufferSize is int send)
            {
                socket.SendBufferSize = send;
            }

            if (shared)
            {
                // Set on every socket before it binds: Linux then hashes each peer's address and port to one of them.
                socket.SetRawSocketOption(SolSocket, SoReusePort, BitConverter.GetBytes(1));
            }

            SocketEndPoints.Bind(socket, bind, Channels.CoapPeer.UdpScheme);
            return socket;
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    private void CloseSockets()
    {
        lock (_watchGate)
        {
            Monitor.PulseAll(_watchGate);
        }

        foreach (Socket socket in _receivers)
        {
            socket.Dispose();
        }
    }

    /// <summary>Starts a thread that receives on <paramref name="socket"/> as its owner from now on.</summary>
    private void StartThread(ReceiveSocket socket)
    {
        ReceiveThread thread = new();
        socket.Owner = thread;
        Interlocked.Increment(ref socket.Threads);
        new Thread(() =>
        {
            Exception? failed = null;
            try
            {
                ReceiveLoop(socket, thread);
            }
            catch (Exception e)
            {
                // As a faulted receive task did before: the loop ends, and closing the transport observes why.
                failed = e;
            }
            finally
            {
                socket.Exit(failed);
            }
        })
        {
            IsBackground = true,
            Name = socket.ThreadName,
        }.Start();
    }

    /// <summary>Arms the watchdog: a datagram arrived while it was stopped.</summary>
    private void Arm()
    {
        if (Interlocked.CompareExchange(ref _watching, 1, 0) == 0)
        {
            lock (_watchGate)
            {
                Monitor.Pulse(_watchGate);
            }
        }
    }

    /// <summary>The watchdog's thread: parked until a datagram arms it, then a check every interval until no call is in progress.</summary>
    private void WatchLoop()
    {
        while (true)
        {
            lock (_watchGate)
            {
                // The flag is read under the gate that Arm pulses under, so an arming between the read and the wait is not lost.
                while (Volatile.Read(ref _watching) == 0 && !Stopping)
                {
                    Monitor.Wait(_watchGate);
                }

                if (!Stopping)
                {
                    Monitor.Wait(_watchGate, StallCheckInterval);
                }
            }

            if (Stopping)
            {
                return;
            }

            CheckStalls();
        }
    }

    /// <summary>
    /// The watchdog's tick: a socket whose owner has been inside the same receiver call since the last tick gets a new
    /// receive thread; when no call is in progress the watchdog stops until the next datagram arms it again.
    /// </summary>
    private void CheckStalls()
    {
        bool busy = false;
        foreach (ReceiveSocket socket in _receiving)
        {
            ReceiveThread owner = socket.Owner!;
            long calls = Volatile.Read(ref owner.Calls);
            bool inCall = Volatile.Read(ref owner.InCall) != 0;
            if (inCall && calls == owner.CallsAtLastCheck && !Stopping)
            {
                // Answers held for the batch the stalled call belongs to go now, not when the call returns.
                socket.SendHeld();
                if (Volatile.Read(ref socket.Threads) < MaxThreadsPerSocket)
                {
                    StartThread(socket);
                    continue;
                }
            }

            owner.CallsAtLastCheck = calls;
            busy |= inCall;
        }

        if (busy)
        {
            return;
        }

        // The flag is cleared (a full fence) before the calls are looked at, as the receive thread marks its call before it
        // reads the flag: if a call began meanwhile, either that thread saw the flag cleared and armed, or it is seen here.
        Interlocked.Exchange(ref _watching, 0);
        foreach (ReceiveSocket socket in _receiving)
        {
            if (Volatile.Read(ref socket.Owner!.InCall) != 0)
            {
                Arm();
                break;
            }
        }
    }

    private void ReceiveLoop(ReceiveSocket receiving, ReceiveThread self)
    {
        Socket socket = receiving.Socket;
        IDatagramReceiver receiver = receiving.Receiver;
        bool inline = receiver.SupportsInlineWork;
        bool native = NativeDatagram.IsAvailable;
        using ReceiveContext.Scope scope = inline ? receiving.Enter() : default;
        using NativeReceiveBatch? batch = NativeReceiveBatch.IsAvailable ? new NativeReceiveBatch(_receiveBufferSize) : null;
        byte[]? buffer = null;
        SocketAddress received = new(socket.AddressFamily);
        IPEndPoint template = socket.AddressFamily == AddressFamily.InterNetworkV6 ? new IPEndPoint(IPAddress.IPv6Any, 0) : new IPEndPoint(IPAddress.Any, 0);
        Dictionary<SocketAddress, (IPEndPoint Remote, SocketAddress Address)> peers = [];

        // Only where the sending socket has the receiving one's family, so a received address is one it can send to.
        LastSender? last = socket.AddressFamily == _socket.AddressFamily ? (t_lastSender = new LastSender(this)) : null;
        try
        {
            while (!Stopping)
            {
                // Before the receive, which may wait: the calls of the datagrams it brings are timed from after it.
                ReceiveContext.StartBatch();
                try
                {
                    if (batch is not null && batch.TryReceive(socket))
                    {
                        int count = batch.Count;

                        // Answers to a batch of several leave together (one sendmmsg); a lone datagram's leaves at once,
                        // so a lightly loaded server's latency is what it was. Only for a receiver that works inline,
                        // whose calls the watchdog watches: it sends what a stalled call's batch holds.
                        bool hold = inline && count > 1 && receiving.CanHold;
                        if (hold)
                        {
                            t_holding = receiving;
                        }

                        try
                        {
                            for (int i = 0; i < count; i++)
                            {
                                // The rest of a batch is this thread's to deliver even when another took the socket over meanwhile.
                                receiving.Batched = count - 1 - i;
                                if (batch.TryGet(i, received, out ReadOnlySpan<byte> datagram))
                                {
                                    Deliver(self, receiver, inline, datagram, Resolve(received, peers, template, last));
                                }
                            }
                        }
                        finally
                        {
                            receiving.Batched = 0;
                            if (hold)
                            {
                                t_holding = null;
                                receiving.SendHeld();
                            }
                        }
                    }
                    else
                    {
                        buffer ??= ArrayPool<byte>.Shared.Rent(_receiveBufferSize);
                        int length;
                        if (!native || !NativeDatagram.TryReceiveFrom(socket, buffer, received, out length))
                        {
                            length = socket.ReceiveFrom(buffer, SocketFlags.None, received);
                        }
                        else if (length > buffer.Length)
                        {
                            // Cut to the buffer: dropped, as the Socket call reports MessageSize for it below.
                            continue;
                        }

                        Deliver(self, receiver, inline, buffer.AsSpan(0, length), Resolve(received, peers, template, last));
                    }
                }
                catch (SocketException e) when (e.SocketErrorCode is SocketError.ConnectionReset or SocketError.MessageSize && !Stopping)
                {
                    // ICMP port unreachable from an earlier send (Windows) or an oversized datagram: keep serving.
                    continue;
                }

                if (!ReferenceEquals(receiving.Owner, self))
                {
                    // A call stalled and another thread took the socket over meanwhile; it receives from now on.
                    return;
                }
            }
        }
        catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException || (e is SocketException && Stopping))
        {
            // Shutdown: the socket was closed under the pending receive.
        }
        finally
        {
            if (buffer is not null)
            {
                ArrayPool<byte>.Shared.Return(buffer);
            }
        }
    }

    /// <summary>
    /// The endpoint of the sender in <paramref name="received"/>: one object per peer, kept with its own copy of the address
    /// while the cache holds it, so a known peer costs no allocation. <paramref name="last"/> (when given) keeps the pair.
    /// </summary>
    private static IPEndPoint Resolve(SocketAddress received, Dictionary<SocketAddress, (IPEndPoint Remote, SocketAddress Address)> peers, IPEndPoint template, LastSender? last)
    {
        if (!peers.TryGetValue(received, out (IPEndPoint Remote, SocketAddress Address) peer))
        {
            if (peers.Count >= AddressCacheCapacity)
            {
                last?.Set(null, null);
                return SocketEndPoints.Normalize((IPEndPoint)template.Create(received));
            }

            SocketAddress copy = new(received.Family, received.Size);
            received.Buffer.Span[..received.Size].CopyTo(copy.Buffer.Span);
            peer = (SocketEndPoints.Normalize((IPEndPoint)template.Create(copy)), copy);
            peers[copy] = peer;
        }

        last?.Set(peer.Remote, peer.Address);
        return peer.Remote;
    }

    /// <summary>
    /// The sender of the datagram a receive thread is delivering, and the address it came from, for <see cref="Send"/> on
    /// that thread: the copy the thread's peer cache holds, which nothing changes. One per receive thread, made when it starts.
    /// </summary>
    private sealed class LastSender(UdpTransport transport)
    {
        public UdpTransport Transport { get; } = transport;

        public IPEndPoint? Remote { get; private set; }

        public SocketAddress? Address { get; private set; }

        public void Set(IPEndPoint? remote, SocketAddress? address)
        {
            Remote = remote;
            Address = address;
        }
    }

    /// <summary>Hands one datagram to the receiver, marked for the watchdog while the call runs.</summary>
    private void Deliver(ReceiveThread self, IDatagramReceiver receiver, bool inline, ReadOnlySpan<byte> datagram, IPEndPoint remote)
    {
        // The counter and the flag before the watchdog's flag is read (Exchange is a full fence), as the watchdog
        // clears its flag before it reads them: one of the two always sees the other.
        if (inline)
        {
            Volatile.Write(ref self.Calls, self.Calls + 1);
            Interlocked.Exchange(ref self.InCall, 1);
            if (Volatile.Read(ref _watching) == 0)
            {
                Arm();
            }
        }

        try
        {
            receiver.OnDatagram(datagram, remote);
        }
        catch (Exception e) when (e is not (OutOfMemoryException or OperationCanceledException or ObjectDisposedException))
        {
            // A receiver must not throw; if one does, that datagram is lost but the socket keeps serving.
        }
        finally
        {
            Volatile.Write(ref self.InCall, 0);
        }
    }

    /// <summary>One receiving socket: its current receive thread, how many threads serve it, and whether more datagrams wait.</summary>
    private sealed class ReceiveSocket(UdpTransport transport, Socket socket, IDatagramReceiver receiver, string threadName) : ReceiveContext
    {
        private const int BacklogCheckInterval = 8;
        private readonly TaskCompletionSource _ended = new(TaskCreationOptions.RunContinuationsAsynchronously);

        // Sends held while a batch is delivered; taken under its own lock, as the watchdog may send them for a stalled call.
        private readonly NativeSendBatch? _held = NativeSendBatch.IsAvailable ? new NativeSendBatch() : null;
        private Exception? _failure;
        private int _uncheckedLeft;
        private bool _backlog;

        // Written by the watchdog (a takeover) and at the start; read by each receive thread after every call.
        public volatile ReceiveThread? Owner;

        // Threads running a receive loop on this socket, including those inside a call that stalled.
        public int Threads;

        // Datagrams of the current batch still to be delivered after the one being delivered: a backlog known without a
        // system call. Written by the thread delivering the batch.
        public int Batched;

        public UdpTransport Transport { get; } = transport;

        public Socket Socket { get; } = socket;

        /// <summary>True where sends can be held for a batch (Linux with sendmmsg).</summary>
        public bool CanHold => _held is not null;

        public IDatagramReceiver Receiver { get; } = receiver;

        public string ThreadName { get; } = threadName;

        /// <summary>Completes when the last thread serving the socket ends.</summary>
        public Task Ended => _ended.Task;

        // FIONREAD (the size of the next datagram, 0 when none waits) is a system call, about 0.6 us on the loaded 2-core
        // VM of issue 25 against 7-9 us for a whole request: asked only with processors to spare, and then for one datagram
        // in BacklogCheckInterval, the answer standing for the ones between. A backlog that forms meanwhile is seen a few
        // datagrams late, a few tens of microseconds of work that could have run beside the receive. The socket's receive
        // thread is the only writer (a takeover thread briefly a second one, which at worst moves the next check).
        public override bool HandOff
        {
            get
            {
                if (Environment.ProcessorCount == 1)
                {
                    return false;
                }

                if (Batched > 0)
                {
                    return true;
                }

                if (_uncheckedLeft > 0)
                {
                    _uncheckedLeft--;
                    return _backlog;
                }

                _uncheckedLeft = BacklogCheckInterval - 1;
                try
                {
                    _backlog = Socket.Available > 0;
                }
                catch (Exception e) when (e is ObjectDisposedException or SocketException)
                {
                    // Closing: the work runs here, as on an empty socket.
                    _backlog = false;
                }

                return _backlog;
            }
        }

        /// <summary>Holds a send for the end of the batch; false when it must go at once (too long for a slot: the held ones go first).</summary>
        public bool TryHold(ReadOnlySpan<byte> datagram, SocketAddress address)
        {
            lock (_held!)
            {
                if (_held.TryAdd(datagram, address))
                {
                    return true;
                }

                // Every slot taken, or too long for one: what is held goes first, so the order of sends is kept.
                _held.Flush(Transport._socket);
                return _held.TryAdd(datagram, address);
            }
        }

        /// <summary>Sends what is held.</summary>
        public void SendHeld()
        {
            if (_held is null)
            {
                return;
            }

            lock (_held)
            {
                if (_held.Count > 0)
                {
                    _held.Flush(Transport._socket);
                }
            }
        }

        public void Exit(Exception? failed)
        {
            if (failed is not null)
            {
                _failure = failed;
            }

            if (Interlocked.Decrement(ref Threads) == 0)
            {
                if (_held is not null)
                {
                    lock (_held)
                    {
                        // Whatever a last batch held was sent when it ended; the slots go with the last thread.
                        _held.Dispose();
                    }
                }

                if (_failure is { } failure)
                {
                    _ended.TrySetException(failure);
                }
                else
                {
                    _ended.TrySetResult();
                }
            }
        }
    }

    /// <summary>What the watchdog reads of one receive thread: how many calls it made, and whether it is inside one.</summary>
    private sealed class ReceiveThread
    {
        public long Calls;
        public int InCall;

        // The watchdog's own: Calls when it last looked.
        public long CallsAtLastCheck = -1;
    }
}
