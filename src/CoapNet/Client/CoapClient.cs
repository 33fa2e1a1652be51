using System.Globalization;
using System.Net;
using System.Net.Sockets;
using CoapNet.LinkFormat;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Transports;

namespace CoapNet.Client;

/// <summary>
/// A CoAP client over UDP: GET, POST, PUT, DELETE, FETCH, PATCH and iPATCH, ping and resource
/// discovery, each in a synchronous and an asynchronous form. Requests are confirmable by default,
/// retransmitted per RFC 7252 section 4.2, and limited to NSTART outstanding per server.
/// </summary>
/// <remarks>
/// One client may be used from many threads at once. The synchronous methods send on the calling
/// thread and block it until the response; they never need the caller's synchronization context,
/// so they do not deadlock under a single-threaded one.
/// </remarks>
public sealed partial class CoapClient : IDisposable, IAsyncDisposable
{
    private readonly CoapEndpoint _endpoint;
    private readonly CoapMessageType _requestType;

    /// <summary>Creates a client on its own UDP socket (dual-stack, a free port unless configured).</summary>
    /// <param name="options">Settings; null for the defaults.</param>
    /// <exception cref="ArgumentException">An option is out of range.</exception>
    /// <exception cref="SocketException">The local endpoint cannot be bound.</exception>
    public CoapClient(CoapClientOptions? options = null)
        : this(CreateTransport(options), options)
    {
    }

    /// <summary>Creates a client over a transport of your own (it becomes the client's and is disposed with it).</summary>
    /// <param name="transport">The transport.</param>
    /// <param name="options">Settings; null for the defaults.</param>
    public CoapClient(IDatagramTransport transport, CoapClientOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(transport);
        options ??= new CoapClientOptions();
        _requestType = options.UseNonConfirmable ? CoapMessageType.NonConfirmable : CoapMessageType.Confirmable;
        _endpoint = new CoapEndpoint(transport, options.Endpoint);
        _endpoint.Start();
    }

    /// <summary>The local endpoint the client sends from.</summary>
    public IPEndPoint LocalEndPoint => _endpoint.LocalEndPoint;

    /// <summary>Sends GET (RFC 7252 section 5.8.1).</summary>
    /// <param name="uri">A coap:// URI.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The response.</returns>
    /// <exception cref="ArgumentException">The URI is not a coap:// URI.</exception>
    /// <exception cref="CoapTimeoutException">No acknowledgement or response in time.</exception>
    /// <exception cref="CoapResetException">The server answered with RST.</exception>
    /// <exception cref="OperationCanceledException">The token was canceled.</exception>
    public CoapResponse Get(Uri uri, CancellationToken cancellationToken = default) => Send(CoapCode.Get, uri, default, null, cancellationToken);

    /// <inheritdoc cref="Get(Uri, CancellationToken)"/>
    public Task<CoapResponse> GetAsync(Uri uri, CancellationToken cancellationToken = default) => SendAsync(CoapCode.Get, uri, default, null, cancellationToken);

    /// <summary>Sends DELETE (RFC 7252 section 5.8.4).</summary>
    /// <inheritdoc cref="Get(Uri, CancellationToken)"/>
    public CoapResponse Delete(Uri uri, CancellationToken cancellationToken = default) => Send(CoapCode.Delete, uri, default, null, cancellationToken);

    /// <inheritdoc cref="Delete(Uri, CancellationToken)"/>
    public Task<CoapResponse> DeleteAsync(Uri uri, CancellationToken cancellationToken = default) => SendAsync(CoapCode.Delete, uri, default, null, cancellationToken);

    /// <summary>Sends POST with a payload (RFC 7252 section 5.8.2).</summary>
    /// <param name="uri">A coap:// URI.</param>
    /// <param name="payload">The request payload.</param>
    /// <param name="contentFormat">The Content-Format of the payload, or null.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The response.</returns>
    /// <exception cref="ArgumentException">The URI is not a coap:// URI, or the message is too large for a datagram.</exception>
    /// <exception cref="CoapTimeoutException">No acknowledgement or response in time.</exception>
    /// <exception cref="CoapResetException">The server answered with RST.</exception>
    /// <exception cref="OperationCanceledException">The token was canceled.</exception>
    public CoapResponse Post(Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat = null, CancellationToken cancellationToken = default)
        => Send(CoapCode.Post, uri, payload, contentFormat, cancellationToken);

