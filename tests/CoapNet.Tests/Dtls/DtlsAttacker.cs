using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;
using CoapNet.Dtls;
using CoapNet.Dtls.Sessions;
using CoapNet.Tests.Infrastructure;
using CoapNet.Transports;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// A raw UDP socket that speaks just enough DTLS to hold a server's handshake place: it sends our client's ClientHello,
/// answers the HelloVerifyRequest with the cookie (RFC 6347 section 4.2.1), and then says nothing, as the attack of
/// issue 34 does; and reads what the server sends it.
/// </summary>
internal sealed class DtlsAttacker : IDisposable
{
    public const byte Handshake = 22;
    public const byte Alert = 21;
    public const byte ServerHello = 2;
    public const byte HelloVerifyRequest = 3;

    private static readonly SemaphoreSlim CaptureGate = new(1, 1);
    private static byte[]? s_clientHello;
    private readonly UdpClient _socket;
    private readonly IPEndPoint _server;
    private readonly byte[] _withCookie;

    private DtlsAttacker(UdpClient socket, IPEndPoint server, byte[] withCookie)
    {
        _socket = socket;
        _server = server;
        _withCookie = withCookie;
    }

    /// <summary>Where the attacker sends from.</summary>
    public IPEndPoint LocalEndPoint => (IPEndPoint)_socket.Client.LocalEndPoint!;

