using System.Net;
using System.Net.Sockets;

namespace CoapNet.Transports;

/// <summary>
/// A transport could not bind its local endpoint (the port is in use, the address is not this host's, ...). The
/// message names the scheme, the address and the port, and the operating system's reason, such as "Cannot bind
/// the coap+tcp (TCP) endpoint [::]:5683: Address already in use."; the error code is the operating system's.
/// </summary>
/// <remarks>
/// A <see cref="SocketException"/>, so code that catches those, as binding used to throw, still does; the
/// original exception is <see cref="Exception.InnerException"/>'s place, which <see cref="SocketException"/>
/// cannot take, so its error code and text are carried over instead.
/// </remarks>
public sealed class CoapBindException : SocketException
{
    /// <summary>Creates the exception for a failed bind of <paramref name="endPoint"/>.</summary>
    /// <param name="scheme">The URI scheme the endpoint would serve, such as "coap" or "coap+tcp".</param>
    /// <param name="endPoint">The local endpoint that could not be bound.</param>
    /// <param name="reason">What the socket reported.</param>
    public CoapBindException(string scheme, IPEndPoint endPoint, SocketException reason)
        : base((int)(reason ?? throw new ArgumentNullException(nameof(reason))).SocketErrorCode, Describe(scheme, endPoint, reason))
    {
        Scheme = scheme;
        EndPoint = endPoint;
    }

    /// <summary>The URI scheme the endpoint would serve ("coap" over UDP, "coap+tcp" over TCP).</summary>
    public string Scheme { get; }

    /// <summary>The local endpoint that could not be bound.</summary>
    public IPEndPoint EndPoint { get; }

    private static string Describe(string scheme, IPEndPoint endPoint, SocketException reason)
    {
        ArgumentNullException.ThrowIfNull(scheme);
        ArgumentNullException.ThrowIfNull(endPoint);
        string transport = scheme.EndsWith("+tcp", StringComparison.Ordinal) ? "TCP" : "UDP";
        return $"Cannot bind the {scheme} ({transport}) endpoint {endPoint}: {reason.Message.TrimEnd('.')}.";
    }
}
