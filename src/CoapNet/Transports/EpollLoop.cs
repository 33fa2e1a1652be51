using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace CoapNet.Transports;

/// <summary>
/// A thread that waits on one epoll instance for the TCP connections given to it (<see cref="EpollConnection"/>) and, when
/// one is ready, resumes that connection's pump on itself: the receive pump reads the socket, the protocol layer parses and
/// answers on the same thread, and the send pump writes the answer, as tcp-echo does (benchmarks/tools/tcp-echo.c). With
/// <see cref="Socket"/> the socket engine's thread woke a thread-pool thread for every ready connection, which cost a
/// connection with one request in flight two thread switches a request (benchmarks/RESULTS.md, "Many connections").
/// </summary>
/// <remarks>
/// One loop per processor, shared by every TCP connection of the process (as .NET's own socket engines are), each
/// connection on one loop for its life. The protocol layer runs only a quick handler here and hands a slow one off
/// (CoapServer's inline rule); a call that does not return anyway is the watchdog's: when a loop's thread has been inside
/// the same connection's call at two looks in a row, a new thread takes over the loop (the same epoll instance) and the
/// rest of the stalled thread's events, so one stuck handler stalls only its own connection. At most
/// <see cref="ReceiveContext.MaxThreads"/> threads serve a loop; the stalled ones end when their calls return.
/// </remarks>
internal sealed class EpollLoop
{
    private const int Capacity = 256;

    private static readonly object CreateGate = new();
    private static EpollLoop[]? s_loops;
    private static readonly object WatchGate = new();
    private static int s_next;
    private static int s_watching;

    private readonly int _epoll;
    private readonly Stack<int> _free = new();
    private readonly string _name;

    // The connections by slot: an event's key is the slot in its low 32 bits and the slot's use in its high ones, so an
    // event taken for a connection that has left finds its slot empty or another use in it, and is dropped. Written under
    // _free's lock, read without it (a read races only with a connection that is coming or going).
    private Member?[] _members = new Member?[64];
    private uint _uses;
    private int _slotsMade;
    private LoopThread _owner = null!;
    private int _threads;

    private EpollLoop(int index, int epoll)
    {
        _epoll = epoll;
        _name = $"CoapNet TCP {index}";
        Start(null);
    }

    /// <summary>True where connections are served by these loops (<see cref="NativeStream.IsAvailable"/>).</summary>
    public static bool IsAvailable => NativeStream.IsAvailable;

    /// <summary>Watches <paramref name="socket"/> for <paramref name="connection"/> on the next loop, round robin.</summary>
    /// <returns>The loop, and the key to give back to <see cref="Remove"/>.</returns>
    /// <exception cref="SocketException">The kernel refused to watch it.</exception>
    public static (EpollLoop Loop, ulong Key) Add(EpollConnection connection, Socket socket)
    {
        EpollLoop[] loops = Volatile.Read(ref s_loops) ?? Create();
        EpollLoop loop = loops[(int)((uint)Interlocked.Increment(ref s_next) % (uint)loops.Length)];
        ulong key = loop.Take(connection);
        try
        {
            NativeStream.Add(loop._epoll, socket, key);
        }
        catch
        {
            loop.Free(key);
            throw;
        }

        return (loop, key);
    }

    /// <summary>Stops watching a socket; its events already taken find no connection and are dropped.</summary>
    public void Remove(ulong key, Socket socket)
    {
        NativeStream.Remove(_epoll, socket);
        Free(key);
    }

    private ulong Take(EpollConnection connection)
    {
        lock (_free)
        {
            if (!_free.TryPop(out int slot))
            {
                // No slot free: a new one past every slot made so far.
                slot = _slotsMade++;
                if (slot == _members.Length)
                {
                    Member?[] grown = new Member?[_members.Length * 2];
                    Array.Copy(_members, grown, _members.Length);
                    Volatile.Write(ref _members, grown);
                }
            }

            ulong key = ((ulong)++_uses << 32) | (uint)slot;
            Volatile.Write(ref _members[slot], new Member(key, connection));
            return key;
        }
    }

    private void Free(ulong key)
    {
        lock (_free)
        {
            int slot = (int)(uint)key;
            if (_members[slot] is { } member && member.Key == key)
            {
                Volatile.Write(ref _members[slot], null);
                _free.Push(slot);
            }
        }
    }

    /// <summary>
    /// The loops, made by the first connection. A failure (the kernel refusing an epoll instance, out of descriptors) is
    /// that connection's, and the next one tries again, where a cached failure would refuse every later connection.
    /// </summary>
    private static EpollLoop[] Create()
    {
        lock (CreateGate)
        {
            if (s_loops is { } made)
            {
                return made;
            }

            int count = Math.Clamp(Environment.ProcessorCount, 1, 16);
            int[] epolls = new int[count];
            for (int i = 0; i < count; i++)
            {
                try
                {
                    epolls[i] = NativeStream.CreateEpoll();
                }
                catch
                {
                    for (int j = 0; j < i; j++)
                    {
                        NativeStream.CloseEpoll(epolls[j]);
                    }

                    throw;
                }
            }

            EpollLoop[] loops = new EpollLoop[count];
            for (int i = 0; i < count; i++)
            {
                loops[i] = new EpollLoop(i, epolls[i]);
            }

            new Thread(() => WatchLoop(loops))
            {
                IsBackground = true,
                Name = "CoapNet TCP watchdog",
            }.Start();
            Volatile.Write(ref s_loops, loops);
            return loops;
        }
    }

