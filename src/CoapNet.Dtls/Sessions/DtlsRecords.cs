using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;

namespace CoapNet.Dtls.Sessions;

/// <summary>What the demultiplexer reads of a DTLS record header without decrypting (RFC 6347 section 4.1).</summary>
internal static class DtlsRecords
{
    private const byte Handshake = 22;
    private const byte ClientHelloType = 1;
    private const int HeaderLength = 13;

    /// <summary>
    /// True when <paramref name="datagram"/> starts with a plaintext ClientHello: a handshake record of epoch 0 whose
    /// first message is client_hello. Only such a record may start a handshake (and only with a valid cookie).
    /// </summary>
    public static bool IsClientHello(ReadOnlySpan<byte> datagram)
        => datagram.Length > HeaderLength
            && datagram[0] == Handshake
            && BinaryPrimitives.ReadUInt16BigEndian(datagram[3..]) == 0
            && datagram[HeaderLength] == ClientHelloType;

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
