using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace CoapNet.Transports;

/// <summary>
/// The receive and send of one UDP datagram as the C library's <c>recvfrom</c> and <c>sendto</c> on Linux, straight
/// into the <see cref="SocketAddress"/> buffers <see cref="UdpTransport"/> already keeps, where <see cref="Socket"/>'s
/// own calls go through its asynchronous context, a message header and <c>recvmsg</c>/<c>sendmsg</c>.
/// </summary>
/// <remarks>
/// Measured before it was written (issue 25, <c>benchmarks/results/issue25/README.md</c>): a one-thread .NET echo over
/// <see cref="Socket.ReceiveFrom(Span{byte}, SocketFlags, SocketAddress)"/> and
/// <see cref="Socket.SendTo(ReadOnlySpan{byte}, SocketFlags, SocketAddress)"/> answered 0.75x the requests of the same
/// echo in C, and 0.93-0.97x with these two calls: a quarter of a light-load request's cost was the platform's socket
/// layer, not CoAP.
/// <para>
/// Only the common case is taken here. Any error other than an interrupted call returns false and the caller repeats
/// the operation through <see cref="Socket"/>, which raises the exception .NET users expect (with .NET's mapping of
/// the error), blocks properly when the descriptor was made non-blocking by an asynchronous call, and reports ICMP
/// errors as it always did; nothing is lost, as the failed call moved no datagram. Each call holds a reference on the
/// socket's handle, so a close cannot free the descriptor number under it: closing shuts the socket down, which makes a
/// blocked <c>recvfrom</c> return, and the receive loop then sees the transport stopping.
/// </para>
/// </remarks>
internal static partial class NativeDatagram
{
    // <errno.h> on Linux.
    internal const int EINTR = 4;

    // <sys/socket.h> on Linux: for a datagram socket, recvfrom returns the datagram's real length when it was cut, and
    // recvmmsg marks a cut one in its msg_flags.
    internal const int MsgTrunc = 0x20;

    // <sys/socket.h> on Linux, x86-64 and arm64 alike, for NativeReceiveBatch and NativeSendBatch: struct mmsghdr is a
    // struct msghdr (msg_name, msg_namelen, msg_iov, msg_iovlen, msg_control, msg_controllen, msg_flags: 56 bytes) and
    // an unsigned msg_len, padded to 64; struct iovec is two words; a name slot is a struct sockaddr_storage.
    internal const int MmsgHdrSize = 64;
    internal const int IovecSize = 16;
    internal const int NameSize = 128;
    internal const int MsgNameLenOffset = 8;
    internal const int MsgIovOffset = 16;
    internal const int MsgFlagsOffset = 48;
    internal const int MsgLenOffset = 56;

    /// <summary>Points the message header <paramref name="header"/> at its name slot and, through <paramref name="iovec"/>, at one data buffer.</summary>
    internal static unsafe void Link(byte* header, byte* iovec, byte* name, byte* data, nuint length)
    {
        *(byte**)iovec = data;
        *(nuint*)(iovec + 8) = length;
        *(byte**)header = name; // msg_name
        *(byte**)(header + MsgIovOffset) = iovec; // msg_iov
        *(nuint*)(header + MsgIovOffset + 8) = 1; // msg_iovlen
    }

    /// <summary>True where the calls are used: Linux, with a C library that has them (checked once).</summary>
    public static bool IsAvailable { get; } = Probe();

    /// <summary>
    /// Receives one datagram into <paramref name="buffer"/> and its sender into <paramref name="address"/> (its
    /// <see cref="SocketAddress.Size"/> set); false when the caller must use <see cref="Socket.ReceiveFrom(Span{byte}, SocketFlags, SocketAddress)"/> instead.
    /// </summary>
    /// <param name="socket">The bound socket.</param>
    /// <param name="buffer">Where the datagram goes.</param>
    /// <param name="address">Where its sender goes: a buffer for the socket's address family.</param>
    /// <param name="length">The datagram's length; more than the buffer's when it did not fit (it was cut, and is dropped).</param>
    /// <exception cref="ObjectDisposedException">The socket is closed.</exception>
    public static bool TryReceiveFrom(Socket socket, Span<byte> buffer, SocketAddress address, out int length)
    {
        SafeSocketHandle handle = socket.SafeHandle;
        bool added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            int fd = (int)handle.DangerousGetHandle();
            Span<byte> name = address.Buffer.Span;
            while (true)
            {
                uint nameLength = (uint)name.Length;
                nint received = RecvFrom(fd, ref MemoryMarshal.GetReference(buffer), (nuint)buffer.Length, MsgTrunc, ref MemoryMarshal.GetReference(name), ref nameLength);
                if (received >= 0)
                {
                    address.Size = (int)nameLength;
                    length = (int)received;
                    return true;
                }

                if (Marshal.GetLastPInvokeError() != EINTR)
                {
                    length = 0;
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

    /// <summary>Sends <paramref name="datagram"/> to <paramref name="address"/>; false when the caller must use <see cref="Socket.SendTo(ReadOnlySpan{byte}, SocketFlags, SocketAddress)"/> instead.</summary>
    /// <param name="socket">The bound socket.</param>
    /// <param name="datagram">The datagram.</param>
    /// <param name="address">The destination, in the socket's address family.</param>
    /// <exception cref="ObjectDisposedException">The socket is closed.</exception>
    public static bool TrySendTo(Socket socket, ReadOnlySpan<byte> datagram, SocketAddress address)
    {
        SafeSocketHandle handle = socket.SafeHandle;
        bool added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            int fd = (int)handle.DangerousGetHandle();
            ReadOnlySpan<byte> name = address.Buffer.Span[..address.Size];
            while (true)
            {
                if (SendTo(fd, in MemoryMarshal.GetReference(datagram), (nuint)datagram.Length, 0, in MemoryMarshal.GetReference(name), (uint)name.Length) >= 0)
                {
                    return true;
                }

                if (Marshal.GetLastPInvokeError() != EINTR)
                {
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

    private static bool Probe()
    {
        if (!OperatingSystem.IsLinux())
        {
            return false;
        }

        try
        {
            // Resolves the library and both entry points once: a C library without them (or none by that name) means the
            // Socket calls, as on every other OS. A descriptor of -1 fails at once with EBADF and touches nothing.
            uint size = 0;
            byte none = 0;
            _ = RecvFrom(-1, ref none, 0, 0, ref none, ref size);
            _ = SendTo(-1, in none, 0, 0, in none, 0);
            return true;
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            return false;
        }
    }

    [LibraryImport("libc", EntryPoint = "recvfrom", SetLastError = true)]
    private static partial nint RecvFrom(int fd, ref byte buffer, nuint length, int flags, ref byte address, ref uint addressLength);

    [LibraryImport("libc", EntryPoint = "sendto", SetLastError = true)]
    private static partial nint SendTo(int fd, in byte buffer, nuint length, int flags, in byte address, uint addressLength);
}
