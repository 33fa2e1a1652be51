using System.Net;
using System.Net.WebSockets;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.WebSockets;

/// <summary>A test's own end of a WebSocket to the server: a real <see cref="ClientWebSocket"/>, bytes in and out as the test writes them.</summary>
internal sealed class RawWebSocketPeer : IDisposable
{
    private readonly ClientWebSocket _socket;

    private RawWebSocketPeer(ClientWebSocket socket)
    {
        _socket = socket;
    }

    /// <summary>The HTTP status of the handshake's answer.</summary>
    public HttpStatusCode Status => _socket.HttpStatusCode;

    /// <summary>Why the server closed, once it did.</summary>
    public WebSocketCloseStatus? CloseStatus => _socket.CloseStatus;

    /// <summary>Opens a WebSocket to <paramref name="uri"/> offering <paramref name="subProtocol"/> (none when null) and sending <paramref name="origin"/> (none when null).</summary>
    public static async Task<RawWebSocketPeer> ConnectAsync(Uri uri, string? subProtocol = "coap", string? origin = null)
    {
        ClientWebSocket socket = new();
        socket.Options.CollectHttpResponseDetails = true;
        socket.Options.KeepAliveInterval = TimeSpan.Zero;
        if (subProtocol is not null)
        {
            socket.Options.AddSubProtocol(subProtocol);
        }

        if (origin is not null)
        {
            socket.Options.SetRequestHeader("Origin", origin);
        }

        RawWebSocketPeer peer = new(socket);
        using CancellationTokenSource bound = new(Wait.DefaultBound);
        try
        {
            await socket.ConnectAsync(uri, bound.Token);
        }
        catch (WebSocketException)
        {
            // The handshake was refused: Status says how.
        }

        return peer;
    }

    /// <summary>Whether the handshake succeeded.</summary>
    public bool IsOpen => _socket.State == WebSocketState.Open;

    /// <summary>The subprotocol the server agreed to.</summary>
    public string? SubProtocol => _socket.SubProtocol;

    /// <summary>Sends one binary (or text) message.</summary>
    public async Task SendAsync(byte[] message, WebSocketMessageType type = WebSocketMessageType.Binary)
    {
        using CancellationTokenSource bound = new(Wait.DefaultBound);
        await _socket.SendAsync(message, type, endOfMessage: true, bound.Token);
    }

    /// <summary>Receives the next whole message; null when the server closed the WebSocket.</summary>
    public async Task<byte[]?> ReceiveAsync()
    {
        using CancellationTokenSource bound = new(Wait.DefaultBound);
        using MemoryStream message = new();
        byte[] buffer = new byte[4096];
        while (true)
        {
            WebSocketReceiveResult result = await _socket.ReceiveAsync(buffer, bound.Token);
            if (result.MessageType == WebSocketMessageType.Close)
            {
                return null;
            }

            message.Write(buffer, 0, result.Count);
            if (result.EndOfMessage)
            {
                return message.ToArray();
            }
        }
    }

    /// <summary>Receives the server's CSM (7.01), which comes first (RFC 8323 section 5.3), and sends an empty one of ours.</summary>
    public async Task<byte[]> ExchangeCsmAsync()
    {
        byte[] csm = (await ReceiveAsync())!;
        await SendAsync([0x00, 0xE1]);
        return csm;
    }

    public void Dispose() => _socket.Dispose();
}
