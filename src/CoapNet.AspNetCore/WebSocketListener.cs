using System.Net;
using System.Threading.Channels;
using CoapNet.Messaging;
using CoapNet.Transports;
using CoapNet.WebSockets;

namespace CoapNet.AspNetCore;

/// <summary>
/// The listener of a server's coap+ws or coaps+ws endpoint: it accepts nothing itself, but hands the connection layer the
/// WebSockets that ASP.NET Core accepted at /.well-known/coap, which then admits them within the server's connection
/// limits (MaxConnections, MaxConnectionsPerAddress) as it admits TCP connections.
/// </summary>
/// <remarks>
/// Between the two, at most <see cref="PendingBound"/> connections wait for the accept loop; past that the WebSocket is
/// closed at once. Disposed by the server when it stops, after which the endpoint answers 503.
/// </remarks>
internal sealed class WebSocketListener : IConnectionListener
{
    /// <summary>How many accepted WebSockets may wait for the connection layer's accept loop.</summary>
    public const int PendingBound = 128;

    private readonly CoapWebSocketHub _hub;
    private readonly IPEndPoint _configured;
    private readonly Channel<CoapWebSocketConnection> _pending = Channel.CreateBounded<CoapWebSocketConnection>(
        new BoundedChannelOptions(PendingBound) { SingleReader = true, FullMode = BoundedChannelFullMode.Wait });
    private int _closed;

    public WebSocketListener(CoapWebSocketHub hub, string scheme, IPEndPoint configured, CoapTransportContext context)
    {
        _hub = hub;
        Scheme = scheme;
        _configured = configured;
        Connections = context.Connections;
        Buffering = context.Tcp;
    }

    public string Scheme { get; }

    /// <summary>Kestrel's address for the scheme's HTTP scheme once it listens; the endpoint's configured address until then.</summary>
    public IPEndPoint LocalEndPoint => _hub.FindServerAddress(Scheme) ?? _configured;

    /// <summary>The server's connection limits: the maximum message size bounds what each WebSocket receives.</summary>
    public CoapConnectionOptions Connections { get; }

    /// <summary>The server's buffering bounds and close timeout, which each WebSocket connection keeps as a TCP one does.</summary>
    public TcpTransportOptions Buffering { get; }

    /// <summary>Whether the server still takes connections here.</summary>
    public bool IsOpen => Volatile.Read(ref _closed) == 0;

    /// <summary>Hands an accepted WebSocket to the connection layer.</summary>
    /// <returns>False when the listener is closed or too many wait.</returns>
    public bool TryAdd(CoapWebSocketConnection connection) => _pending.Writer.TryWrite(connection);

    public async ValueTask<TransportConnection?> AcceptAsync(CancellationToken cancellationToken = default)
    {
        try
        {
            return await _pending.Reader.ReadAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (ChannelClosedException)
        {
            return null;
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _closed, 1) != 0)
        {
            return;
        }

        _pending.Writer.TryComplete();
        _hub.Close(this);
        while (_pending.Reader.TryRead(out CoapWebSocketConnection? waiting))
        {
            waiting.Abort(new IOException("The CoAP server stopped."));
            await waiting.DisposeAsync().ConfigureAwait(false);
        }
    }
}
