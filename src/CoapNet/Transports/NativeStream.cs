using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace CoapNet.Transports;

/// <summary>
/// The C library's <c>epoll</c> and its non-blocking <c>recv</c> and <c>send</c> on Linux, for <see cref="EpollConnection"/>:
/// the TCP twin of <see cref="NativeDatagram"/>.
/// </summary>
/// <remarks>
/// Each call on a socket holds a reference on its handle (<see cref="SafeHandle.DangerousAddRef"/>), so a close cannot free
/// the descriptor number under it and let a new socket take that number while a call is on its way.
/// </remarks>
internal static partial class NativeStream
{
    // <sys/epoll.h> on Linux.
    internal const uint EpollIn = 0x001;
    internal const uint EpollOut = 0x004;
    internal const uint EpollErr = 0x008;
    internal const uint EpollHup = 0x010;
    internal const uint EpollRdHup = 0x2000;
    internal const uint EpollEt = 1u << 31;
    private const int EpollCtlAdd = 1;
    private const int EpollCtlDel = 2;
    private const int EpollCloexec = 0x80000;

    // <sys/socket.h> and <errno.h> on Linux.
    private const int MsgDontWait = 0x40;
    private const int MsgNoSignal = 0x4000;
    private const int EAGAIN = 11;

    /// <summary>
    /// The size of a <c>struct epoll_event</c>: packed on x86-64 (a 32-bit mask, then the 64-bit data at offset 4), naturally
    /// aligned elsewhere (the data at offset 8).
    /// </summary>
    internal static readonly int EventSize = RuntimeInformation.ProcessArchitecture == Architecture.X64 ? 12 : 16;

    /// <summary>Where the 64-bit data of an event lies within it.</summary>
    internal static readonly int EventDataOffset = RuntimeInformation.ProcessArchitecture == Architecture.X64 ? 4 : 8;

    /// <summary>True where the calls are used: Linux on x86-64 or arm64 (whose event layouts are known), with a C library that has them.</summary>
    public static bool IsAvailable { get; } = Probe();

    /// <summary>A new epoll instance, closed on exec.</summary>
    /// <exception cref="SocketException">The kernel refused one.</exception>
    public static int CreateEpoll()
    {
        int fd = EpollCreate1(EpollCloexec);
        return fd >= 0 ? fd : throw Error(Marshal.GetLastPInvokeError());
    }

    /// <summary>Closes an epoll instance that was never used.</summary>
    public static void CloseEpoll(int epoll) => _ = Close(epoll);

    /// <summary>Watches <paramref name="socket"/> on <paramref name="epoll"/>, edge-triggered, with <paramref name="data"/> as its key.</summary>
    /// <exception cref="SocketException">The kernel refused it.</exception>
    /// <exception cref="ObjectDisposedException">The socket is closed.</exception>
    public static unsafe void Add(int epoll, Socket socket, ulong data)
    {
        byte* item = stackalloc byte[16];
        *(uint*)item = EpollIn | EpollOut | EpollRdHup | EpollEt;
        *(ulong*)(item + EventDataOffset) = data;
        if (Control(epoll, EpollCtlAdd, socket, item) < 0)
        {
            throw Error(Marshal.GetLastPInvokeError());
        }
    }

    /// <summary>Stops watching <paramref name="socket"/>; quietly nothing when it is closed already (closing removed it).</summary>
    public static unsafe void Remove(int epoll, Socket socket)
    {
        try
        {
            byte* item = stackalloc byte[16];
            _ = Control(epoll, EpollCtlDel, socket, item);
        }
        catch (ObjectDisposedException)
        {
        }
    }

    /// <summary>Waits for events; the count, or -1 after a signal interrupted the wait.</summary>
    /// <exception cref="SocketException">The wait failed otherwise.</exception>
    public static unsafe int Wait(int epoll, byte* events, int capacity)
    {
        int count = EpollWait(epoll, (nint)events, capacity, -1);
        if (count >= 0)
        {
            return count;
        }

        int errno = Marshal.GetLastPInvokeError();
        return errno == NativeDatagram.EINTR ? -1 : throw Error(errno);
    }

    /// <summary>Receives what the socket holds, up to <paramref name="buffer"/>'s length, without waiting.</summary>
    /// <returns>The bytes received, 0 at the end of the stream, or -1 when nothing waits.</returns>
    /// <exception cref="SocketException">The connection failed.</exception>
    /// <exception cref="ObjectDisposedException">The socket is closed.</exception>
    public static unsafe int Receive(Socket socket, Span<byte> buffer)
    {
        fixed (byte* data = buffer)
        {
            return Transfer(socket, data, buffer.Length, receive: true);
        }
    }

