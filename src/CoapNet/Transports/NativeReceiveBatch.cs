using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace CoapNet.Transports;

/// <summary>
/// Several datagrams received with one Linux <c>recvmmsg</c> call: the datagrams that already wait on the socket when the
/// call is made, up to <see cref="Capacity"/>, each into a slot of its own in native memory, with its sender.
/// </summary>
/// <remarks>
/// A loaded server spends most of a request in the kernel, and a system call's entry and exit are a fixed part of that on
/// a virtual machine (issue 39: <c>do_syscall_64</c>, the C library's wrapper and <c>fdget</c> were about a fifth of a
/// UDP request's profile at 16 client sockets). When datagrams queue up, one call takes them all; when they do not,
/// <c>MSG_WAITFORONE</c> makes the call return with the first one, so a lightly loaded server waits no longer than with
/// <c>recvfrom</c>.
/// <para>
/// The slots are one allocation of <see cref="Capacity"/> times the receive buffer's size, made by the C library's
/// <c>malloc</c>, which maps a block of that size on demand: a page is resident only once a datagram was written into
/// it, so the slots of short datagrams cost a page each however large the buffer is. Used by one receive thread at a
/// time, as the managed buffer it replaces.
/// </para>
/// </remarks>
internal sealed unsafe partial class NativeReceiveBatch : IDisposable
{
    // <sys/socket.h> on Linux; the message header layout is NativeDatagram's.
    private const int MsgWaitForOne = 0x10000;
    private const int MmsgHdrSize = NativeDatagram.MmsgHdrSize;
    private const int IovecSize = NativeDatagram.IovecSize;
    private const int NameSize = NativeDatagram.NameSize;

    // The most slots, and the most native memory the slots may span: 16 slots of the default 64 KiB buffer.
    private const int MaxCapacity = 16;
    private const long MaxSlotMemory = 16L * 65536;

    private readonly byte* _headers;
    private readonly byte* _slots;
    private readonly int _slotSize;
    private int _count;

    /// <summary>Allocates the slots for datagrams of up to <paramref name="slotSize"/> bytes.</summary>
    /// <param name="slotSize">The largest datagram a slot holds (the transport's receive buffer size).</param>
    public NativeReceiveBatch(int slotSize)
    {
        _slotSize = slotSize;
        Capacity = (int)Math.Clamp(MaxSlotMemory / slotSize, 1, MaxCapacity);
        nuint headerBytes = (nuint)(Capacity * (MmsgHdrSize + IovecSize + NameSize));
        _headers = (byte*)NativeMemory.AllocZeroed(headerBytes);
        _slots = (byte*)NativeMemory.Alloc((nuint)((long)Capacity * slotSize));
        byte* iovecs = _headers + (Capacity * MmsgHdrSize);
        byte* names = iovecs + (Capacity * IovecSize);
        for (int i = 0; i < Capacity; i++)
        {
            NativeDatagram.Link(_headers + (i * MmsgHdrSize), iovecs + (i * IovecSize), names + (i * NameSize), _slots + ((long)i * slotSize), (nuint)slotSize);
        }
    }

    /// <summary>True where <c>recvmmsg</c> is used: where <see cref="NativeDatagram"/>'s calls are, with a C library that has it (checked once).</summary>
    public static bool IsAvailable { get; } = NativeDatagram.IsAvailable && Probe();

    /// <summary>The most datagrams one call takes.</summary>
    public int Capacity { get; }

    /// <summary>How many datagrams the last <see cref="TryReceive"/> took.</summary>
    public int Count => _count;

    /// <summary>
    /// Blocks until at least one datagram waits, then takes it and every other that waits, up to <see cref="Capacity"/>;
    /// false when the caller must receive through <see cref="Socket"/> instead (an error other than an interrupted call,
    /// which moved no datagram).
    /// </summary>
    /// <param name="socket">The bound socket.</param>
    /// <exception cref="ObjectDisposedException">The socket is closed.</exception>
    public bool TryReceive(Socket socket)
    {
        SafeSocketHandle handle = socket.SafeHandle;
        bool added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            int fd = (int)handle.DangerousGetHandle();
            for (int i = 0; i < Capacity; i++)
            {
                // The kernel writes each name's length and the flags back: both are set again before every call.
                byte* header = _headers + (i * MmsgHdrSize);
                *(uint*)(header + NativeDatagram.MsgNameLenOffset) = NameSize;
                *(int*)(header + NativeDatagram.MsgFlagsOffset) = 0;
            }

            while (true)
            {
                int received = RecvMmsg(fd, _headers, (uint)Capacity, MsgWaitForOne, null);
                if (received >= 0)
                {
                    _count = received;
                    return true;
                }

                if (Marshal.GetLastPInvokeError() != NativeDatagram.EINTR)
                {
                    _count = 0;
                    return false;
                }
            }
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }
        }
    }

    /// <summary>
    /// The datagram in slot <paramref name="index"/> (below <see cref="Count"/>) and its sender, copied into
    /// <paramref name="address"/>; false when it did not fit its slot (it was cut, and is dropped as a cut datagram is
    /// on the single-datagram path).
    /// </summary>
    /// <param name="index">The slot.</param>
    /// <param name="address">Receives the sender: a buffer for the socket's address family.</param>
    /// <param name="datagram">The datagram; valid until the next <see cref="TryReceive"/>.</param>
    public bool TryGet(int index, SocketAddress address, out ReadOnlySpan<byte> datagram)
    {
        byte* header = _headers + (index * MmsgHdrSize);
        if ((*(int*)(header + NativeDatagram.MsgFlagsOffset) & NativeDatagram.MsgTrunc) != 0)
        {
            datagram = default;
            return false;
        }

        int nameLength = (int)Math.Min(*(uint*)(header + NativeDatagram.MsgNameLenOffset), (uint)address.Buffer.Length);
        new ReadOnlySpan<byte>(*(byte**)header, nameLength).CopyTo(address.Buffer.Span);
        address.Size = nameLength;
        datagram = new ReadOnlySpan<byte>(_slots + ((long)index * _slotSize), (int)*(uint*)(header + NativeDatagram.MsgLenOffset));
        return true;
    }

    /// <summary>Frees the native memory; the batch is not used afterwards.</summary>
    public void Dispose()
    {
        NativeMemory.Free(_headers);
        NativeMemory.Free(_slots);
    }

    private static bool Probe()
    {
        try
        {
            // A descriptor of -1 fails at once with EBADF and touches nothing; a C library without the call means recvfrom.
            _ = RecvMmsg(-1, null, 0, 0, null);
            return true;
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            return false;
        }
    }

    [LibraryImport("libc", EntryPoint = "recvmmsg", SetLastError = true)]
    private static partial int RecvMmsg(int fd, void* messages, uint count, int flags, void* timeout);
}
