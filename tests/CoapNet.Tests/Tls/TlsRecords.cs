namespace CoapNet.Tests.Tls;

/// <summary>Reads raw bytes as a sequence of TLS records (RFC 8446 section 5.1), to tell TLS on the wire from anything else.</summary>
internal static class TlsRecords
{
    /// <summary>
    /// True when <paramref name="bytes"/> is whole TLS records one after the other: each with a TLS content type
    /// (change_cipher_spec 20, alert 21, handshake 22, application_data 23), version 3.x and a length within bounds.
    /// </summary>
    public static bool AreAllRecords(ReadOnlySpan<byte> bytes)
    {
        while (!bytes.IsEmpty)
        {
            if (bytes.Length < 5 || bytes[0] is < 20 or > 23 || bytes[1] != 3)
            {
                return false;
            }

            int length = (bytes[3] << 8) | bytes[4];
            if (length > (1 << 14) + 256 || bytes.Length < 5 + length)
            {
                return false;
            }

            bytes = bytes[(5 + length)..];
        }

        return true;
    }
}
