using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Threading.Channels;
using CoapNet.Blockwise;
using CoapNet.Channels;
using CoapNet.LinkFormat;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Transports;

namespace CoapNet.Client;

/// <summary>
/// A CoAP client: GET, POST, PUT, DELETE, FETCH, PATCH and iPATCH, ping and resource discovery,
/// each in a synchronous and an asynchronous form. The URI's scheme finds the transport in
/// <see cref="CoapClientOptions.Transports"/>: <c>coap://</c> over UDP (requests confirmable by default, retransmitted per
/// RFC 7252 section 4.2, NSTART per server), <c>coap+tcp://</c> over TCP (RFC 8323: one connection per server, opened on
/// first use, reused, and opened again after it closes), <c>coaps+tcp://</c> over TLS, <c>coaps://</c> over DTLS once
/// CoapNet.Dtls's <c>UseDtls</c> secures it, and any scheme a package registers.
/// </summary>
/// <remarks>
/// One client may be used from many threads at once. The synchronous methods send on the calling
/// thread and block it until the response; they never need the caller's synchronization context,
/// so they do not deadlock under a single-threaded one. Each client holds a UDP socket and the thread
/// that receives on it (and a TCP connection per server once used), so share one client across an
/// application rather than creating one per request or per device.
/// </remarks>
public sealed partial class CoapClient : IDisposable, IAsyncDisposable
{
    private readonly ClientRoute _primary;
    private readonly CoapClientOptions _options;
    private readonly CoapMessageType _requestType;
    private readonly object _gate = new();

    // The routes of the other schemes, made on their first request; replaced whole (under the gate) when one is added,
    // so a request reads them without a lock.
    private Dictionary<string, ClientRoute> _routes = new(StringComparer.Ordinal);
    private LiteralDestination? _lastLiteral;
    private int _disposed;

    /// <summary>Creates a client on its own UDP socket for coap:// (dual-stack, a free port unless configured).</summary>
    /// <param name="options">Settings; null for the defaults.</param>
    /// <exception cref="ArgumentException">An option is out of range, or the transports have no coap.</exception>
    /// <exception cref="SocketException">The local endpoint cannot be bound.</exception>
    public CoapClient(CoapClientOptions? options = null)
        : this(options, null)
    {
    }

    /// <summary>
    /// Creates a client over a datagram transport of your own (it becomes the client's and is disposed with it), used for
    /// the scheme it carries (<see cref="IDatagramTransport.Scheme"/>: coap for an in-memory network or a socket of your
    /// own, coaps for a DTLS transport); the other schemes' transports come from <see cref="CoapClientOptions.Transports"/>.
    /// </summary>
    /// <param name="transport">The transport.</param>
    /// <param name="options">Settings; null for the defaults.</param>
    public CoapClient(IDatagramTransport transport, CoapClientOptions? options = null)
        : this(options, transport ?? throw new ArgumentNullException(nameof(transport)))
    {
    }

    private CoapClient(CoapClientOptions? options, IDatagramTransport? transport)
    {
        options ??= new CoapClientOptions();
        options.Validate();
        _options = options;
        _requestType = options.UseNonConfirmable ? CoapMessageType.NonConfirmable : CoapMessageType.Confirmable;
        _primary = transport is null ? ClientRoute.Open(CoapPeer.UdpScheme, options) : ClientRoute.Over(transport, options);
    }

    /// <summary>The local endpoint of the client's first transport: its UDP socket for coap, or the transport it was given.</summary>
    public IPEndPoint LocalEndPoint => _primary.Endpoint.LocalEndPoint;

    /// <summary>Sends GET (RFC 7252 section 5.8.1).</summary>
    /// <param name="uri">A coap:// URI.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The response.</returns>
    /// <exception cref="ArgumentException">The URI is not a coap:// URI.</exception>
    /// <exception cref="CoapTimeoutException">No acknowledgement or response in time.</exception>
    /// <exception cref="CoapResetException">The server answered with RST.</exception>
    /// <exception cref="OperationCanceledException">The token was canceled.</exception>
    public CoapResponse Get(Uri uri, CancellationToken cancellationToken = default) => Send(CoapCode.Get, uri, default, null, null, cancellationToken);

    /// <inheritdoc cref="Get(Uri, CancellationToken)"/>
    public Task<CoapResponse> GetAsync(Uri uri, CancellationToken cancellationToken = default) => SendAsync(CoapCode.Get, uri, default, null, null, cancellationToken);

    /// <summary>Sends DELETE (RFC 7252 section 5.8.4).</summary>
    /// <inheritdoc cref="Get(Uri, CancellationToken)"/>
    public CoapResponse Delete(Uri uri, CancellationToken cancellationToken = default) => Send(CoapCode.Delete, uri, default, null, null, cancellationToken);