    /// <summary>
    /// Completes the cookie exchange with <paramref name="server"/> from <paramref name="source"/> (127.0.0.1 by
    /// default; any 127.0.0.0/8 address binds on Linux): the ClientHello with the cookie is the last thing it sends.
    /// </summary>
    public static async Task<DtlsAttacker> CompleteCookieExchangeAsync(IPEndPoint server, IPAddress? source = null)
    {
        UdpClient socket = new(new IPEndPoint(source ?? IPAddress.Loopback, 0));
        try
        {
            byte[] hello = await ClientHelloAsync();
            await socket.SendAsync(hello, server);
            byte[] answer = await ReceiveAsync(socket);
            DtlsRecords.TryReadHelloVerifyCookie(answer, out ReadOnlySpan<byte> cookie).Should().BeTrue("a ClientHello without a cookie is answered with a HelloVerifyRequest");
            byte[] withCookie = WithCookie(hello, cookie, recordSequence: 1);
            await socket.SendAsync(withCookie, server);
            return new DtlsAttacker(socket, server, withCookie);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    /// <summary>
    /// Waits until the server has read every datagram sent to it so far: it reads its socket in order on one thread,
    /// so once it answers a new ClientHello (from a socket of its own) with a HelloVerifyRequest, what came before has
    /// been handled.
    /// </summary>
    public static async Task BarrierAsync(IPEndPoint server)
    {
        using UdpClient probe = new(new IPEndPoint(IPAddress.Loopback, 0));
        await probe.SendAsync(await ClientHelloAsync(), server);
        byte[] answer = await ReceiveAsync(probe);
        answer[13].Should().Be(HelloVerifyRequest);
    }

    /// <summary>The first datagram our DTLS client sends: a ClientHello without a cookie (captured once).</summary>
    public static async Task<byte[]> ClientHelloAsync()
    {
        await CaptureGate.WaitAsync();
        try
        {
            if (s_clientHello is null)
            {
                using UdpClient fakeServer = new(new IPEndPoint(IPAddress.Loopback, 0));
                await using DtlsClientTransport transport = new(new UdpTransport(new IPEndPoint(IPAddress.Loopback, 0)), new DtlsClientOptions { PskIdentity = "x", PskKey = [1] });
                transport.Start(new NullReceiver());
                _ = transport.ConnectAsync((IPEndPoint)fakeServer.Client.LocalEndPoint!);
                s_clientHello = await ReceiveAsync(fakeServer);
            }

            return s_clientHello;
        }
        finally
        {
            CaptureGate.Release();
        }
    }

    /// <summary>Sends the ClientHello with its cookie again, in a record with <paramref name="recordSequence"/> (a retransmission).</summary>
    public async Task ResendClientHelloAsync(long recordSequence)
    {
        byte[] again = (byte[])_withCookie.Clone();
        WriteSequence(again, recordSequence);
        await _socket.SendAsync(again, _server);
    }

    /// <summary>Sends raw bytes to the server from this socket.</summary>
    public async Task SendAsync(byte[] datagram) => await _socket.SendAsync(datagram, _server);

    /// <summary>The next datagram that matches <paramref name="match"/>; others (retransmitted flights) are skipped.</summary>
    public async Task<byte[]> ReceiveAsync(Func<byte[], bool> match)
    {
        while (true)
        {
            byte[] datagram = await ReceiveAsync(_socket);
            if (match(datagram))
            {
                return datagram;
            }
        }
    }

    /// <summary>The next ServerHello: the server started a handshake with this socket.</summary>
    public Task<byte[]> ReceiveServerHelloAsync() => ReceiveAsync(static d => d.Length > 13 && d[0] == Handshake && BinaryPrimitives.ReadUInt16BigEndian(d.AsSpan(3)) == 0 && d[13] == ServerHello);

    /// <summary>The description of the next alert in the clear (epoch 0): the server ended the handshake, or refused it.</summary>
    public async Task<byte> ReceiveAlertAsync()
    {
        byte[] alert = await ReceiveAsync(static d => d.Length == 15 && d[0] == Alert && BinaryPrimitives.ReadUInt16BigEndian(d.AsSpan(3)) == 0);
        alert[13].Should().Be(2, "a fatal alert");
        return alert[14];
    }

    /// <summary>
    /// A DTLS 1.2 record of <paramref name="type"/> and <paramref name="epoch"/> with 40 random bytes where its
    /// ciphertext and tag belong: well formed, and authenticating under no key.
    /// </summary>
    public static byte[] Forged(Random random, byte type, ushort epoch)
    {
        byte[] record = new byte[13 + 40];
        random.NextBytes(record);
        record[0] = type;
        record[1] = 0xFE;
        record[2] = 0xFD;
        BinaryPrimitives.WriteUInt16BigEndian(record.AsSpan(3), epoch);
        BinaryPrimitives.WriteUInt16BigEndian(record.AsSpan(11), 40);
        return record;
    }

    /// <summary>The record sequence number of <paramref name="record"/> (RFC 6347 section 4.1).</summary>
    public static long Sequence(byte[] record) => (long)(BinaryPrimitives.ReadUInt64BigEndian(record.AsSpan(3)) & 0xFFFF_FFFF_FFFFUL);

    public void Dispose() => _socket.Dispose();

    /// <summary>
    /// The ClientHello <paramref name="hello"/> with <paramref name="cookie"/> in its (empty) cookie field, message_seq 1
    /// and the record sequence number given: the second ClientHello of RFC 6347 section 4.2.1.
    /// </summary>
    internal static byte[] WithCookie(byte[] hello, ReadOnlySpan<byte> cookie, long recordSequence)
    {
        // Record header (13), handshake header (12), client_version (2), random (32), session_id, then the cookie.
        const int Body = 25;
        int sessionId = hello[Body + 34];
        int cookieAt = Body + 35 + sessionId;
        hello[cookieAt].Should().Be(0, "the first ClientHello has an empty cookie");
        byte[] result = new byte[hello.Length + cookie.Length];
        hello.AsSpan(0, cookieAt).CopyTo(result);
        result[cookieAt] = (byte)cookie.Length;
        cookie.CopyTo(result.AsSpan(cookieAt + 1));
        hello.AsSpan(cookieAt + 1).CopyTo(result.AsSpan(cookieAt + 1 + cookie.Length));
        int bodyLength = result.Length - Body;
        BinaryPrimitives.WriteUInt16BigEndian(result.AsSpan(11), (ushort)(result.Length - 13));
        WriteUInt24(result.AsSpan(14), bodyLength);
        BinaryPrimitives.WriteUInt16BigEndian(result.AsSpan(17), 1);
        WriteUInt24(result.AsSpan(22), bodyLength);
        WriteSequence(result, recordSequence);
        return result;
    }

    private static void WriteSequence(byte[] record, long sequence)
    {
        Span<byte> field = stackalloc byte[8];
        BinaryPrimitives.WriteInt64BigEndian(field, sequence);
        field[2..].CopyTo(record.AsSpan(5, 6));
    }

    private static void WriteUInt24(Span<byte> to, int value)
    {
        to[0] = (byte)(value >> 16);
        to[1] = (byte)(value >> 8);
        to[2] = (byte)value;
    }

    internal static async Task<byte[]> ReceiveAsync(UdpClient socket)
    {
        using CancellationTokenSource bound = new(Wait.DefaultBound);
        return (await socket.ReceiveAsync(bound.Token)).Buffer;
    }

    private sealed class NullReceiver : IDatagramReceiver
    {
        public void OnDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote)
        {
        }
    }
}
