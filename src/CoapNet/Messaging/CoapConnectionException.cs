using System.Net;

namespace CoapNet.Messaging;

/// <summary>
/// Thrown for an exchange whose connection (CoAP over TCP, RFC 8323) could not be opened, was
/// aborted by either side (7.05 Abort, section 5.6, or a transport error), or was closed before the
/// response came.
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
