using System.Net;

namespace CoapNet.Messaging;

/// <summary>The base of the exceptions the CoAP messaging layer throws for a failed exchange.</summary>
public class CoapException : Exception
{
    /// <summary>Creates the exception.</summary>
    /// <param name="message">What happened.</param>
    /// <param name="remote">The peer of the exchange, if known.</param>
    public CoapException(string message, IPEndPoint? remote = null)
        : base(message) => RemoteEndPoint = remote;

    /// <summary>The peer of the exchange, if known.</summary>
    public IPEndPoint? RemoteEndPoint { get; }
}

/// <summary>
/// Thrown when a confirmable message was not acknowledged after MAX_RETRANSMIT retransmissions
/// (RFC 7252 section 4.2), or a response did not arrive within the response timeout.
/// </summary>
public sealed class CoapTimeoutException : CoapException
{
    /// <summary>Creates the exception.</summary>
    /// <param name="message">What timed out.</param>
    /// <param name="remote">The peer.</param>
    public CoapTimeoutException(string message, IPEndPoint? remote = null)
        : base(message, remote)
    {
    }
}

/// <summary>Thrown when the peer answered a message with a Reset (RST, RFC 7252 section 4.2): it could not process it.</summary>
public sealed class CoapResetException : CoapException
{
    /// <summary>Creates the exception.</summary>
    /// <param name="message">What was reset.</param>
    /// <param name="remote">The peer.</param>
    public CoapResetException(string message, IPEndPoint? remote = null)
        : base(message, remote)
    {
    }
}

/// <summary>
/// A response carried a critical option that nothing in this stack processes, so it was rejected
/// (RFC 7252 section 5.4.1): acting on it could misread the response, such as taking the first block
/// of a block-wise body (Block2) for the whole.
/// </summary>
public sealed class CoapBadOptionException : CoapException
{
    /// <summary>Creates the exception.</summary>
    /// <param name="message">What was rejected and why.</param>
    /// <param name="option">The option number.</param>
    /// <param name="remote">The server.</param>
    public CoapBadOptionException(string message, CoapNet.Messages.CoapOptionNumber option, IPEndPoint? remote = null)
        : base(message, remote)
    {
        Option = option;
    }

    /// <summary>The critical option that was not processed.</summary>
    public CoapNet.Messages.CoapOptionNumber Option { get; }
}