    /// <inheritdoc cref="Delete(Uri, CancellationToken)"/>
    public Task<CoapResponse> DeleteAsync(Uri uri, CancellationToken cancellationToken = default) => SendAsync(CoapCode.Delete, uri, default, null, null, cancellationToken);

    /// <summary>Sends POST with a payload (RFC 7252 section 5.8.2).</summary>
    /// <param name="uri">A coap:// URI.</param>
    /// <param name="payload">
    /// The request payload. One that does not fit one message (over UDP, larger than the block size
    /// and the datagram; over TCP, larger than the server's CSM Max-Message-Size) goes out in Block1
    /// blocks (RFC 7959 section 2.5); an error code that ends the upload (4.08, 4.13, 5.03, ...) is the response.
    /// </param>
    /// <param name="contentFormat">The Content-Format of the payload, or null.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The response: to the whole request, the whole body when it came in Block2 blocks.</returns>
    /// <exception cref="ArgumentException">The URI is not a coap:// URI, or the message cannot be sent even in blocks (its options alone do not fit).</exception>
    /// <exception cref="CoapTimeoutException">No acknowledgement or response in time.</exception>
    /// <exception cref="CoapResetException">The server answered with RST.</exception>
    /// <exception cref="OperationCanceledException">The token was canceled.</exception>
    public CoapResponse Post(Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat = null, CancellationToken cancellationToken = default)
        => Send(CoapCode.Post, uri, payload, contentFormat, null, cancellationToken);

    /// <inheritdoc cref="Post(Uri, ReadOnlyMemory{byte}, ushort?, CancellationToken)"/>
    public Task<CoapResponse> PostAsync(Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat = null, CancellationToken cancellationToken = default)
        => SendAsync(CoapCode.Post, uri, payload, contentFormat, null, cancellationToken);

    /// <summary>Sends PUT with a payload (RFC 7252 section 5.8.3).</summary>
    /// <inheritdoc cref="Post(Uri, ReadOnlyMemory{byte}, ushort?, CancellationToken)"/>
    public CoapResponse Put(Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat = null, CancellationToken cancellationToken = default)
        => Send(CoapCode.Put, uri, payload, contentFormat, null, cancellationToken);

    /// <inheritdoc cref="Put(Uri, ReadOnlyMemory{byte}, ushort?, CancellationToken)"/>
    public Task<CoapResponse> PutAsync(Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat = null, CancellationToken cancellationToken = default)
        => SendAsync(CoapCode.Put, uri, payload, contentFormat, null, cancellationToken);

    /// <summary>Sends FETCH with a payload that selects what to return (RFC 8132 section 2).</summary>
    /// <inheritdoc cref="Post(Uri, ReadOnlyMemory{byte}, ushort?, CancellationToken)"/>
    public CoapResponse Fetch(Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat = null, CancellationToken cancellationToken = default)
        => Send(CoapCode.Fetch, uri, payload, contentFormat, null, cancellationToken);

    /// <inheritdoc cref="Fetch(Uri, ReadOnlyMemory{byte}, ushort?, CancellationToken)"/>
    public Task<CoapResponse> FetchAsync(Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat = null, CancellationToken cancellationToken = default)
        => SendAsync(CoapCode.Fetch, uri, payload, contentFormat, null, cancellationToken);

    /// <summary>Sends PATCH with a patch document (RFC 8132 section 3).</summary>
    /// <inheritdoc cref="Post(Uri, ReadOnlyMemory{byte}, ushort?, CancellationToken)"/>
    public CoapResponse Patch(Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat = null, CancellationToken cancellationToken = default)
        => Send(CoapCode.Patch, uri, payload, contentFormat, null, cancellationToken);

    /// <inheritdoc cref="Patch(Uri, ReadOnlyMemory{byte}, ushort?, CancellationToken)"/>
    public Task<CoapResponse> PatchAsync(Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat = null, CancellationToken cancellationToken = default)
        => SendAsync(CoapCode.Patch, uri, payload, contentFormat, null, cancellationToken);

    /// <summary>Sends iPATCH, the idempotent PATCH (RFC 8132 section 3).</summary>
    /// <inheritdoc cref="Post(Uri, ReadOnlyMemory{byte}, ushort?, CancellationToken)"/>
    public CoapResponse IPatch(Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat = null, CancellationToken cancellationToken = default)
        => Send(CoapCode.IPatch, uri, payload, contentFormat, null, cancellationToken);

    /// <inheritdoc cref="IPatch(Uri, ReadOnlyMemory{byte}, ushort?, CancellationToken)"/>
    public Task<CoapResponse> IPatchAsync(Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat = null, CancellationToken cancellationToken = default)
        => SendAsync(CoapCode.IPatch, uri, payload, contentFormat, null, cancellationToken);

