using System.Net;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Security.Authentication;
using System.Security.Claims;
using CoapNet.Channels;
using CoapNet.Transports;
using CoapNet.WebSockets;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace CoapNet.AspNetCore;

/// <summary>
/// Between ASP.NET Core and the hosted <see cref="Server.CoapServer"/>: answers the HTTP requests to /.well-known/coap
/// (RFC 8323 section 4.1), accepting a WebSocket with the subprotocol "coap" from an allowed origin, and hands each to the
/// listener of its scheme (coap+ws over HTTP, coaps+ws over HTTPS) that the server opened when it started.
/// </summary>
internal sealed class CoapWebSocketHub(IOptions<CoapWebSocketOptions> options, IServiceProvider services)
{
    private readonly object _gate = new();
    private readonly CoapWebSocketOptions _options = options.Value;
    private WebSocketListener? _plain;
    private WebSocketListener? _secure;

    /// <summary>Opens the listener of <paramref name="scheme"/> for a server's endpoint.</summary>
    /// <exception cref="CoapBindException">An endpoint of the scheme is open already: one application path serves one.</exception>
    public WebSocketListener Open(string scheme, IPEndPoint localEndPoint, CoapTransportContext context)
    {
        bool secure = scheme == CoapWebSocketTransportFactory.SecureScheme;
        lock (_gate)
        {
            if ((secure ? _secure : _plain) is { IsOpen: true })
            {
                throw new CoapBindException(scheme, localEndPoint, new SocketException((int)SocketError.AddressAlreadyInUse));
            }

            WebSocketListener listener = new(this, scheme, localEndPoint, context);
            if (secure)
            {
                _secure = listener;
            }
            else
            {
                _plain = listener;
            }

            return listener;
        }
    }

    /// <summary>Forgets a listener the server closed.</summary>
    public void Close(WebSocketListener listener)
    {
        lock (_gate)
        {
            if (_plain == listener)
            {
                _plain = null;
            }

            if (_secure == listener)
            {
                _secure = null;
            }
        }
    }

    /// <summary>The first address Kestrel listens on for the HTTP scheme under <paramref name="scheme"/> (http for coap+ws, https for coaps+ws), once it does.</summary>
    public IPEndPoint? FindServerAddress(string scheme)
    {
        string http = scheme == CoapWebSocketTransportFactory.SecureScheme ? "https" : "http";
        if (services.GetService<IServer>()?.Features.Get<IServerAddressesFeature>() is not { } addresses)
        {
            return null;
        }

        foreach (string address in addresses.Addresses)
        {
            if (Uri.TryCreate(address, UriKind.Absolute, out Uri? uri) && uri.Scheme == http)
            {
                IPAddress ip = IPAddress.TryParse(uri.Host.Trim('[', ']'), out IPAddress? parsed) ? parsed
                    : uri.IsLoopback ? IPAddress.Loopback : IPAddress.IPv6Any;
                return new IPEndPoint(ip, uri.Port);
            }
        }

        return null;
    }

