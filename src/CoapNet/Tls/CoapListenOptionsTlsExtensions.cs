using System.Security.Cryptography.X509Certificates;
using CoapNet.Server;

namespace CoapNet.Tls;

/// <summary>
/// TLS as an endpoint's middleware: a coaps+tcp endpoint (RFC 8323 section 9.1) is TCP wrapped by <c>UseTls</c>, which
/// runs each connection's handshake (ALPN "coap") before CoAP sees it.
/// </summary>
/// <remarks>
/// Apart from <see cref="CoapListenOptions"/> so that a server without coaps+tcp never compiles a method that names the
/// certificate types, which would load the platform's cryptography library (about 1 MB of resident memory, issue 25).
/// </remarks>
public static class CoapListenOptionsTlsExtensions
{
    /// <summary>Serves the endpoint over TLS with <paramref name="certificate"/> (its private key included), asking clients for none.</summary>
    /// <param name="endpoint">A coaps+tcp endpoint, or another connection endpoint TLS should wrap.</param>
    /// <param name="certificate">The server's certificate with its private key.</param>
    /// <returns>The endpoint.</returns>
    /// <exception cref="ArgumentException">The certificate has no private key.</exception>
    public static CoapListenOptions UseTls(this CoapListenOptions endpoint, X509Certificate2 certificate)
    {
        ArgumentNullException.ThrowIfNull(certificate);
        return endpoint.UseTls(new TlsServerOptions { Certificate = certificate });
    }

    /// <summary>
    /// Serves the endpoint over TLS as <paramref name="options"/> say: the certificate and its chain, whether clients are
    /// asked for theirs, the handshake bounds. Each connection buffers and closes as the server's
    /// <see cref="CoapServerOptions.Tcp"/> says, and failed handshakes are logged through the endpoint's logging.
    /// </summary>
    /// <param name="endpoint">A coaps+tcp endpoint, or another connection endpoint TLS should wrap.</param>
    /// <param name="options">The certificate and the rest; read when the server starts.</param>
    /// <returns>The endpoint.</returns>
    /// <exception cref="ArgumentException">The options have no certificate, or one without its private key, or a setting is out of range.</exception>
    public static CoapListenOptions UseTls(this CoapListenOptions endpoint, TlsServerOptions options)
    {
        ArgumentNullException.ThrowIfNull(endpoint);
        ArgumentNullException.ThrowIfNull(options);

        // Refused here, where the mistake is made, rather than when the server starts.
        options.Validate();
        return endpoint.UseConnectionMiddleware((inner, context) => new TlsConnectionListener(inner, options, context.Tcp, context.Endpoint.LoggerFactory, context.Endpoint.TimeProvider));
    }
}
