using System.Net;
using CoapNet.Channels;
using CoapNet.Dtls.Sessions;
using CoapNet.Transports;

namespace CoapNet.Dtls;

/// <summary>
/// The client side of CoAP over DTLS 1.2 ("coaps", RFC 7252 section 9.1): one UDP socket, one session per server,
/// made on the first request and reused by the next ones, made again after it closed or aged out. Give it to
/// <c>CoapClientOptions.SecureTransport</c>, and <c>coaps://</c> URIs go through it.
/// </summary>
/// <remarks>
/// The client asks for the session (<see cref="ConnectAsync"/>) before it builds the request's <see cref="CoapPeer"/>,
/// so the request carries its session and its response is matched only when it comes back in that same session
/// (RFC 7252 section 9.1.1). A handshake that fails fails the request with
/// <see cref="System.Security.Authentication.AuthenticationException"/>; nothing is ever sent in the clear.
/// </remarks>
public sealed class DtlsClientTransport : ISecureDatagramTransport
{
    private readonly ClientEngine _engine;

    /// <summary>Binds a UDP socket (default [::]:0) for the client's sessions.</summary>
    /// <param name="options">Credentials, bounds.</param>
    /// <exception cref="ArgumentException">A setting is missing or out of range; the message names it.</exception>
    /// <exception cref="CoapBindException">The local endpoint cannot be bound.</exception>
    public DtlsClientTransport(DtlsClientOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        IPEndPoint local = options.LocalEndPoint ?? new IPEndPoint(IPAddress.IPv6Any, 0);
        UdpTransport udp = new(new UdpTransportOptions { Address = local.Address, Port = local.Port });
        _engine = new ClientEngine(udp, options);
    }

    /// <summary>Secures datagrams carried by <paramref name="network"/> (which this transport owns from now on).</summary>
    /// <param name="network">The datagram transport underneath.</param>
    /// <param name="options">Credentials and bounds.</param>
    /// <exception cref="ArgumentException">A setting is missing or out of range; the message names it.</exception>
    public DtlsClientTransport(IDatagramTransport network, DtlsClientOptions options)
    {
        ArgumentNullException.ThrowIfNull(network);
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        _engine = new ClientEngine(network, options);
    }

    /// <inheritdoc/>
    public IPEndPoint LocalEndPoint => _engine.Network.LocalEndPoint;

    /// <summary>"coaps".</summary>
    public string Scheme => CoapPeer.DtlsScheme;

    /// <summary>The established sessions now.</summary>
    public int SessionCount => _engine.SessionCount;

    /// <inheritdoc/>
    public Task<CoapSecurityContext> ConnectAsync(IPEndPoint remote, CancellationToken cancellationToken = default)
        => _engine.ConnectAsync(remote, cancellationToken);

    /// <inheritdoc/>
    public void Start(IDatagramReceiver receiver) => _engine.Start(receiver);

    /// <summary>Not used on a secure transport: a datagram without a session is dropped, never sent in the clear.</summary>
    /// <param name="datagram">The bytes.</param>
    /// <param name="remote">The destination.</param>
    public void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote) => _engine.Send(datagram, null);

    /// <summary>Sends <paramref name="datagram"/> in the session <paramref name="securityContext"/>, or drops it when that session is gone (RFC 7252 section 9.1.1).</summary>
    /// <param name="datagram">The plaintext.</param>
    /// <param name="remote">The destination; the session's own address is used.</param>
    /// <param name="securityContext">The session, from <see cref="ConnectAsync"/>.</param>
    public void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote, CoapSecurityContext? securityContext) => _engine.Send(datagram, securityContext);

    /// <summary>Not used on a secure transport: a datagram without a session is dropped, never sent in the clear.</summary>
    /// <param name="datagram">The bytes.</param>
    /// <param name="remote">The destination.</param>
    /// <param name="cancellationToken">Unused.</param>
    /// <returns>A completed task.</returns>
    public ValueTask SendAsync(ReadOnlyMemory<byte> datagram, IPEndPoint remote, CancellationToken cancellationToken = default)
    {
        _engine.Send(datagram.Span, null);
        return ValueTask.CompletedTask;
    }

    /// <summary>Sends close_notify in every session and closes the socket.</summary>
    public void Dispose() => _engine.Dispose();

    /// <inheritdoc cref="Dispose"/>
    /// <returns>A task that completes when the socket is closed.</returns>
    public ValueTask DisposeAsync() => _engine.DisposeAsync();
}