    /// <inheritdoc cref="Post(Uri, ReadOnlyMemory{byte}, ushort?, CancellationToken)"/>
    public Task<CoapResponse> PostAsync(Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat = null, CancellationToken cancellationToken = default)
        => SendAsync(CoapCode.Post, uri, payload, contentFormat, cancellationToken);

    /// <summary>Sends PUT with a payload (RFC 7252 section 5.8.3).</summary>
    /// <inheritdoc cref="Post(Uri, ReadOnlyMemory{byte}, ushort?, CancellationToken)"/>
    public CoapResponse Put(Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat = null, CancellationToken cancellationToken = default)
        => Send(CoapCode.Put, uri, payload, contentFormat, cancellationToken);

    /// <inheritdoc cref="Put(Uri, ReadOnlyMemory{byte}, ushort?, CancellationToken)"/>
    public Task<CoapResponse> PutAsync(Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat = null, CancellationToken cancellationToken = default)
        => SendAsync(CoapCode.Put, uri, payload, contentFormat, cancellationToken);

    /// <summary>Sends FETCH with a payload that selects what to return (RFC 8132 section 2).</summary>
    /// <inheritdoc cref="Post(Uri, ReadOnlyMemory{byte}, ushort?, CancellationToken)"/>
    public CoapResponse Fetch(Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat = null, CancellationToken cancellationToken = default)
        => Send(CoapCode.Fetch, uri, payload, contentFormat, cancellationToken);

    /// <inheritdoc cref="Fetch(Uri, ReadOnlyMemory{byte}, ushort?, CancellationToken)"/>
    public Task<CoapResponse> FetchAsync(Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat = null, CancellationToken cancellationToken = default)
        => SendAsync(CoapCode.Fetch, uri, payload, contentFormat, cancellationToken);

    /// <summary>Sends PATCH with a patch document (RFC 8132 section 3).</summary>
    /// <inheritdoc cref="Post(Uri, ReadOnlyMemory{byte}, ushort?, CancellationToken)"/>
    public CoapResponse Patch(Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat = null, CancellationToken cancellationToken = default)
        => Send(CoapCode.Patch, uri, payload, contentFormat, cancellationToken);

    /// <inheritdoc cref="Patch(Uri, ReadOnlyMemory{byte}, ushort?, CancellationToken)"/>
    public Task<CoapResponse> PatchAsync(Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat = null, CancellationToken cancellationToken = default)
        => SendAsync(CoapCode.Patch, uri, payload, contentFormat, cancellationToken);

    /// <summary>Sends iPATCH, the idempotent PATCH (RFC 8132 section 3).</summary>
    /// <inheritdoc cref="Post(Uri, ReadOnlyMemory{byte}, ushort?, CancellationToken)"/>
    public CoapResponse IPatch(Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat = null, CancellationToken cancellationToken = default)
        => Send(CoapCode.IPatch, uri, payload, contentFormat, cancellationToken);

    /// <inheritdoc cref="IPatch(Uri, ReadOnlyMemory{byte}, ushort?, CancellationToken)"/>
    public Task<CoapResponse> IPatchAsync(Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat = null, CancellationToken cancellationToken = default)
        => SendAsync(CoapCode.IPatch, uri, payload, contentFormat, cancellationToken);

    /// <summary>
    /// Sends a request built by hand to <paramref name="destination"/>. Its type (CON or NON), code and
    /// options are sent as they are; the client assigns the Message ID and, when empty, the token.
    /// </summary>
    /// <param name="request">The request.</param>
    /// <param name="destination">The server.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The response.</returns>
    /// <exception cref="ArgumentException">The message is not a CON or NON request, or cannot be serialized.</exception>
    /// <exception cref="CoapTimeoutException">No acknowledgement or response in time.</exception>
    /// <exception cref="CoapResetException">The server answered with RST.</exception>
    /// <exception cref="OperationCanceledException">The token was canceled.</exception>
    public CoapResponse Send(CoapMessage request, IPEndPoint destination, CancellationToken cancellationToken = default)
        => new(_endpoint.SendRequest(request, destination, cancellationToken), destination);

