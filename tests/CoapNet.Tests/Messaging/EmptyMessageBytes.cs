namespace CoapNet.Tests.Messaging;

/// <summary>Empty messages written out by hand, byte for byte (RFC 7252 section 3), to compare wire output against.</summary>
internal static class EmptyMessageBytes
{
    /// <summary>Version 1, type ACK (2), TKL 0, code 0.00, the Message ID in network order.</summary>
    public static byte[] EmptyAck(ushort messageId) => [0x60, 0x00, (byte)(messageId >> 8), (byte)messageId];

    /// <summary>Version 1, type RST (3), TKL 0, code 0.00, the Message ID in network order.</summary>
    public static byte[] Reset(ushort messageId) => [0x70, 0x00, (byte)(messageId >> 8), (byte)messageId];

    /// <summary>Version 1, type CON (0), TKL 0, code 0.00: a CoAP ping.</summary>
    public static byte[] EmptyConfirmable(ushort messageId) => [0x40, 0x00, (byte)(messageId >> 8), (byte)messageId];
}
