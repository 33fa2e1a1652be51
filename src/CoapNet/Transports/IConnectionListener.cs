using System.Net;

namespace CoapNet.Transports;

/// <summary>Accepts connections on a local endpoint (a TCP listener, later TLS or WebSockets); knows nothing of CoAP.</summary>
public interface IConnectionListener : IAsyncDisposable
{
    /// <summary>The URI scheme the connections speak once CoAP runs over them ("coap+tcp", ...).</summary>
    string Scheme { get; }

    /// <summary>The local endpoint (with the actual port when 0 was asked for).</summary>
    IPEndPoint LocalEndPoint { get; }

    /// <summary>Waits for the next connection.</summary>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <returns>The connection, or null once the listener is closed.</returns>
    ValueTask<TransportConnection?> AcceptAsync(CancellationToken cancellationToken = default);
}
