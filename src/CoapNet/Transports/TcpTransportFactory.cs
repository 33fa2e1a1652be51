using System.Net;
using System.Runtime.CompilerServices;
using CoapNet.Channels;

namespace CoapNet.Transports;

/// <summary>
/// TCP, for coap+tcp (RFC 8323) and, under TLS, coaps+tcp (section 9.1). A server's coaps+tcp endpoint listens on TCP
/// until <c>UseTls</c> wraps it with its certificate; a client's coaps+tcp connections are TLS at once, trusting as
/// <see cref="Client.CoapClientOptions.Tls"/> says (the system's roots by default), since a client needs no certificate.
/// </summary>
internal sealed class TcpTransportFactory(string scheme, int defaultPort, bool secured) : CoapConnectionTransportFactory(scheme, defaultPort)
{
    public override IConnectionListener Listen(IPEndPoint localEndPoint, CoapTransportContext context) => new TcpConnectionListener(localEndPoint, context.Tcp);

    public override IConnectionFactory Connect(CoapTransportContext context)
    {
        TcpConnectionFactory tcp = new(context.Tcp);
        return secured ? SecureConnect(tcp, context) : tcp;
    }

    /// <summary>A coaps+tcp peer carries the URI's host: TLS sends it as SNI and checks the server's certificate against it.</summary>
    public override CoapPeer CreatePeer(IPEndPoint endPoint, string host) => secured ? CoapPeer.Tls(endPoint, host) : base.CreatePeer(endPoint, host);

    public override string? DescribeMissingMiddleware(CoapTransportContext context)
        => secured && context.Listener is { } listener
            ? $"secure it with UseTls(certificate) on the endpoint, or in configuration with its certificate ({listener.Name ?? "Coap:Endpoints:NAME"}:Tls:CertificateFile and CertificateKeyFile)"
            : null;

    // Apart, and never inlined: a body that names the TLS types makes the JIT load the platform's cryptography library
    // (about 1 MB of resident memory) into clients that never reach a coaps+tcp server (issue 25).
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static Tls.TlsConnectionFactory SecureConnect(TcpConnectionFactory tcp, CoapTransportContext context)
        => new(tcp, context.Client!.Tls, context.Tcp, context.Endpoint.TimeProvider);
}
