using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;
using CoapNet.Dtls.Records;

namespace CoapNet.Dtls.Sessions;

/// <summary>
/// What the demultiplexer reads of a DTLS record header without decrypting, and the header of a record the server sends
/// in the clear (RFC 6347 section 4.1).
/// </summary>
internal static class DtlsRecords
{
    private const byte Handshake = 22;
    private const byte ClientHelloType = 1;
    private const byte HelloVerifyRequestType = 3;
    private const int HeaderLength = 13;
    private const byte ConnectionIdRecord = 25;

    /// <summary>The length of the Connection IDs the server issues: fixed, since a record does not carry it (RFC 9146 section 4).</summary>
    public const int ConnectionIdLength = 6;

    /// <summary>
    /// Reads the Connection ID of a tls12_cid record (RFC 9146 section 4: type 25, version, epoch, sequence number,
    /// then the Connection ID at offset 11) as a number, without decrypting; false for any other record.
    /// </summary>
    public static bool TryReadConnectionId(ReadOnlySpan<byte> datagram, out ulong connectionId)
    {
        if (datagram.Length < 11 + ConnectionIdLength + 2 || datagram[0] != ConnectionIdRecord)
        {
            connectionId = 0;
            return false;
        }

        connectionId = ToKey(datagram.Slice(11, ConnectionIdLength));
        return true;
    }

    /// <summary>A Connection ID of <see cref="ConnectionIdLength"/> bytes as a number, the key sessions are found by.</summary>
    public static ulong ToKey(ReadOnlySpan<byte> connectionId)
    {
        Span<byte> padded = stackalloc byte[8];
        padded.Clear();
        connectionId.CopyTo(padded[(8 - ConnectionIdLength)..]);
        return BinaryPrimitives.ReadUInt64BigEndian(padded);
    }

    /// <summary>
    /// True when <paramref name="datagram"/> starts with a plaintext ClientHello: a handshake record of epoch 0 whose
    /// first message is client_hello. Only such a record may start a handshake (and only with a valid cookie).
    /// </summary>
    public static bool IsClientHello(ReadOnlySpan<byte> datagram)
        => datagram.Length > HeaderLength
            && datagram[0] == Handshake
            && BinaryPrimitives.ReadUInt16BigEndian(datagram[3..]) == 0
            && datagram[HeaderLength] == ClientHelloType;

    /// <summary>
    /// True when the ClientHello <paramref name="datagram"/> (<see cref="IsClientHello"/>) carries a cookie: after the
    /// 12-byte handshake header, client_version (2 bytes), random (32) and the session ID with its one-byte length comes
    /// the cookie's one-byte length (RFC 6347 section 4.2.1). A client's first ClientHello has none.
    /// </summary>
    public static bool HasCookie(ReadOnlySpan<byte> datagram)
    {
        const int SessionIdLengthAt = HeaderLength + 12 + 2 + 32;
        if (datagram.Length <= SessionIdLengthAt)
        {
            return false;
        }

        int cookieLengthAt = SessionIdLengthAt + 1 + datagram[SessionIdLengthAt];
        return datagram.Length > cookieLengthAt && datagram[cookieLengthAt] > 0;
    }

    /// <summary>
    /// Reads the cookie of a plaintext HelloVerifyRequest: a handshake record of epoch 0 whose message is
    /// hello_verify_request, after the 12-byte handshake header the server_version and the cookie with its one-byte
    /// length (RFC 6347 sections 4.2.1 and 4.2.2); false for anything else, or one cut short.
    /// </summary>
    public static bool TryReadHelloVerifyCookie(ReadOnlySpan<byte> datagram, out ReadOnlySpan<byte> cookie)
    {
        const int CookieLengthAt = HeaderLength + 12 + 2;
        cookie = default;
        if (datagram.Length <= CookieLengthAt
            || datagram[0] != Handshake
            || BinaryPrimitives.ReadUInt16BigEndian(datagram[3..]) != 0
            || datagram[HeaderLength] != HelloVerifyRequestType
            || datagram.Length < CookieLengthAt + 1 + datagram[CookieLengthAt])
        {
            return false;
        }

        cookie = datagram.Slice(CookieLengthAt + 1, datagram[CookieLengthAt]);
        return true;
    }

    /// <summary>
    /// Writes the 13-byte header of a record in the clear (epoch 0): <paramref name="contentType"/>, DTLS 1.2,
    /// <paramref name="sequence"/> and the fragment's <paramref name="length"/> (RFC 6347 section 4.1).
    /// </summary>
    public static void WriteClearHeader(Span<byte> record, byte contentType, long sequence, int length)
    {
        record[0] = contentType;
        RecordProtection.Version.CopyTo(record[1..]);
        BinaryPrimitives.WriteUInt64BigEndian(record[3..], (ulong)sequence);
        BinaryPrimitives.WriteUInt16BigEndian(record[11..], (ushort)length);
    }

    /// <summary>The address and port as the cookie's client identifier (RFC 6347 section 4.2.1: the cookie binds the source).</summary>
    public static byte[] ClientId(IPEndPoint remote)
    {
        Span<byte> address = stackalloc byte[16];
        if (!remote.Address.TryWriteBytes(address, out int length))
        {
            throw new SocketException((int)SocketError.AddressFamilyNotSupported);
        }

        byte[] id = new byte[length + 2];
        address[..length].CopyTo(id);
        BinaryPrimitives.WriteUInt16BigEndian(id.AsSpan(length), (ushort)remote.Port);
        return id;
    }
}
