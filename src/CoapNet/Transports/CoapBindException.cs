using System.Net;
using System.Net.Sockets;
using System.Text;

namespace CoapNet.Transports;

/// <summary>
/// An endpoint could not bind its local address (the port is in use, the address is not this host's, ...). A transport
/// throws it naming its scheme, address and port and the operating system's reason ("Cannot bind the coap+tcp (TCP)
/// endpoint [::]:5683: Address already in use."); a server that starts throws one for all its endpoints that failed,
/// each named by its address as users write it and its configuration name ("Cannot bind coaps://[::]:5684
/// (Coap:Endpoints:secure): Address already in use."), listed in <see cref="Failures"/>. The error code is the
/// operating system's (the first failure's).
/// </summary>
/// <remarks>
/// A <see cref="SocketException"/>, so code that catches those, as binding used to throw, still does; the
/// original exception is <see cref="Exception.InnerException"/>'s place, which <see cref="SocketException"/>
/// cannot take, so its error code and text are carried over instead.
/// </remarks>
public sealed class CoapBindException : SocketException
{
    private readonly string _message;

    /// <summary>Creates the exception for a failed bind of <paramref name="endPoint"/>.</summary>
    /// <param name="scheme">The URI scheme the endpoint would serve, such as "coap" or "coap+tcp".</param>
    /// <param name="endPoint">The local endpoint that could not be bound.</param>
    /// <param name="reason">What the socket reported.</param>
    public CoapBindException(string scheme, IPEndPoint endPoint, SocketException reason)
        : base((int)(reason ?? throw new ArgumentNullException(nameof(reason))).SocketErrorCode)
    {
        ArgumentNullException.ThrowIfNull(scheme);
        ArgumentNullException.ThrowIfNull(endPoint);
        Scheme = scheme;
        EndPoint = endPoint;
        Reason = reason.Message.TrimEnd('.');
        string transport = scheme.EndsWith("+tcp", StringComparison.Ordinal) ? "TCP" : "UDP";
        _message = $"Cannot bind the {scheme} ({transport}) endpoint {endPoint}: {Reason}.";
        Failures = [this];
    }

    /// <summary>A server's endpoint could not be bound: <paramref name="failure"/> as its transport reported it, named by the endpoint.</summary>
    internal CoapBindException(Server.CoapListenOptions endpoint, CoapBindException failure)
        : base((int)failure.SocketErrorCode)
    {
        Scheme = endpoint.Address.Scheme;
        EndPoint = failure.EndPoint;
        Name = endpoint.Name;
        Reason = failure.Reason;
        _message = $"Cannot bind {Describe(this)}: {Reason}.";
        Failures = [this];
    }

    /// <summary>Several of a server's endpoints could not be bound: all of them, in one exception.</summary>
    internal CoapBindException(IReadOnlyList<CoapBindException> failures)
        : base((int)failures[0].SocketErrorCode)
    {
        Scheme = failures[0].Scheme;
        EndPoint = failures[0].EndPoint;
        Name = failures[0].Name;
        Reason = failures[0].Reason;
        Failures = failures;
        StringBuilder message = new($"Cannot bind {failures.Count} endpoints: ");
        for (int i = 0; i < failures.Count; i++)
        {
            message.Append(i == 0 ? string.Empty : "; ").Append(Describe(failures[i])).Append(": ").Append(failures[i].Reason);
        }

        _message = message.Append('.').ToString();
    }

    /// <summary>The URI scheme the endpoint would serve ("coap", "coap+tcp", "coaps", "coaps+tcp"); the first one's when several failed.</summary>
    public string Scheme { get; }

    /// <summary>The local endpoint that could not be bound; the first one's when several failed.</summary>
    public IPEndPoint EndPoint { get; }

    /// <summary>The name of the server's endpoint that failed (<see cref="Server.CoapListenOptions.Name"/>, such as "Coap:Endpoints:udp"), or null.</summary>
    public string? Name { get; }

    /// <summary>Every endpoint that could not be bound, each with its own scheme, address, name and reason; this exception alone when one did.</summary>
    public IReadOnlyList<CoapBindException> Failures { get; }

    /// <inheritdoc/>
    public override string Message => _message;

    /// <summary>What the operating system said, without a final period.</summary>
    internal string Reason { get; }

    private static string Describe(CoapBindException failure)
    {
        string address = new CoapAddress(failure.Scheme, failure.EndPoint).ToString();
        return failure.Name is null ? address : $"{address} ({failure.Name})";
    }
}
