using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Security.Cryptography.X509Certificates;
using CoapNet.Tls;
using CoapNet.Transports;

namespace CoapNet.WebSockets;

/// <summary>
/// Opens a client's CoAP over WebSockets connections: a <see cref="ClientWebSocket"/> to
/// <c>ws://host:port/.well-known/coap</c> (<c>wss://</c> for coaps+ws) with the subprotocol "coap" (RFC 8323 section 4.1),
/// over a TCP connection to the very endpoint the client resolved, with the URI's host as the HTTP Host and, over TLS,
/// as the name the server's certificate must carry.
/// </summary>
/// <remarks>
/// Each connection has an HTTP handler of its own: a WebSocket holds its TCP connection for its whole life, so there is
/// nothing to pool, and the handler's connect callback is what makes the connection go to the resolved endpoint.
/// </remarks>
internal sealed class WebSocketConnectionFactory(CoapWebSocketTransportFactory transport, CoapTransportContext context) : IConnectionFactory
{
    public string Scheme => transport.Scheme;

    public ValueTask<TransportConnection> ConnectAsync(IPEndPoint remote, CancellationToken cancellationToken = default)
        => ConnectAsync(remote, null, cancellationToken);

    public async ValueTask<TransportConnection> ConnectAsync(IPEndPoint remote, string? hostName, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(remote);
        IPEndPoint? local = null;
        SocketsHttpHandler handler = new()
        {
            UseProxy = false,
            UseCookies = false,
            AllowAutoRedirect = false,
            ConnectCallback = async (_, token) =>
            {
                Socket socket = new(remote.AddressFamily, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
                try
                {
                    await socket.ConnectAsync(remote, token).ConfigureAwait(false);
                    local = (IPEndPoint?)socket.LocalEndPoint;
                    return new NetworkStream(socket, ownsSocket: true);
                }
                catch
                {
                    socket.Dispose();
                    throw;
                }
            },
        };
        if (transport.IsSecure)
        {
            handler.SslOptions = Authentication(context.Client?.Tls ?? new TlsClientOptions());
        }

        HttpMessageInvoker invoker = new(handler);
        ClientWebSocket socket = new();
        socket.Options.AddSubProtocol(CoapWebSocketConnection.SubProtocol);

        // RFC 8323 section 4.4: connection health is CoAP's Ping/Pong, not WebSocket pings (ClientWebSocket's default).
        socket.Options.KeepAliveInterval = TimeSpan.Zero;
        socket.Options.CollectHttpResponseDetails = true;
        try
        {
            Uri uri = Target(remote, hostName);
            try
            {
                await socket.ConnectAsync(uri, invoker, cancellationToken).ConfigureAwait(false);
            }
            catch (WebSocketException refused) when (socket.HttpStatusCode != 0 && socket.HttpStatusCode != HttpStatusCode.SwitchingProtocols)
            {
                throw new WebSocketException(WebSocketError.NotAWebSocket, $"{uri} refused the WebSocket: HTTP {(int)socket.HttpStatusCode} {socket.HttpStatusCode}.", refused);
            }
            catch (WebSocketException failed) when (socket.HttpStatusCode == 0 && failed.GetBaseException() is { } cause && cause != failed && cause is not OperationCanceledException)
            {
                // ClientWebSocket says only "Unable to connect to the remote server"; what went wrong (nothing listens, a
                // certificate the client's trust does not cover) is the innermost exception's to say.
                throw new WebSocketException(failed.WebSocketErrorCode, $"{failed.Message} ({uri}): {cause.Message}", failed);
            }

            if (!string.Equals(socket.SubProtocol, CoapWebSocketConnection.SubProtocol, StringComparison.Ordinal))
            {
                throw new WebSocketException(WebSocketError.UnsupportedProtocol, $"{uri} did not agree to the WebSocket subprotocol \"coap\" (RFC 8323 section 4.1).");
            }

            return new CoapWebSocketConnection(
                socket,
                remote,
                local ?? new IPEndPoint(remote.AddressFamily == AddressFamily.InterNetworkV6 ? IPAddress.IPv6Any : IPAddress.Any, 0),
                null,
                context.Connections,
                context.Tcp,
                invoker);
        }
        catch
        {
            socket.Abort();
            socket.Dispose();
            invoker.Dispose();
            throw;
        }
    }

    /// <summary>The WebSocket URI of a coap+ws or coaps+ws server (RFC 8323 section 8): its authority and /.well-known/coap.</summary>
    private Uri Target(IPEndPoint remote, string? hostName)
    {
        string host = hostName is { Length: > 0 } ? hostName.Trim('[', ']') : remote.Address.ToString();
        if (IPAddress.TryParse(host, out IPAddress? address) && address.AddressFamily == AddressFamily.InterNetworkV6)
        {
            host = "[" + host + "]";
        }

        return new Uri($"{(transport.IsSecure ? "wss" : "ws")}://{host}:{remote.Port}{CoapWebSocketConnection.Path}");
    }

    /// <summary>The client's side of TLS for coaps+ws, from the client's TLS options as a coaps+tcp client has them.</summary>
    private static SslClientAuthenticationOptions Authentication(TlsClientOptions tls)
    {
        X509RevocationMode revocation = tls.CheckCertificateRevocation ? X509RevocationMode.Online : X509RevocationMode.NoCheck;
        SslClientAuthenticationOptions options = new()
        {
            EnabledSslProtocols = tls.EnabledProtocols,
            CertificateRevocationCheckMode = revocation,
            RemoteCertificateValidationCallback = (_, certificate, chain, errors) => tls.CertificateValidator is { } validator
                ? certificate is X509Certificate2 presented && chain is not null && validator(presented, chain, errors)
                : errors == SslPolicyErrors.None,
        };
        if (tls.TrustedRoots is { } roots)
        {
            // Only these roots are trusted, not the system's (TlsOptions.TrustedRoots).
            X509ChainPolicy policy = new() { TrustMode = X509ChainTrustMode.CustomRootTrust, RevocationMode = revocation };
            policy.CustomTrustStore.AddRange(roots);
            options.CertificateChainPolicy = policy;
        }

        if (tls.Certificate is { } certificate)
        {
            options.ClientCertificates = [certificate];
        }

        return options;
    }
}