    /// <inheritdoc cref="Send(CoapMessage, IPEndPoint, CancellationToken)"/>
    public async Task<CoapResponse> SendAsync(CoapMessage request, IPEndPoint destination, CancellationToken cancellationToken = default)
        => new(await _endpoint.SendRequestAsync(request, destination, cancellationToken).ConfigureAwait(false), destination);

    /// <summary>
    /// Sends a request built by hand to the server its options name: Uri-Host (an IP address or a
    /// name resolved through DNS) and Uri-Port (default 5683).
    /// </summary>
    /// <param name="request">The request, with a Uri-Host option.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The response.</returns>
    /// <exception cref="ArgumentException">The request has no Uri-Host.</exception>
    /// <exception cref="SocketException">The host name cannot be resolved.</exception>
    public CoapResponse Send(CoapMessage request, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(request);
        string host = RequireUriHost(request);
        return Send(request, new IPEndPoint(Resolve(host), request.UriPort ?? CoapMessage.GetDefaultPort("coap")), cancellationToken);
    }

    /// <inheritdoc cref="Send(CoapMessage, CancellationToken)"/>
    public async Task<CoapResponse> SendAsync(CoapMessage request, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(request);
        string host = RequireUriHost(request);
        IPAddress address = await ResolveAsync(host, cancellationToken).ConfigureAwait(false);
        return await SendAsync(request, new IPEndPoint(address, request.UriPort ?? CoapMessage.GetDefaultPort("coap")), cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Sends a CoAP ping (an empty CON) and waits for the RST that answers it (RFC 7252 section 4.3).</summary>
    /// <param name="uri">A coap:// URI naming the server; its path is ignored.</param>
    /// <param name="cancellationToken">Cancels the ping.</param>
    /// <returns>The round-trip time.</returns>
    /// <exception cref="CoapTimeoutException">No answer after MAX_RETRANSMIT retransmissions.</exception>
    public TimeSpan Ping(Uri uri, CancellationToken cancellationToken = default) => _endpoint.Ping(ResolveDestination(uri), cancellationToken);

    /// <inheritdoc cref="Ping(Uri, CancellationToken)"/>
    public async Task<TimeSpan> PingAsync(Uri uri, CancellationToken cancellationToken = default)
        => await _endpoint.PingAsync(await ResolveDestinationAsync(uri, cancellationToken).ConfigureAwait(false), cancellationToken).ConfigureAwait(false);

    /// <summary>
    /// Discovers the server's resources: GET /.well-known/core, parsed as CoRE Link Format (RFC 6690, RFC 7252 section 7.2).
    /// </summary>
    /// <param name="uri">A coap:// URI naming the server; its path is ignored.</param>
    /// <param name="query">An optional filter such as "rt=temperature-c" (RFC 6690 section 4.1).</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The links.</returns>
    /// <exception cref="CoapException">The server answered with an error code.</exception>
    /// <exception cref="FormatException">The answer is not valid link format.</exception>
    public IReadOnlyList<CoapLink> Discover(Uri uri, string? query = null, CancellationToken cancellationToken = default)
        => ParseDiscovery(Get(WellKnownCore(uri, query), cancellationToken));

    /// <inheritdoc cref="Discover(Uri, string?, CancellationToken)"/>
    public async Task<IReadOnlyList<CoapLink>> DiscoverAsync(Uri uri, string? query = null, CancellationToken cancellationToken = default)
        => ParseDiscovery(await GetAsync(WellKnownCore(uri, query), cancellationToken).ConfigureAwait(false));

    /// <summary>Closes the socket; pending requests fail with <see cref="ObjectDisposedException"/>.</summary>
    public void Dispose() => _endpoint.Dispose();

    /// <inheritdoc cref="Dispose"/>
    /// <returns>A task that completes when the socket is closed.</returns>
    public ValueTask DisposeAsync() => _endpoint.DisposeAsync();

    private static UdpTransport CreateTransport(CoapClientOptions? options)
    {
        IPEndPoint local = options?.LocalEndPoint ?? new IPEndPoint(IPAddress.IPv6Any, 0);
        return new UdpTransport(new UdpTransportOptions { Address = local.Address, Port = local.Port });
    }

    private static string RequireUriHost(CoapMessage request)
        => request.UriHost ?? throw new ArgumentException("The request has no Uri-Host option; pass the destination endpoint instead.", nameof(request));

    private static Uri WellKnownCore(Uri uri, string? query)
    {
        ArgumentNullException.ThrowIfNull(uri);
        UriBuilder builder = new(uri) { Path = "/.well-known/core", Query = query ?? string.Empty, Fragment = string.Empty };
        return builder.Uri;
    }

    private static IReadOnlyList<CoapLink> ParseDiscovery(CoapResponse response)
    {
        response.EnsureSuccess();
        if (response.ContentFormat is ushort format && format != CoapContentFormat.LinkFormat)
        {
            throw new FormatException($"/.well-known/core answered with Content-Format {format.ToString(CultureInfo.InvariantCulture)}, not application/link-format (40).");
        }

        return CoapLinkFormat.Parse(response.GetPayloadString());
    }

    private CoapResponse Send(CoapCode method, Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat, CancellationToken cancellationToken)
    {
        CoapMessage request = BuildRequest(method, uri, payload, contentFormat);
        return Send(request, ResolveDestination(uri), cancellationToken);
    }

    private async Task<CoapResponse> SendAsync(CoapCode method, Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat, CancellationToken cancellationToken)
    {
        CoapMessage request = BuildRequest(method, uri, payload, contentFormat);
        IPEndPoint destination = await ResolveDestinationAsync(uri, cancellationToken).ConfigureAwait(false);
        return await SendAsync(request, destination, cancellationToken).ConfigureAwait(false);
    }

    private CoapMessage BuildRequest(CoapCode method, Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat)
    {
        RequireCoapScheme(uri);
        CoapMessage request = CoapMessage.CreateRequest(method, uri, _requestType);
        request.Payload = payload;
        request.ContentFormat = contentFormat;
        return request;
    }

    private static void RequireCoapScheme(Uri uri)
    {
        ArgumentNullException.ThrowIfNull(uri);
        if (!uri.IsAbsoluteUri || !string.Equals(uri.Scheme, "coap", StringComparison.OrdinalIgnoreCase))
        {
            throw new ArgumentException($"'{uri}' is not a coap:// URI; this client speaks CoAP over UDP (coaps, coap+tcp and coap+ws come later).", nameof(uri));
        }
    }

    private static int PortOf(Uri uri) => uri.IsDefaultPort || uri.Port < 0 ? CoapMessage.GetDefaultPort("coap") : uri.Port;

    private IPEndPoint ResolveDestination(Uri uri)
    {
        RequireCoapScheme(uri);
        return new IPEndPoint(IPAddress.TryParse(uri.DnsSafeHost, out IPAddress? literal) ? literal : Resolve(uri.DnsSafeHost), PortOf(uri));
    }

    private async Task<IPEndPoint> ResolveDestinationAsync(Uri uri, CancellationToken cancellationToken)
    {
        RequireCoapScheme(uri);
        IPAddress address = IPAddress.TryParse(uri.DnsSafeHost, out IPAddress? literal) ? literal : await ResolveAsync(uri.DnsSafeHost, cancellationToken).ConfigureAwait(false);
        return new IPEndPoint(address, PortOf(uri));
    }

    private IPAddress Resolve(string host)
        => IPAddress.TryParse(host, out IPAddress? literal) ? literal : PickAddress(host, Dns.GetHostAddresses(host));

    private async Task<IPAddress> ResolveAsync(string host, CancellationToken cancellationToken)
        => IPAddress.TryParse(host, out IPAddress? literal) ? literal : PickAddress(host, await Dns.GetHostAddressesAsync(host, cancellationToken).ConfigureAwait(false));

    // A dual-stack socket reaches both families; an IPv4-only one needs an IPv4 address.
    private IPAddress PickAddress(string host, IPAddress[] addresses)
    {
        bool ipv6 = LocalEndPoint.AddressFamily == AddressFamily.InterNetworkV6 || LocalEndPoint.Address.Equals(IPAddress.IPv6Any);
        foreach (IPAddress address in addresses)
        {
            if (ipv6 || address.AddressFamily == AddressFamily.InterNetwork)
            {
                return address;
            }
        }

        throw new SocketException((int)SocketError.HostNotFound, $"'{host}' has no address this client can reach.");
    }
}
