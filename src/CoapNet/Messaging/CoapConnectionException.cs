using System.Net;

namespace CoapNet.Messaging;

/// <summary>
/// Thrown for an exchange whose connection (CoAP over TCP or TLS, RFC 8323) could not be opened, was
/// aborted by either side (7.05 Abort, section 5.6, or a transport error), or was closed before the
/// response came; and for one whose DTLS session (coaps, RFC 7252 section 9.1) ended before the response
/// came, the message saying why (close_notify, a fatal alert by name, ageing, or a confirmable message in it
/// that went unacknowledged): its response can only come in that session (section 9.1.1).
/// </summary>
public sealed class CoapConnectionException : CoapException
{
    /// <summary>Creates the exception.</summary>
    /// <param name="message">What happened to the connection, with the reason.</param>
    /// <param name="remote">The peer.</param>
    /// <param name="innerException">The transport's error, if any.</param>
    public CoapConnectionException(string message, IPEndPoint? remote = null, Exception? innerException = null)
        : base(message, remote)
        => Cause = innerException;

    /// <summary>The transport's error behind this one, if any.</summary>
    public Exception? Cause { get; }
}
