using System.Net;
using CoapNet.Messaging;

namespace CoapNet.Client;

/// <summary>Settings of a <see cref="CoapClient"/>.</summary>
public sealed class CoapClientOptions
{
    /// <summary>Transmission parameters, limits, clock and logging of the client's endpoint.</summary>
    public CoapEndpointOptions Endpoint { get; init; } = new();

    /// <summary>The local endpoint to bind; default [::]:0 (dual-stack, a free port), or 0.0.0.0:0 without IPv6.</summary>
    public IPEndPoint? LocalEndPoint { get; init; }

    /// <summary>The limits of coap+tcp connections (RFC 8323): message size, timeouts, requests in flight; null for the defaults.</summary>
    public CoapConnectionOptions? Connections { get; init; }

    /// <summary>
    /// How long past a notification's Max-Age (default 60 s) an observation waits for the next one before
    /// it registers again (RFC 7641 section 3.3.1); default 5 s.
    /// </summary>
    public TimeSpan ObserveReregistrationMargin { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>When true, requests built from a URI go out as NON instead of CON (RFC 7252 section 2.2).</summary>
    public bool UseNonConfirmable { get; init; }

    /// <summary>
    /// The kernel receive buffer of the client's UDP socket, in bytes (default null: the OS default, often 208 KiB on
    /// Linux, capped by net.core.rmem_max). A client with hundreds of requests in flight gets their answers in bursts,
    /// and what does not fit is dropped by the kernel and costs a retransmission (ACK_TIMEOUT, RFC 7252 section 4.2).
    /// </summary>
    /// <remarks>Used by the clients that make their own socket, not with a transport of your own.</remarks>
    public int? SocketReceiveBufferSize { get; init; }

    /// <summary>The kernel send buffer of the client's UDP socket, in bytes (default null: the OS default; capped by net.core.wmem_max).</summary>
    /// <remarks>Used by the clients that make their own socket, not with a transport of your own.</remarks>
    public int? SocketSendBufferSize { get; init; }

    /// <summary>
    /// The transport of <c>coaps://</c> URIs (CoAP over DTLS, RFC 7252 section 9.1), with its credentials: CoapNet.Dtls's
    /// <c>DtlsClientTransport</c>. Null (the default): a coaps:// URI is refused with <see cref="ArgumentException"/>.
    /// The client owns it and disposes it with itself; it starts it on the first coaps:// request.
    /// </summary>
    public Transports.ISecureDatagramTransport? SecureTransport { get; init; }
}
