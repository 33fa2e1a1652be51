using System.Buffers.Binary;

namespace CoapNet.Multicast;

/// <summary>Which datagrams sent to a group go up to the group endpoint, and which it may send back.</summary>
internal static class GroupDatagrams
{
    private const int Confirmable = 0;
    private const int NonConfirmable = 1;
    private const int Acknowledgement = 2;
    private const int Reset = 3;

    /// <summary>
    /// True for a datagram that may be a group request: CoAP version 1, NON, a request code (class 0, not Empty). RFC
    /// 7252 section 8.1: a request to a group is NON; a CON is an error the server ignores, before the message layer
    /// would acknowledge it; nothing else (ACK, RST, responses, Empty) has a meaning sent to a group, so none of it is
    /// answered either, not even with a Reset.
    /// </summary>
    public static bool IsGroupRequest(ReadOnlySpan<byte> datagram)
        => IsVersion1(datagram)
            && Type(datagram) == NonConfirmable
            && datagram[1] >> 5 == 0
            && datagram[1] != 0;

    /// <summary>
    /// True for what a group endpoint must never send: a Reset (RFC 7252 section 8.1: a server does not respond to a
    /// multicast request with a Reset). The filter above keeps every cause of one from reaching the message layer; this
    /// keeps it so whatever the layers above decide.
    /// </summary>
    public static bool IsReset(ReadOnlySpan<byte> datagram)
        => datagram.Length >= 1 && Type(datagram) == Reset;

    /// <summary>True for a CON or a NON: a message a peer may answer with an ACK or a Reset of the same Message ID (RFC 7252 section 4).</summary>
    public static bool IsAnswerable(ReadOnlySpan<byte> datagram)
        => IsVersion1(datagram) && Type(datagram) is Confirmable or NonConfirmable;

    /// <summary>True for an ACK or a Reset: an answer to a message of ours, matched by its Message ID (RFC 7252 section 4).</summary>
    public static bool IsAnswer(ReadOnlySpan<byte> datagram)
        => IsVersion1(datagram) && Type(datagram) is Acknowledgement or Reset;

    /// <summary>The Message ID of a datagram at least 4 bytes long.</summary>
    public static ushort MessageId(ReadOnlySpan<byte> datagram) => BinaryPrimitives.ReadUInt16BigEndian(datagram[2..]);

    private static bool IsVersion1(ReadOnlySpan<byte> datagram) => datagram.Length >= 4 && datagram[0] >> 6 == 1;

    private static int Type(ReadOnlySpan<byte> datagram) => datagram[0] >> 4 & 0x3;
}