    /// <summary>Answers one request to /.well-known/coap; for an accepted WebSocket, returns when its connection is over.</summary>
    public async Task HandleAsync(HttpContext http)
    {
        if (!http.WebSockets.IsWebSocketRequest)
        {
            await RefuseAsync(http, StatusCodes.Status400BadRequest, "This is the CoAP over WebSockets endpoint (RFC 8323 section 4): open a WebSocket with the subprotocol \"coap\".").ConfigureAwait(false);
            return;
        }

        if (!Requests(http, CoapWebSocketConnection.SubProtocol))
        {
            await RefuseAsync(http, StatusCodes.Status400BadRequest, "A CoAP WebSocket must offer the subprotocol \"coap\" (RFC 8323 section 4.1).").ConfigureAwait(false);
            return;
        }

        if (!IsAllowed(http, out string? origin))
        {
            await RefuseAsync(http, StatusCodes.Status403Forbidden, $"Pages of {origin} may not open this CoAP endpoint (CoapWebSocketOptions.AllowedOrigins).").ConfigureAwait(false);
            return;
        }

        WebSocketListener? listener;
        lock (_gate)
        {
            listener = http.Request.IsHttps ? _secure : _plain;
        }

        if (listener is not { IsOpen: true })
        {
            await RefuseAsync(http, StatusCodes.Status503ServiceUnavailable, "The CoAP server is not running.").ConfigureAwait(false);
            return;
        }

        // RFC 8323 section 4.4: connection health is CoAP's Ping/Pong, so WebSocket keep-alive pings are off.
        WebSocket socket = await http.WebSockets.AcceptWebSocketAsync(new WebSocketAcceptContext
        {
            SubProtocol = CoapWebSocketConnection.SubProtocol,
            KeepAliveInterval = TimeSpan.Zero,
        }).ConfigureAwait(false);
        CoapWebSocketConnection connection = new(
            socket,
            EndPoint(http.Connection.RemoteIpAddress, http.Connection.RemotePort),
            EndPoint(http.Connection.LocalIpAddress, http.Connection.LocalPort),
            SecurityContext(http),
            listener.Connections,
            listener.Buffering);
        if (!listener.TryAdd(connection))
        {
            connection.Abort(new IOException("The CoAP server stopped, or too many WebSockets wait for it."));
            await connection.DisposeAsync().ConfigureAwait(false);
            return;
        }

        using CancellationTokenRegistration aborted = http.RequestAborted.Register(
            static state => ((CoapWebSocketConnection)state!).Abort(new IOException("The HTTP connection was aborted.")),
            connection);
        TaskCompletionSource over = new(TaskCreationOptions.RunContinuationsAsynchronously);
        using CancellationTokenRegistration closed = connection.ConnectionClosed.Register(static state => ((TaskCompletionSource)state!).TrySetResult(), over);
        await over.Task.ConfigureAwait(false);
    }

    private static bool Requests(HttpContext http, string subProtocol)
    {
        foreach (string offered in http.WebSockets.WebSocketRequestedProtocols)
        {
            if (string.Equals(offered, subProtocol, StringComparison.Ordinal))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>
    /// A browser sends the Origin of the page that opens a WebSocket: allowed are the server's own and those configured.
    /// A request without one does not come from a page a browser shows, whose user's credentials another site could use.
    /// </summary>
    private bool IsAllowed(HttpContext http, out string? origin)
    {
        origin = http.Request.Headers.Origin;
        if (string.IsNullOrEmpty(origin))
        {
            return true;
        }

        foreach (string allowed in _options.AllowedOrigins)
        {
            if (allowed == "*" || string.Equals(allowed.TrimEnd('/'), origin, StringComparison.OrdinalIgnoreCase))
            {
                return true;
            }
        }

        return string.Equals(origin, $"{http.Request.Scheme}://{http.Request.Host.Value}", StringComparison.OrdinalIgnoreCase);
    }

    private static async Task RefuseAsync(HttpContext http, int status, string why)
    {
        http.Response.StatusCode = status;
        await http.Response.WriteAsync(why).ConfigureAwait(false);
    }

    private static IPEndPoint EndPoint(IPAddress? address, int port)
    {
        address ??= IPAddress.IPv6None;
        return new IPEndPoint(address.IsIPv4MappedToIPv6 ? address.MapToIPv4() : address, port);
    }

    /// <summary>
    /// What the WebSocket's HTTP request authenticated, as the connection's session: the ASP.NET Core user when
    /// authentication found one, else the TLS client certificate; null when nothing was authenticated.
    /// </summary>
    private static CoapSecurityContext? SecurityContext(HttpContext http)
    {
        CoapPeerIdentity? identity = IsNamed(http.User) ? CoapPeerIdentity.FromUser(http.User)
            : http.Connection.ClientCertificate is { } certificate ? CoapPeerIdentity.FromCertificate(certificate)
            : null;
        if (identity is null)
        {
            return null;
        }

        string protocol = http.Features.Get<ITlsHandshakeFeature>() is { } tls ? "WebSocket over " + TlsName(tls.Protocol) : "WebSocket";
        return new CoapSecurityContext(protocol, identity);
    }

    private static bool IsNamed(ClaimsPrincipal user)
        => user.Identity is { IsAuthenticated: true } identity
            && (!string.IsNullOrEmpty(identity.Name) || !string.IsNullOrEmpty(user.FindFirst(ClaimTypes.NameIdentifier)?.Value));

    private static string TlsName(SslProtocols protocol) => protocol switch
    {
        SslProtocols.Tls13 => "TLS 1.3",
        SslProtocols.Tls12 => "TLS 1.2",
        _ => "TLS",
    };
}