    /// <summary>Starts a thread that serves this loop as its owner from now on, first helping with <paramref name="rest"/> (a stalled thread's events).</summary>
    private void Start(Batch? rest)
    {
        LoopThread thread = new();
        Volatile.Write(ref _owner, thread);
        Interlocked.Increment(ref _threads);
        new Thread(() =>
        {
            try
            {
                if (rest is not null)
                {
                    Drain(rest, thread);
                }

                Run(thread);
            }
            finally
            {
                Interlocked.Decrement(ref _threads);
            }
        })
        {
            IsBackground = true,
            Name = _name,
        }.Start();
    }

    private unsafe void Run(LoopThread self)
    {
        Batch batch = new();
        fixed (byte* events = batch.Events)
        {
            // A thread the watchdog replaced ends when it has done its part of the batch: the owner serves the loop from
            // then on. An event both took is only a readiness told twice, which costs a connection a read that finds
            // nothing; none is lost, as each is taken before its slot is written again.
            while (ReferenceEquals(Volatile.Read(ref _owner), self))
            {
                int count = NativeStream.Wait(_epoll, events, Capacity);
                if (count <= 0)
                {
                    continue;
                }

                self.Current = batch;
                batch.Next = 0;
                Volatile.Write(ref batch.Count, count);
                Drain(batch, self);
            }
        }
    }

    /// <summary>Resumes the connection of every event of <paramref name="batch"/> not yet taken, each taken by one thread.</summary>
    private void Drain(Batch batch, LoopThread self)
    {
        int count = Volatile.Read(ref batch.Count);
        while (true)
        {
            int index = Interlocked.Increment(ref batch.Next) - 1;
            if (index >= count)
            {
                return;
            }

            ReadOnlySpan<byte> item = batch.Events.AsSpan(index * NativeStream.EventSize, NativeStream.EventSize);
            uint events = MemoryMarshal.Read<uint>(item);
            ulong key = MemoryMarshal.Read<ulong>(item[NativeStream.EventDataOffset..]);
            Member?[] members = Volatile.Read(ref _members);
            int slot = (int)(uint)key;
            if (slot >= members.Length || Volatile.Read(ref members[slot]) is not { } member || member.Key != key)
            {
                continue;
            }

            EpollConnection connection = member.Connection;

            // The counter and the flag before the watchdog's flag is read (Exchange is a full fence), as the watchdog
            // clears its flag before it reads them: one of the two always sees the other.
            Volatile.Write(ref self.Calls, self.Calls + 1);
            Interlocked.Exchange(ref self.InCall, 1);
            if (Volatile.Read(ref s_watching) == 0)
            {
                Arm();
            }

            try
            {
                connection.OnReady(events);
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                // What runs here is the connection's pumps and the layers above them, whose failures end up in their own
                // tasks; anything that still escapes must not end the loop, which serves every other connection on it.
            }
            finally
            {
                Volatile.Write(ref self.InCall, 0);
            }
        }
    }

    private static void Arm()
    {
        if (Interlocked.CompareExchange(ref s_watching, 1, 0) == 0)
        {
            lock (WatchGate)
            {
                Monitor.Pulse(WatchGate);
            }
        }
    }

    /// <summary>The watchdog's thread: parked until a call arms it, then a look every interval until no call is in progress.</summary>
    private static void WatchLoop(EpollLoop[] loops)
    {
        while (true)
        {
            lock (WatchGate)
            {
                // The flag is read under the gate that Arm pulses under, so an arming between the read and the wait is not lost.
                while (Volatile.Read(ref s_watching) == 0)
                {
                    Monitor.Wait(WatchGate);
                }

                Monitor.Wait(WatchGate, ReceiveContext.StallCheckInterval);
            }

            bool busy = false;
            foreach (EpollLoop loop in loops)
            {
                busy |= loop.CheckStall();
            }

            if (busy)
            {
                continue;
            }

            // Cleared (a full fence) before the calls are looked at again, as a loop marks its call before it reads the flag.
            Interlocked.Exchange(ref s_watching, 0);
            foreach (EpollLoop loop in loops)
            {
                if (Volatile.Read(ref Volatile.Read(ref loop._owner).InCall) != 0)
                {
                    Arm();
                    break;
                }
            }
        }
    }

    /// <summary>The watchdog's look at this loop: an owner inside the same call as at the last look gives the loop to a new thread.</summary>
    /// <returns>True when a call is in progress, so the watchdog should look again.</returns>
    private bool CheckStall()
    {
        LoopThread owner = Volatile.Read(ref _owner);
        long calls = Volatile.Read(ref owner.Calls);
        bool inCall = Volatile.Read(ref owner.InCall) != 0;
        if (inCall && calls == owner.CallsAtLastCheck && Volatile.Read(ref _threads) < ReceiveContext.MaxThreads)
        {
            // The stalled thread keeps the batch it is in; the new one takes the events of it not yet begun.
            Batch? rest = owner.Current;
            owner.Current = null;
            Start(rest);
            return true;
        }

        owner.CallsAtLastCheck = calls;
        return inCall;
    }

    /// <summary>A connection in its slot, with the key its events carry.</summary>
    private sealed record Member(ulong Key, EpollConnection Connection);

    /// <summary>The events of one wait, taken one at a time by whichever thread serves them.</summary>
    private sealed class Batch
    {
        public readonly byte[] Events = GC.AllocateArray<byte>(Capacity * NativeStream.EventSize, pinned: true);
        public int Count;
        public int Next;
    }

    /// <summary>One thread of a loop, and what the watchdog reads of it.</summary>
    private sealed class LoopThread
    {
        public long Calls;
        public int InCall;

        // The watchdog's own: Calls when it last looked.
        public long CallsAtLastCheck = -1;

        // The batch this thread is draining; the watchdog takes it for the thread that replaces this one.
        public Batch? Current;
    }
}
