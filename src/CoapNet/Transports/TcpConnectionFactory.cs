using System.Net;
using System.Net.Sockets;
using CoapNet.Channels;

namespace CoapNet.Transports;

/// <summary>Opens TCP connections to remote endpoints (scheme "coap+tcp", RFC 8323); knows nothing of CoAP.</summary>
public sealed class TcpConnectionFactory : IConnectionFactory
{
    private readonly TcpTransportOptions _options;

    /// <summary>Creates a factory.</summary>
    /// <param name="options">Buffering bounds; null for the defaults.</param>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range.</exception>
    public TcpConnectionFactory(TcpTransportOptions? options = null)
    {
        _options = options ?? new TcpTransportOptions();
        _options.Validate();
    }

    /// <inheritdoc/>
    public string Scheme => CoapPeer.TcpScheme;

    /// <inheritdoc/>
    public async ValueTask<TransportConnection> ConnectAsync(IPEndPoint remote, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(remote);
        Socket socket = new(remote.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            await socket.ConnectAsync(remote, cancellationToken).ConfigureAwait(false);
            return SocketStreamConnection.Start(socket, _options);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }
}