    /// <summary>
    /// Sends a request built by hand to <paramref name="destination"/>. Its type (CON or NON), code and
    /// options are sent as they are; the client assigns the Message ID and, when empty, the token.
    /// </summary>
    /// <remarks>
    /// A request whose <see cref="CoapMessage.NoResponse"/> suppresses every class
    /// (<see cref="NoResponse.CoapNoResponse.All"/>, RFC 7967) completes once it is delivered (a NON
    /// sent, a CON acknowledged): the response returned has <see cref="CoapResponse.IsSuppressed"/> set.
    /// One that suppresses some classes waits as usual; its <see cref="CoapTimeoutException"/> names them.
    /// <see cref="CoapEndpoint.SendRequest(CoapMessage, IPEndPoint, CancellationToken)"/>, the message layer below,
    /// returns the bare <see cref="CoapMessage"/>; the client wraps it with the server's endpoint.
    /// </remarks>
    /// <param name="request">The request.</param>
    /// <param name="destination">The server.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The response, or one with <see cref="CoapResponse.IsSuppressed"/> when no response was awaited.</returns>
    /// <exception cref="ArgumentException">The message is not a CON or NON request, or cannot be serialized.</exception>
    /// <exception cref="CoapTimeoutException">No acknowledgement or response in time.</exception>
    /// <exception cref="CoapResetException">The server answered with RST.</exception>
    /// <exception cref="OperationCanceledException">The token was canceled.</exception>
    public CoapResponse Send(CoapMessage request, IPEndPoint destination, CancellationToken cancellationToken = default)
        => new(_primary.Endpoint.SendRequest(request, destination, cancellationToken), destination);

    /// <inheritdoc cref="Send(CoapMessage, IPEndPoint, CancellationToken)"/>
    public async Task<CoapResponse> SendAsync(CoapMessage request, IPEndPoint destination, CancellationToken cancellationToken = default)
        => new(await _primary.Endpoint.SendRequestAsync(request, destination, cancellationToken).ConfigureAwait(false), destination);

    /// <summary>
    /// Sends a request built by hand to <paramref name="peer"/>, over the transport its scheme names
    /// (<see cref="CoapClientOptions.Transports"/>). The client assigns the Message ID (over UDP) and, when empty, the token.
    /// A peer of a transport with sessions (coaps) is sent to in the session with its address, made first if there is none
    /// (RFC 7252 section 9.1).
    /// </summary>
    /// <remarks>No-Response (RFC 7967) as for <see cref="Send(CoapMessage, IPEndPoint, CancellationToken)"/>.</remarks>
    /// <param name="request">The request.</param>
    /// <param name="peer">The server.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The response, or one with <see cref="CoapResponse.IsSuppressed"/> when no response was awaited.</returns>
    /// <exception cref="ArgumentException">The message is not a request or cannot be sent, or the scheme is not one this client speaks.</exception>
    /// <exception cref="CoapTimeoutException">No acknowledgement or response in time.</exception>
    /// <exception cref="CoapResetException">The server answered with RST.</exception>
    /// <exception cref="OperationCanceledException">The token was canceled.</exception>
    public CoapResponse Send(CoapMessage request, CoapPeer peer, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(peer);
        CoapPeer target = InSession(peer, cancellationToken);
        return new(RouteFor(target.Scheme).Endpoint.SendRequest(request, target, cancellationToken), target.EndPoint);
    }

