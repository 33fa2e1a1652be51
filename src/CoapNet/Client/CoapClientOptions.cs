using System.Net;
using CoapNet.Messaging;

namespace CoapNet.Client;

/// <summary>
/// Settings of a <see cref="CoapClient"/>: its endpoint (<see cref="Endpoint"/>, the type a server's endpoints take too),
/// its socket and connections. Hosting binds it from the "Coap:Client" configuration section.
/// </summary>
/// <remarks>Set it before the client is created; later changes are not guaranteed to be seen.</remarks>
public sealed class CoapClientOptions
{
    /// <summary>Transmission parameters, limits, clock and logging of the client's endpoint.</summary>
    public CoapEndpointOptions Endpoint { get; set; } = new();

    /// <summary>The local endpoint to bind; default [::]:0 (dual-stack, a free port), or 0.0.0.0:0 without IPv6.</summary>
    public IPEndPoint? LocalEndPoint { get; set; }

    /// <summary>The limits of coap+tcp connections (RFC 8323): message size, timeouts, requests in flight.</summary>
    public CoapConnectionOptions Connections { get; set; } = new();

    /// <summary>
    /// How long past a notification's Max-Age (default 60 s) an observation waits for the next one before
    /// it registers again (RFC 7641 section 3.3.1); default 5 s.
    /// </summary>
    public TimeSpan ObserveReregistrationMargin { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>When true, requests built from a URI go out as NON instead of CON (RFC 7252 section 2.2).</summary>
    public bool UseNonConfirmable { get; set; }

    /// <summary>How the client's UDP socket is set up (buffer sizes; the 1 MiB kernel receive buffer absorbs the bursts of answers to many requests in flight). Not used with a transport of your own.</summary>
    public CoapNet.Transports.UdpTransportOptions Udp { get; set; } = new();

    /// <summary>How the client's coap+tcp connections buffer and close (RFC 8323).</summary>
    public CoapNet.Transports.TcpTransportOptions Tcp { get; set; } = new();

    /// <summary>
    /// The transport of <c>coaps://</c> URIs (CoAP over DTLS, RFC 7252 section 9.1), with its credentials: CoapNet.Dtls's
    /// <c>DtlsClientTransport</c>. Null (the default): a coaps:// URI is refused with <see cref="ArgumentException"/>.
    /// The client owns it and disposes it with itself; it starts it on the first coaps:// request.
    /// </summary>
    public Transports.ISecureDatagramTransport? SecureTransport { get; set; }

    /// <summary>
    /// How <c>coaps+tcp://</c> URIs connect (CoAP over TLS, RFC 8323 section 9.1): the trusted roots or a validator for
    /// servers' certificates (default: the system's trust store, and the URI's host must match), the client's own
    /// certificate, the handshake timeout. Connections buffer and close as <see cref="Tcp"/> says. .NET's TLS has no
    /// pre-shared keys: certificates only.
    /// </summary>
    public CoapNet.Tls.TlsClientOptions Tls { get; set; } = new();

    internal void Validate()
    {
        ArgumentNullException.ThrowIfNull(Endpoint);
        ArgumentNullException.ThrowIfNull(Udp);
        Udp.Validate();
        ArgumentNullException.ThrowIfNull(Tcp);
        Tcp.Validate();
        ArgumentNullException.ThrowIfNull(Connections);
        ArgumentNullException.ThrowIfNull(Tls);
        Tls.Validate();
        if (ObserveReregistrationMargin < TimeSpan.Zero)
        {
            throw new ArgumentException("ObserveReregistrationMargin must not be negative.", nameof(ObserveReregistrationMargin));
        }
    }
}