    /// <summary>Sends what the socket takes of <paramref name="buffer"/> now, without waiting.</summary>
    /// <returns>The bytes taken, or -1 when the socket's buffer is full.</returns>
    /// <exception cref="SocketException">The connection failed.</exception>
    /// <exception cref="ObjectDisposedException">The socket is closed.</exception>
    public static unsafe int Send(Socket socket, ReadOnlySpan<byte> buffer)
    {
        fixed (byte* data = buffer)
        {
            return Transfer(socket, data, buffer.Length, receive: false);
        }
    }

    private static unsafe int Transfer(Socket socket, byte* data, int length, bool receive)
    {
        SafeSocketHandle handle = socket.SafeHandle;
        bool added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            int fd = (int)handle.DangerousGetHandle();
            while (true)
            {
                // MSG_NOSIGNAL: a peer that has gone makes send fail with EPIPE instead of killing the process with SIGPIPE.
                nint moved = receive ? Recv(fd, data, (nuint)length, MsgDontWait) : SendBytes(fd, data, (nuint)length, MsgDontWait | MsgNoSignal);
                if (moved >= 0)
                {
                    return (int)moved;
                }

                int errno = Marshal.GetLastPInvokeError();
                if (errno == EAGAIN)
                {
                    return -1;
                }

                if (errno != NativeDatagram.EINTR)
                {
                    throw Error(errno);
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

    private static unsafe int Control(int epoll, int operation, Socket socket, byte* item)
    {
        SafeSocketHandle handle = socket.SafeHandle;
        bool added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            return EpollCtl(epoll, operation, (int)handle.DangerousGetHandle(), (nint)item);
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }
        }
    }

    /// <summary>The <see cref="SocketException"/> .NET raises for <paramref name="errno"/>, for the errors a connected stream meets.</summary>
    private static SocketException Error(int errno) => new((int)(errno switch
    {
        104 => SocketError.ConnectionReset, // ECONNRESET
        32 => SocketError.Shutdown, // EPIPE
        110 => SocketError.TimedOut, // ETIMEDOUT
        107 => SocketError.NotConnected, // ENOTCONN
        103 => SocketError.ConnectionAborted, // ECONNABORTED
        113 => SocketError.HostUnreachable, // EHOSTUNREACH
        101 => SocketError.NetworkUnreachable, // ENETUNREACH
        100 => SocketError.NetworkDown, // ENETDOWN
        9 => SocketError.OperationAborted, // EBADF: closed under us
        12 or 105 => SocketError.NoBufferSpaceAvailable, // ENOMEM, ENOBUFS
        24 or 23 => SocketError.TooManyOpenSockets, // EMFILE, ENFILE
        _ => SocketError.SocketError,
    }));

    private static bool Probe()
    {
        if (!OperatingSystem.IsLinux() || RuntimeInformation.ProcessArchitecture is not (Architecture.X64 or Architecture.Arm64))
        {
            return false;
        }

        try
        {
            // Resolves the library and every entry point once; a descriptor of -1 fails at once with EBADF and touches nothing.
            int epoll = EpollCreate1(EpollCloexec);
            if (epoll < 0)
            {
                return false;
            }

            _ = Close(epoll);
            _ = EpollCtl(-1, EpollCtlDel, -1, 0);
            _ = EpollWaitProbe();
            unsafe
            {
                byte none = 0;
                _ = Recv(-1, &none, 0, MsgDontWait);
                _ = SendBytes(-1, &none, 0, MsgDontWait);
            }

            return true;
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            return false;
        }

        static int EpollWaitProbe() => EpollWait(-1, 0, 1, 0);
    }

    [LibraryImport("libc", EntryPoint = "epoll_create1", SetLastError = true)]
    private static partial int EpollCreate1(int flags);

    [LibraryImport("libc", EntryPoint = "epoll_ctl", SetLastError = true)]
    private static partial int EpollCtl(int epoll, int operation, int fd, nint item);

    [LibraryImport("libc", EntryPoint = "epoll_wait", SetLastError = true)]
    private static partial int EpollWait(int epoll, nint events, int capacity, int timeout);

    [LibraryImport("libc", EntryPoint = "close", SetLastError = true)]
    private static partial int Close(int fd);

    [LibraryImport("libc", EntryPoint = "recv", SetLastError = true)]
    private static unsafe partial nint Recv(int fd, byte* buffer, nuint length, int flags);

    [LibraryImport("libc", EntryPoint = "send", SetLastError = true)]
    private static unsafe partial nint SendBytes(int fd, byte* buffer, nuint length, int flags);
}
