using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace CoapNet.Transports;

/// <summary>
/// Datagrams held back while a receive thread works through a batch of received ones, then sent with one Linux
/// <c>sendmmsg</c> call: the answers to a <see cref="NativeReceiveBatch"/> leave in one system call as their requests came
/// in one.
/// </summary>
/// <remarks>
/// Only the datagrams that fit a slot are held (<see cref="SlotSize"/> covers RFC 7252 section 4.6's 1,152 bytes with room
/// for a DTLS record's overhead); a longer one is sent at once after the held ones, so the order of sends is kept. Not
/// thread-safe: the owner serializes <see cref="TryAdd"/> and <see cref="Flush"/>.
/// </remarks>
internal sealed unsafe partial class NativeSendBatch : IDisposable
{
    /// <summary>The longest datagram a slot holds.</summary>
    public const int SlotSize = 2048;

    /// <summary>The most datagrams held before they are sent.</summary>
    public const int Capacity = 16;

    // The message header layout is NativeDatagram's.
    private const int MmsgHdrSize = NativeDatagram.MmsgHdrSize;
    private const int IovecSize = NativeDatagram.IovecSize;
    private const int NameSize = NativeDatagram.NameSize;

    private readonly byte* _memory;
    private readonly byte* _names;
    private readonly byte* _slots;
    private int _count;
    private bool _freed;

    /// <summary>Allocates the slots.</summary>
    public NativeSendBatch()
    {
        _memory = (byte*)NativeMemory.AllocZeroed((nuint)(Capacity * (MmsgHdrSize + IovecSize + NameSize + SlotSize)));
        byte* iovecs = _memory + (Capacity * MmsgHdrSize);
        _names = iovecs + (Capacity * IovecSize);
        _slots = _names + (Capacity * NameSize);
        for (int i = 0; i < Capacity; i++)
        {
            NativeDatagram.Link(_memory + (i * MmsgHdrSize), iovecs + (i * IovecSize), _names + (i * NameSize), _slots + (i * SlotSize), 0);
        }
    }

    /// <summary>True where <c>sendmmsg</c> is used: where <see cref="NativeReceiveBatch"/> is, with a C library that has it (checked once).</summary>
    public static bool IsAvailable { get; } = NativeReceiveBatch.IsAvailable && Probe();

    /// <summary>How many datagrams are held.</summary>
    public int Count => _count;

    /// <summary>Holds a copy of <paramref name="datagram"/> for <paramref name="address"/>; false when it is too long for a slot or every slot is taken.</summary>
    /// <param name="datagram">The datagram.</param>
    /// <param name="address">The destination, in the socket's address family.</param>
    public bool TryAdd(ReadOnlySpan<byte> datagram, SocketAddress address)
    {
        if (_freed || _count == Capacity || datagram.Length > SlotSize || address.Size > NameSize)
        {
            return false;
        }

        int i = _count++;
        byte* header = _memory + (i * MmsgHdrSize);
        byte* iovec = *(byte**)(header + NativeDatagram.MsgIovOffset);
        datagram.CopyTo(new Span<byte>(_slots + (i * SlotSize), SlotSize));
        *(nuint*)(iovec + 8) = (nuint)datagram.Length;
        address.Buffer.Span[..address.Size].CopyTo(new Span<byte>(_names + (i * NameSize), NameSize));
        *(uint*)(header + NativeDatagram.MsgNameLenOffset) = (uint)address.Size;
        return true;
    }

    /// <summary>
    /// Sends every held datagram, in the order they were added, and empties the batch. A datagram the kernel refuses is
    /// sent again through <see cref="Socket"/> (which blocks properly on a socket an asynchronous call made non-blocking);
    /// one that fails there too is dropped, as a failed send is on the direct path, where it is logged and the
    /// retransmission of a confirmable message is the recovery (RFC 7252 section 4.2).
    /// </summary>
    /// <param name="socket">The socket to send from.</param>
    /// <returns>How many datagrams were dropped.</returns>
    public int Flush(Socket socket)
    {
        int dropped = 0;
        int sent = 0;
        SafeSocketHandle handle = socket.SafeHandle;
        bool added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            int fd = (int)handle.DangerousGetHandle();
            while (sent < _count)
            {
                int result = SendMmsg(fd, _memory + (sent * MmsgHdrSize), (uint)(_count - sent), 0);
                if (result > 0)
                {
                    sent += result;
                    continue;
                }

                if (result < 0 && Marshal.GetLastPInvokeError() == NativeDatagram.EINTR)
                {
                    continue;
                }

                if (!SendOne(socket, sent))
                {
                    dropped++;
                }

                sent++;
            }
        }
        catch (ObjectDisposedException)
        {
            // Closed meanwhile: what was held is dropped with the socket.
            dropped += _count - sent;
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }

            _count = 0;
        }

        return dropped;
    }

    /// <summary>Frees the native memory once; afterwards nothing is held (<see cref="TryAdd"/> returns false).</summary>
    public void Dispose()
    {
        if (!_freed)
        {
            _freed = true;
            _count = 0;
            NativeMemory.Free(_memory);
        }
    }

    private bool SendOne(Socket socket, int index)
    {
        byte* header = _memory + (index * MmsgHdrSize);
        byte* iovec = *(byte**)(header + NativeDatagram.MsgIovOffset);
        SocketAddress address = new(socket.AddressFamily, (int)*(uint*)(header + NativeDatagram.MsgNameLenOffset));
        new ReadOnlySpan<byte>(_names + (index * NameSize), address.Size).CopyTo(address.Buffer.Span);
        try
        {
            socket.SendTo(new ReadOnlySpan<byte>(*(byte**)iovec, (int)*(nuint*)(iovec + 8)), SocketFlags.None, address);
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }

    private static bool Probe()
    {
        try
        {
            // A descriptor of -1 fails at once with EBADF and touches nothing; a C library without the call means sendto.
            _ = SendMmsg(-1, null, 0, 0);
            return true;
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            return false;
        }
    }

    [LibraryImport("libc", EntryPoint = "sendmmsg", SetLastError = true)]
    private static partial int SendMmsg(int fd, void* messages, uint count, int flags);
}
