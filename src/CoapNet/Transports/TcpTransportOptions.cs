using System.Buffers;

namespace CoapNet.Transports;

/// <summary>Settings of <see cref="TcpConnectionListener"/> and <see cref="TcpConnectionFactory"/>: buffering bounds and closing.</summary>
public sealed class TcpTransportOptions
{
    /// <summary>The default input bound: 1 MiB.</summary>
    public const int DefaultMaxInputBufferSize = 1024 * 1024;

    /// <summary>The default output bound: 64 KiB.</summary>
    public const int DefaultMaxOutputBufferSize = 64 * 1024;

    /// <summary>
    /// How many received bytes a connection buffers before it stops reading the socket until the
    /// protocol layer consumes some (default 1 MiB). Must be larger than the largest message the
    /// layer above accepts (its Max-Message-Size), or a frame that large could never complete.
    /// </summary>
    public int MaxInputBufferSize { get; set; } = DefaultMaxInputBufferSize;

    /// <summary>
    /// How many bytes written to a connection may wait for the socket before the writer's flush
    /// waits too (default 64 KiB): a peer that stops reading stops us, instead of growing our memory.
    /// </summary>
    public int MaxOutputBufferSize { get; set; } = DefaultMaxOutputBufferSize;

    /// <summary>
    /// How long <see cref="TransportConnection.DisposeAsync"/> waits for buffered output to reach a peer
    /// before it aborts the connection (default 5 seconds), so a peer that stops reading cannot hold a close.
    /// </summary>
    public TimeSpan CloseTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// Where a connection's pipes take their buffers (default null: a pool of 4 KiB pinned blocks that the process's
    /// connections share, which keeps blocks while the load needs them and at most 16 MiB of them idle). A connection
    /// takes a buffer only when bytes have arrived or are being written, and gives it back once they are consumed, so an
    /// idle connection holds none. A pipe asks for at most <see cref="MemoryPool{T}.MaxBufferSize"/> bytes at a time
    /// and takes larger buffers from <see cref="ArrayPool{T}.Shared"/>.
    /// </summary>
    public MemoryPool<byte>? MemoryPool { get; set; }

    internal void Validate()
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(MaxInputBufferSize, 1024, nameof(MaxInputBufferSize));
        ArgumentOutOfRangeException.ThrowIfLessThan(MaxOutputBufferSize, 1024, nameof(MaxOutputBufferSize));
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(CloseTimeout, TimeSpan.Zero, nameof(CloseTimeout));
    }
}
