namespace CoapNet.Serialization;

/// <summary>How CoAP messages are framed on the wire.</summary>
public enum CoapFraming : byte
{
    /// <summary>
    /// RFC 7252 section 3: one message per datagram, a 4-byte header with version, type, token
    /// length, code and Message ID. Used over UDP and DTLS.
    /// </summary>
    Datagram = 0,

    /// <summary>
    /// RFC 8323 section 3.2: a Len/TKL byte, 0-4 extended length bytes and the code; no version,
    /// type or Message ID. Messages follow one another on a byte stream. Used over TCP and TLS.
    /// </summary>
    Stream = 1,
}
