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

    /// <summary>
    /// Connects to <paramref name="remote"/>, the server a client addressed as <paramref name="hostName"/>: a secure
    /// factory sends the name in its handshake (TLS SNI) and checks the server's certificate against it. A factory to
    /// which names do not matter (plain TCP) ignores it, which is what this default does.
    /// </summary>
    /// <param name="remote">The peer.</param>
    /// <param name="hostName">The name the client addressed (<see cref="Channels.CoapPeer.HostName"/>); null for none.</param>
    /// <param name="cancellationToken">Cancels the attempt.</param>
    /// <returns>The open connection.</returns>
    /// <exception cref="System.Net.Sockets.SocketException">The peer cannot be reached or refuses.</exception>
    ValueTask<TransportConnection> ConnectAsync(IPEndPoint remote, string? hostName, CancellationToken cancellationToken)
        => ConnectAsync(remote, cancellationToken);
}
