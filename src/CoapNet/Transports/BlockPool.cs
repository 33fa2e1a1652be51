using System.Buffers;
using System.Collections.Concurrent;
using System.Runtime.InteropServices;

namespace CoapNet.Transports;

/// <summary>
/// The buffers of stream connections' pipes (<see cref="PumpedConnection"/>): 4 KiB blocks on the pinned object heap,
/// kept for reuse as long as the load needs them.
/// </summary>
/// <remarks>
/// <para>
/// <see cref="ArrayPool{T}.Shared"/> keeps a few dozen arrays of a size per core. A server with a thousand connections that
/// each have a request in flight holds about a thousand pipe segments at once, so most of its rents missed that pool and
/// allocated 4 KiB that the GC zeroed: 16 % of the server's CPU at 1,000 connections with one request each (perf,
/// 2026-11-28, benchmarks/RESULTS.md "TCP"). This pool keeps every block it handed out until a whole trim interval
/// passed in which it was never needed, so it follows the load up at once and, while blocks come back, down within two
/// intervals (a trim runs on a return); it never keeps more than <see cref="MaxIdle"/> idle blocks, whatever the peak was.
/// </para>
/// <para>
/// The blocks are pinned once, when allocated (as Kestrel's pinned block pool does): a socket operation on one pins
/// nothing (<see cref="MemoryMarshal.CreateFromPinnedArray{T}"/>), and an idle connection holds none, because its
/// receive pump waits for data before it asks for a buffer.
/// </para>
/// </remarks>
internal sealed class BlockPool : MemoryPool<byte>
{
    /// <summary>The size of every block: a pipe's default segment.</summary>
    public const int BlockSize = 4096;

    /// <summary>The most idle blocks kept (16 MiB); a block returned beyond them is left to the GC.</summary>
    public const int MaxIdle = 4096;

    private const long TrimIntervalMilliseconds = 10_000;

    private readonly ConcurrentQueue<Block> _idle = new();
    private int _idleCount;

    // The fewest idle blocks seen since the last trim: that many were not needed for a whole interval. Updated without a
    // lock (a lost update leaves the mark a little high or low, which moves a trim by a few blocks, no more).
    private int _lowWater = int.MaxValue;
    private long _nextTrim = Environment.TickCount64 + TrimIntervalMilliseconds;

    /// <summary>The pool every stream connection uses unless its <see cref="TcpTransportOptions.MemoryPool"/> names another.</summary>
    public static BlockPool Connections { get; } = new();

    /// <inheritdoc/>
    public override int MaxBufferSize => BlockSize;

    /// <inheritdoc/>
    public override IMemoryOwner<byte> Rent(int minBufferSize = -1)
    {
        if (minBufferSize > BlockSize)
        {
            throw new ArgumentOutOfRangeException(nameof(minBufferSize), minBufferSize, $"A block holds {BlockSize} bytes; a pipe asks its pool only for sizes up to MaxBufferSize.");
        }

        if (_idle.TryDequeue(out Block? block))
        {
            int idle = Interlocked.Decrement(ref _idleCount);
            if (idle < _lowWater)
            {
                _lowWater = idle;
            }

            block.Rented();
            return block;
        }

        _lowWater = 0;
        return new Block(this);
    }

    /// <inheritdoc/>
    protected override void Dispose(bool disposing)
    {
        // The shared pool lives as long as the process; its blocks are the GC's once unreferenced.
    }

    private void Return(Block block)
    {
        if (Volatile.Read(ref _idleCount) < MaxIdle)
        {
            _idle.Enqueue(block);
            Interlocked.Increment(ref _idleCount);
        }

        long now = Environment.TickCount64;
        long next = Volatile.Read(ref _nextTrim);
        if (now >= next && Interlocked.CompareExchange(ref _nextTrim, now + TrimIntervalMilliseconds, next) == next)
        {
            Trim();
        }
    }

    /// <summary>Lets go of the blocks that no rent needed since the last trim.</summary>
    private void Trim()
    {
        int unused = Math.Min(_lowWater, Volatile.Read(ref _idleCount));
        for (int i = 0; i < unused && _idle.TryDequeue(out _); i++)
        {
            Interlocked.Decrement(ref _idleCount);
        }

        _lowWater = Volatile.Read(ref _idleCount);
    }

    private sealed class Block : IMemoryOwner<byte>
    {
        private readonly BlockPool _pool;

        // 1 while the block waits in the pool: a second Dispose of one rent must not hand the block to two renters.
        private int _idle;

        public Block(BlockPool pool)
        {
            _pool = pool;
            Memory = MemoryMarshal.CreateFromPinnedArray(GC.AllocateUninitializedArray<byte>(BlockSize, pinned: true), 0, BlockSize);
        }

        public Memory<byte> Memory { get; }

        public void Rented() => Volatile.Write(ref _idle, 0);

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _idle, 1) == 0)
            {
                _pool.Return(this);
            }
        }
    }
}