    /// <inheritdoc cref="Send(CoapMessage, CoapPeer, CancellationToken)"/>
    public async Task<CoapResponse> SendAsync(CoapMessage request, CoapPeer peer, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(peer);
        CoapPeer target = await InSessionAsync(peer, cancellationToken).ConfigureAwait(false);
        return new(await RouteFor(target.Scheme).Endpoint.SendRequestAsync(request, target, cancellationToken).ConfigureAwait(false), target.EndPoint);
    }

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
        return Send(request, new IPEndPoint(Resolve(host), request.UriPort ?? _primary.DefaultPort), cancellationToken);
    }

    /// <inheritdoc cref="Send(CoapMessage, CancellationToken)"/>
    public async Task<CoapResponse> SendAsync(CoapMessage request, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(request);
        string host = RequireUriHost(request);
        IPAddress address = await ResolveAsync(host, cancellationToken).ConfigureAwait(false);
        return await SendAsync(request, new IPEndPoint(address, request.UriPort ?? _primary.DefaultPort), cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// Checks that the server is alive: a CoAP ping over UDP (an empty CON answered by RST, RFC 7252
    /// section 4.3), a Ping signal answered by Pong over TCP (RFC 8323 section 5.4).
    /// </summary>
    /// <param name="uri">A coap:// or coap+tcp:// URI naming the server; its path is ignored.</param>
    /// <param name="cancellationToken">Cancels the ping.</param>
    /// <returns>The round-trip time.</returns>
    /// <exception cref="CoapTimeoutException">No answer in time.</exception>
    public TimeSpan Ping(Uri uri, CancellationToken cancellationToken = default)
    {
        ClientRoute route = RouteFor(uri);
        CoapPeer peer = InSession(ResolveDestination(uri, route), route, cancellationToken);

        // Not sync-over-async: the pong is signaled by the receive loop or a timer on pool threads.
        return route.Endpoint.PingAsync(peer, cancellationToken).GetAwaiter().GetResult();
    }

    /// <inheritdoc cref="Ping(Uri, CancellationToken)"/>
    public async Task<TimeSpan> PingAsync(Uri uri, CancellationToken cancellationToken = default)
    {
        ClientRoute route = RouteFor(uri);
        CoapPeer peer = await route.PrepareAsync(await ResolveDestinationAsync(uri, route, cancellationToken).ConfigureAwait(false), cancellationToken).ConfigureAwait(false);
        return await route.Endpoint.PingAsync(peer, cancellationToken).ConfigureAwait(false);
    }

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

    /// <summary>Sends GET and reports the progress of a block-wise response (RFC 7959): bytes received so far and Size2 when the server sent it.</summary>
    /// <param name="uri">A coap:// or coap+tcp:// URI.</param>
    /// <param name="progress">Told after each block received.</param>
    /// <param name="cancellationToken">Cancels the request, between blocks too.</param>
    /// <returns>The response, with the whole body.</returns>
    public CoapResponse Get(Uri uri, IProgress<CoapTransferProgress> progress, CancellationToken cancellationToken = default)
        => Send(CoapCode.Get, uri, default, null, new BlockTransfer { Progress = progress ?? throw new ArgumentNullException(nameof(progress)) }, cancellationToken);

    /// <inheritdoc cref="Get(Uri, IProgress{CoapTransferProgress}, CancellationToken)"/>
    public Task<CoapResponse> GetAsync(Uri uri, IProgress<CoapTransferProgress> progress, CancellationToken cancellationToken = default)
        => SendAsync(CoapCode.Get, uri, default, null, new BlockTransfer { Progress = progress ?? throw new ArgumentNullException(nameof(progress)) }, cancellationToken);

    /// <summary>
    /// Sends GET and writes a successful response's body to <paramref name="destination"/> block by block
    /// as it arrives (RFC 7959 section 3.1), so a body of any size takes one block of memory; the body is
    /// not kept in the returned response. An error response is returned with its diagnostic payload and
    /// nothing is written. A change of the representation mid-transfer (its ETag) fails the call after
    /// what came before it was written.
    /// </summary>
    /// <param name="uri">A coap:// or coap+tcp:// URI.</param>
    /// <param name="destination">A writable stream; written on the thread that receives each block.</param>
    /// <param name="progress">Told after each block received; null for none.</param>
    /// <param name="cancellationToken">Cancels the transfer, between blocks too.</param>
    /// <returns>The response, without the body.</returns>
    /// <exception cref="ArgumentException">The stream cannot be written.</exception>
    public CoapResponse Download(Uri uri, Stream destination, IProgress<CoapTransferProgress>? progress = null, CancellationToken cancellationToken = default)
        => Send(CoapCode.Get, uri, default, null, DownloadTo(destination, progress), cancellationToken);

    /// <inheritdoc cref="Download(Uri, Stream, IProgress{CoapTransferProgress}?, CancellationToken)"/>
    public Task<CoapResponse> DownloadAsync(Uri uri, Stream destination, IProgress<CoapTransferProgress>? progress = null, CancellationToken cancellationToken = default)
        => SendAsync(CoapCode.Get, uri, default, null, DownloadTo(destination, progress), cancellationToken);

    /// <summary>
    /// Uploads a body read from <paramref name="body"/> one block at a time as the server asks for it
    /// (RFC 7959 Block1, with Size1 when the stream can tell its length), so a body of any size takes one
    /// block of memory; a body that fits one message goes as one. Stops at the first error response
    /// (4.08, 4.13, 5.03, ...), which is returned.
    /// </summary>
    /// <param name="uri">A coap:// or coap+tcp:// URI.</param>
    /// <param name="body">A readable stream, read from its current position, on the thread that receives each 2.31 Continue.</param>
    /// <param name="contentFormat">The body's Content-Format, or null.</param>
    /// <param name="progress">Told after each block the server acknowledged; null for none.</param>
    /// <param name="method">PUT (the default), POST, FETCH, PATCH or iPATCH.</param>
    /// <param name="cancellationToken">Cancels the upload, between blocks too.</param>
    /// <returns>The final response.</returns>
    /// <exception cref="ArgumentException">The stream cannot be read, or the method carries no body.</exception>
    public CoapResponse Upload(Uri uri, Stream body, ushort? contentFormat = null, IProgress<CoapTransferProgress>? progress = null, CoapCode? method = null, CancellationToken cancellationToken = default)
        => Send(BodyMethod(method), uri, default, contentFormat, UploadFrom(body, progress), cancellationToken);

    /// <inheritdoc cref="Upload(Uri, Stream, ushort?, IProgress{CoapTransferProgress}?, CoapCode?, CancellationToken)"/>
    public Task<CoapResponse> UploadAsync(Uri uri, Stream body, ushort? contentFormat = null, IProgress<CoapTransferProgress>? progress = null, CoapCode? method = null, CancellationToken cancellationToken = default)
        => SendAsync(BodyMethod(method), uri, default, contentFormat, UploadFrom(body, progress), cancellationToken);

    /// <summary>
    /// Observes a resource (RFC 7641): sends GET with Observe=0 and yields the response, then every
    /// notification, newest state last. Notifications older than the last one are dropped (section
    /// 3.4); a CON notification is acknowledged; when they stop for longer than Max-Age plus
    /// <see cref="CoapClientOptions.ObserveReregistrationMargin"/>, or the connection or DTLS session is
    /// lost, the client registers again, on a new connection or in a new session (section 3.3.1), and the
    /// notifications go on in the same sequence; if that registration fails too (the server is gone), the
    /// sequence ends with its error. The sequence ends after a response without Observe (the server would not
    /// observe, or sent an error); canceling <paramref name="cancellationToken"/> or leaving the loop
    /// deregisters (a GET with Observe=1, and RST for any later notification); not after a loss that no new
    /// registration has made good, when the server has nothing left to deregister.
    /// </summary>
    /// <param name="uri">A coap://, coaps://, coap+tcp:// or coaps+tcp:// URI.</param>
    /// <param name="cancellationToken">Ends the observation.</param>
    /// <returns>The responses, the registration's first.</returns>
    /// <exception cref="CoapTimeoutException">The registration was not answered in time.</exception>
    /// <exception cref="CoapResetException">The server answered the registration with RST.</exception>
    /// <exception cref="OperationCanceledException">The token was canceled.</exception>
    public IAsyncEnumerable<CoapResponse> ObserveAsync(Uri uri, CancellationToken cancellationToken = default)
    {
        ClientRoute route = RouteFor(uri);
        CoapMessage request = BuildObserveRequest(uri, route);
        return ObserveCoreAsync(request, uri, route, cancellationToken);
    }

    /// <summary>
    /// Observes a resource (RFC 7641), with a callback: sends GET with Observe=0, waits for the response
    /// and hands it to <paramref name="onNotification"/>, then every notification (see
    /// <see cref="ObserveAsync"/> for the rules). Returns once the first response was handled; dispose
    /// the result to deregister.
    /// </summary>
    /// <param name="uri">A coap:// or coap+tcp:// URI.</param>
    /// <param name="onNotification">Gets each response, one at a time, in order.</param>
    /// <param name="onError">Gets the failure that ends the observation after the first response (or an exception <paramref name="onNotification"/> threw); null to ignore it.</param>
    /// <param name="cancellationToken">Ends the observation.</param>
    /// <returns>The observation; <see cref="CoapObservation.IsActive"/> is false when the server did not accept it.</returns>
    /// <exception cref="CoapTimeoutException">The registration was not answered in time.</exception>
    /// <exception cref="CoapResetException">The server answered the registration with RST.</exception>
    /// <exception cref="OperationCanceledException">The token was canceled before the first response.</exception>
    public CoapObservation Observe(Uri uri, Action<CoapResponse> onNotification, Action<Exception>? onError = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(onNotification);
        ClientRoute route = RouteFor(uri);
        CoapMessage request = BuildObserveRequest(uri, route);
        return ObserveCore(request, ResolveDestination(uri, route), onNotification, onError, cancellationToken);
    }

    /// <summary>Closes the socket and the connections; pending requests fail with <see cref="ObjectDisposedException"/>.</summary>
    public void Dispose()
    {
        foreach (ClientRoute route in BeginDispose())
        {
            route.Endpoint.Dispose();
        }

        _primary.Endpoint.Dispose();
    }

    /// <inheritdoc cref="Dispose"/>
    /// <returns>A task that completes when the socket and the connections are closed.</returns>
    public async ValueTask DisposeAsync()
    {
        foreach (ClientRoute route in BeginDispose())
        {
            await route.Endpoint.DisposeAsync().ConfigureAwait(false);
        }

        await _primary.Endpoint.DisposeAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// The peer <paramref name="uri"/> names, as this client reaches it: its scheme's transport, the address its host
    /// resolves to (or is), the port (the scheme's default when none is written), what the transport keeps of the host
    /// (TLS checks the server's certificate against it), and, when the transport makes sessions (coaps), the session,
    /// established now (a DTLS handshake) or reused. For sending requests built by hand
    /// (<see cref="Send(CoapMessage, CoapPeer, CancellationToken)"/>), and for a caller that wants a handshake's failure
    /// told apart from a request's; a request to the peer after its session ended makes a new one.
    /// </summary>
    /// <param name="uri">A URI of a scheme this client reaches; its path and query are not used.</param>
    /// <param name="cancellationToken">Cancels the name lookup and the wait for the handshake.</param>
    /// <returns>The peer.</returns>
    /// <exception cref="ArgumentException">The URI is not absolute, or no transport is registered for its scheme.</exception>
    /// <exception cref="SocketException">The host name cannot be resolved.</exception>
    /// <exception cref="System.Security.Authentication.AuthenticationException">The handshake failed.</exception>
    /// <exception cref="TimeoutException">The server did not complete the handshake in time.</exception>
    public CoapPeer ResolvePeer(Uri uri, CancellationToken cancellationToken = default)
    {
        ClientRoute route = RouteFor(uri);
        return InSession(ResolveDestination(uri, route), route, cancellationToken);
    }

    /// <inheritdoc cref="ResolvePeer(Uri, CancellationToken)"/>
    public async ValueTask<CoapPeer> ResolvePeerAsync(Uri uri, CancellationToken cancellationToken = default)
    {
        ClientRoute route = RouteFor(uri);
        return await route.PrepareAsync(await ResolveDestinationAsync(uri, route, cancellationToken).ConfigureAwait(false), cancellationToken).ConfigureAwait(false);
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

    // Every URI-built request: with a block-wise transfer (a streamed body, progress) or without one.
    private CoapResponse Send(CoapCode method, Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat, BlockTransfer? transfer, CancellationToken cancellationToken)
    {
        ClientRoute route = RouteFor(uri);
        CoapMessage request = BuildRequest(method, uri, payload, contentFormat, route);
        CoapPeer peer = InSession(ResolveDestination(uri, route), route, cancellationToken);

        // Not sync-over-async: the completion is signaled by the receive loop or a timer on pool threads.
        return new(route.Endpoint.SendRequestAsync(request, peer, transfer, cancellationToken).GetAwaiter().GetResult(), peer.EndPoint);
    }

    private Task<CoapResponse> SendAsync(CoapCode method, Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat, BlockTransfer? transfer, CancellationToken cancellationToken)
    {
        ClientRoute route = RouteFor(uri);
        CoapMessage request = BuildRequest(method, uri, payload, contentFormat, route);
        ValueTask<CoapPeer> destination = ResolveDestinationAsync(uri, route, cancellationToken);

        // An IP literal resolves at once: then the only wait is the response's, and the state kept across it is smaller.
        return destination.IsCompletedSuccessfully && !route.HasSessions
            ? SendToAsync(request, route, destination.Result, transfer, cancellationToken)
            : ResolveThenSendAsync(request, route, destination, transfer, cancellationToken);
    }

    private async Task<CoapResponse> ResolveThenSendAsync(CoapMessage request, ClientRoute route, ValueTask<CoapPeer> destination, BlockTransfer? transfer, CancellationToken cancellationToken)
    {
        CoapPeer peer = await route.PrepareAsync(await destination.ConfigureAwait(false), cancellationToken).ConfigureAwait(false);
        return await SendToAsync(request, route, peer, transfer, cancellationToken).ConfigureAwait(false);
    }

    private static async Task<CoapResponse> SendToAsync(CoapMessage request, ClientRoute route, CoapPeer peer, BlockTransfer? transfer, CancellationToken cancellationToken)
        => new(await route.Endpoint.SendRequestAsync(request, peer, transfer, cancellationToken).ConfigureAwait(false), peer.EndPoint);

    /// <summary>Sends a request built by hand to a peer already in its session (<see cref="InSessionAsync"/>).</summary>
    private Task<CoapResponse> SendToAsync(CoapMessage request, CoapPeer peer, BlockTransfer? transfer, CancellationToken cancellationToken)
        => SendToAsync(request, RouteFor(peer.Scheme), peer, transfer, cancellationToken);

    private static BlockTransfer DownloadTo(Stream destination, IProgress<CoapTransferProgress>? progress)
    {
        ArgumentNullException.ThrowIfNull(destination);
        return destination.CanWrite
            ? new BlockTransfer { Destination = destination, Progress = progress }
            : throw new ArgumentException("The destination stream cannot be written.", nameof(destination));
    }

    private static CoapCode BodyMethod(CoapCode? method)
    {
        CoapCode chosen = method ?? CoapCode.Put;
        return CarriesBody(chosen) ? chosen : throw NoBody(chosen, nameof(method));
    }

    private static bool CarriesBody(CoapCode method)
        => method == CoapCode.Put || method == CoapCode.Post || method == CoapCode.Fetch || method == CoapCode.Patch || method == CoapCode.IPatch;

    private static ArgumentException NoBody(CoapCode method, string parameter)
        => new($"{method} carries no request body; upload with PUT, POST, FETCH, PATCH or iPATCH.", parameter);

    private static BlockTransfer UploadFrom(Stream body, IProgress<CoapTransferProgress>? progress)
    {
        ArgumentNullException.ThrowIfNull(body);
        return body.CanRead
            ? new BlockTransfer { Source = new StreamBlockSource(body), Progress = progress }
            : throw new ArgumentException("The body stream cannot be read.", nameof(body));
    }

    /// <summary>
    /// An observation of <paramref name="peer"/> as addressed: each of its registrations finds its path through
    /// <see cref="ClientRoute.PrepareAsync"/>, so over coaps the first one handshakes (or reuses the session) and one after a lost
    /// session handshakes again.
    /// </summary>
    private ClientObservation CreateObservation(CoapMessage request, CoapPeer peer)
    {
        ClientRoute route = RouteFor(peer.Scheme);
        return new(route.Endpoint.Exchanges, request, peer, route.PrepareAsync, _options.Endpoint.TimeProvider, _options.ObserveReregistrationMargin);
    }

    private CoapMessage BuildObserveRequest(Uri uri, ClientRoute route)
    {
        CoapMessage request = BuildRequest(CoapCode.Get, uri, default, null, route);
        request.Observe = 0;
        return request;
    }

    private async IAsyncEnumerable<CoapResponse> ObserveCoreAsync(CoapMessage request, Uri uri, ClientRoute route, [EnumeratorCancellation] CancellationToken cancellationToken)
    {
        CoapPeer peer = await ResolveDestinationAsync(uri, route, cancellationToken).ConfigureAwait(false);
        using ClientObservation observation = CreateObservation(request, peer);
        observation.Start();
        ChannelReader<CoapResponse> reader = observation.Reader;
        while (await reader.WaitToReadAsync(cancellationToken).ConfigureAwait(false))
        {
            while (reader.TryRead(out CoapResponse? response))
            {
                yield return response;
            }
        }
    }

    /// <summary>Hands the observation's responses to the callback, one at a time; the first completes <paramref name="first"/>.</summary>
    private static async Task PumpAsync(ClientObservation observation, Action<CoapResponse> onNotification, Action<Exception>? onError, TaskCompletionSource first, CancellationTokenRegistration registration)
    {
        try
        {
            ChannelReader<CoapResponse> reader = observation.Reader;
            while (await reader.WaitToReadAsync().ConfigureAwait(false))
            {
                while (reader.TryRead(out CoapResponse? response))
                {
                    onNotification(response);
                    first.TrySetResult();
                }
            }

            first.TrySetException(new ChannelClosedException("The observation ended before its first response."));
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            // A failure, or the callback's own exception: either way the observation is over.
            observation.Dispose();
            if (!first.TrySetException(e))
            {
                onError?.Invoke(e);
            }
        }
        finally
        {
            await registration.DisposeAsync().ConfigureAwait(false);
        }
    }

    private CoapMessage BuildRequest(CoapCode method, Uri uri, ReadOnlyMemory<byte> payload, ushort? contentFormat, ClientRoute route)
    {
        CoapMessage request = CoapMessage.CreateRequest(method, uri, _requestType, route.DefaultPortOf);
        request.Payload = payload;
        request.ContentFormat = contentFormat;
        return request;
    }

    /// <summary>The route of the URI's scheme, made on its first request.</summary>
    /// <exception cref="ArgumentException">The URI is relative, or no transport is registered for its scheme.</exception>
    private ClientRoute RouteFor(Uri uri)
    {
        ArgumentNullException.ThrowIfNull(uri);
        if (!uri.IsAbsoluteUri)
        {
            throw new ArgumentException($"'{uri}' is not an absolute URI such as coap://host/path.", nameof(uri));
        }

        return RouteFor(uri.Scheme);
    }

    private static int PortOf(Uri uri, ClientRoute route)
        => !uri.IsDefaultPort && uri.Port >= 0 ? uri.Port
            : route.DefaultPort >= 0 ? route.DefaultPort
            : throw new ArgumentException($"'{uri}' names no port, and {route.Scheme} has no default one.", nameof(uri));

    private CoapPeer ResolveDestination(Uri uri, ClientRoute route)
        => TryLiteralDestination(uri, route, out CoapPeer? peer)
            ? peer
            : route.CreatePeer(new IPEndPoint(Resolve(uri.DnsSafeHost), PortOf(uri, route)), uri.DnsSafeHost);

    private ValueTask<CoapPeer> ResolveDestinationAsync(Uri uri, ClientRoute route, CancellationToken cancellationToken)
        => TryLiteralDestination(uri, route, out CoapPeer? peer)
            ? ValueTask.FromResult(peer)
            : ResolveNameAsync(uri, route, cancellationToken);

    private async ValueTask<CoapPeer> ResolveNameAsync(Uri uri, ClientRoute route, CancellationToken cancellationToken)
        => route.CreatePeer(new IPEndPoint(await ResolveAsync(uri.DnsSafeHost, cancellationToken).ConfigureAwait(false), PortOf(uri, route)), uri.DnsSafeHost);

    /// <summary>
    /// The destination of a URI whose host is an IP literal, which needs no resolver (RFC 7252 section 6.4 step 5).
    /// The last one is kept and handed out again while requests go to the same scheme, address and port, as a client
    /// polling one server does, so that such a request parses no address and allocates no peer. A host name is
    /// resolved each time: its addresses may change.
    /// </summary>
    private bool TryLiteralDestination(Uri uri, ClientRoute route, [NotNullWhen(true)] out CoapPeer? peer)
    {
        string host = uri.DnsSafeHost;
        int port = PortOf(uri, route);
        LiteralDestination? last = Volatile.Read(ref _lastLiteral);
        if (last is not null && last.Peer.EndPoint.Port == port && string.Equals(last.Host, host, StringComparison.Ordinal) && string.Equals(last.Peer.Scheme, route.Scheme, StringComparison.Ordinal))
        {
            peer = last.Peer;
            return true;
        }

        if (!IPAddress.TryParse(host, out IPAddress? address))
        {
            peer = null;
            return false;
        }

        peer = route.CreatePeer(new IPEndPoint(address, port), host);
        Volatile.Write(ref _lastLiteral, new LiteralDestination(host, peer));
        return true;
    }

    /// <summary>
    /// The route of <paramref name="scheme"/>: the client's first transport's, or one opened through
    /// <see cref="CoapClientOptions.Transports"/> by the first request that needs it, kept until the client is disposed.
    /// </summary>
    /// <exception cref="ArgumentException">No transport is registered for the scheme, or it is not secured as it must be.</exception>
    private ClientRoute RouteFor(string scheme)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        if (string.Equals(scheme, _primary.Scheme, StringComparison.OrdinalIgnoreCase))
        {
            return _primary;
        }

        if (Volatile.Read(ref _routes).TryGetValue(scheme, out ClientRoute? route))
        {
            return route;
        }

        string key = scheme.ToLowerInvariant();
        lock (_gate)
        {
            ObjectDisposedException.ThrowIf(_disposed != 0, this);
            if (_routes.TryGetValue(key, out route))
            {
                return route;
            }

            route = ClientRoute.Open(key, _options);
            Volatile.Write(ref _routes, new Dictionary<string, ClientRoute>(_routes, StringComparer.Ordinal) { [key] = route });
            return route;
        }
    }

    /// <summary>Marks the client disposed and takes the routes opened for other schemes than the first, once.</summary>
    private ClientRoute[] BeginDispose()
    {
        lock (_gate)
        {
            _disposed = 1;
            ClientRoute[] routes = [.. _routes.Values];
            _routes = new Dictionary<string, ClientRoute>(StringComparer.Ordinal);
            return routes;
        }
    }

    /// <summary>
    /// <paramref name="peer"/> in its session when its transport makes them: the session is established (or reused) before
    /// the request exists, so the request's peer carries it and its response matches only in it (RFC 7252 section 9.1.1).
    /// </summary>
    private CoapPeer InSession(CoapPeer peer, CancellationToken cancellationToken)
        => InSession(peer, RouteFor(peer.Scheme), cancellationToken);

    private static CoapPeer InSession(CoapPeer peer, ClientRoute route, CancellationToken cancellationToken)
    {
        if (!route.HasSessions)
        {
            return peer;
        }

        // Not sync-over-async: the handshake completes on a thread of its own, never the caller's context.
        return route.PrepareAsync(peer, cancellationToken).AsTask().GetAwaiter().GetResult();
    }

    private ValueTask<CoapPeer> InSessionAsync(CoapPeer peer, CancellationToken cancellationToken)
        => RouteFor(peer.Scheme).PrepareAsync(peer, cancellationToken);

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

    /// <summary>The last IP-literal destination: the URI's host text, and the peer it names.</summary>
    private sealed record LiteralDestination(string Host, CoapPeer Peer);
}
