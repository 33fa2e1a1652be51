using System.Net;

namespace CoapNet.Transports;

/// <summary>Opens connections to remote endpoints (TCP, later TLS or WebSockets); knows nothing of CoAP.</summary>
public interface IConnectionFactory
{
    /// <summary>The URI scheme the connections speak once CoAP runs over them ("coap+tcp", ...).</summary>
    string Scheme { get; }

    /// <summary>Connects to <paramref name="remote"/>.</summary>
    /// <param name="remote">The peer.</param>
    /// <param name="cancellationToken">Cancels the attempt.</param>
    /// <returns>The open connection.</returns>
    /// <exception cref="System.Net.Sockets.SocketException">The peer cannot be reached or refuses.</exception>
    ValueTask<TransportConnection> ConnectAsync(IPEndPoint remote, CancellationToken cancellationToken = default);
}
