using System.Net;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using CoapNet.Channels;
using CoapNet.Transports;

namespace CoapNet.Tls;

/// <summary>
/// Opens CoAP over TLS connections (scheme "coaps+tcp", RFC 8323 section 9.1): a connection of the factory below (TCP),
/// then a TLS handshake over it with ALPN "coap", SNI from the host the client addressed, the server's certificate
/// checked against the options' trust and that host, and the client's own certificate when the server asks for one.
/// Knows nothing of CoAP.
/// </summary>
/// <remarks>
/// A connection is returned only after its handshake completed; if the server's certificate is refused, the connection
/// is closed before a byte of CoAP was written. The handshake is bounded by <see cref="TlsOptions.HandshakeTimeout"/>.
/// TLS with a pre-shared key is not available: .NET's TLS has no PSK.
/// </remarks>
public sealed class TlsConnectionFactory : IConnectionFactory
{
    private readonly IConnectionFactory _inner;
    private readonly TlsClientOptions _options;
    private readonly TcpTransportOptions _buffering;
    private readonly TimeProvider _time;
    private readonly SslStreamCertificateContext? _certificate;
    private readonly X509ChainPolicy? _chainPolicy;
    private readonly RemoteCertificateValidationCallback _decide;

    /// <summary>Opens TLS connections over those <paramref name="inner"/> opens.</summary>
    /// <param name="inner">The factory below, such as a <see cref="TcpConnectionFactory"/>.</param>
    /// <param name="options">Trust, the client's certificate, the handshake bound; null for the defaults (the system's trust store, no client certificate).</param>
    /// <param name="buffering">The buffering bounds and close timeout of each TLS connection; null for the defaults.</param>
    /// <param name="timeProvider">The clock of the handshake timeout; null for the system's.</param>
    /// <exception cref="ArgumentException">The client certificate has no private key, or a setting is out of range; the message names it.</exception>
    public TlsConnectionFactory(IConnectionFactory inner, TlsClientOptions? options = null, TcpTransportOptions? buffering = null, TimeProvider? timeProvider = null)
    {
        ArgumentNullException.ThrowIfNull(inner);
        _options = options ?? new TlsClientOptions();
        _options.Validate();
        _buffering = buffering ?? new TcpTransportOptions();
        _buffering.Validate();
        _inner = inner;
        _time = timeProvider ?? TimeProvider.System;

        // Made once and shared by every handshake: the client's certificate context, the trust, the decision.
        _certificate = _options.Certificate is { } certificate ? SslStreamCertificateContext.Create(certificate, null, offline: true) : null;
        _chainPolicy = TlsCertificates.ChainPolicy(_options, peerIsServer: true);
        _decide = TlsCertificates.Decide(_options.CertificateValidator, optional: false);
    }

    /// <inheritdoc/>
    public string Scheme => CoapPeer.TlsScheme;

    /// <inheritdoc/>
    /// <remarks>The server's certificate must be issued for the address of <paramref name="remote"/>.</remarks>
    public ValueTask<TransportConnection> ConnectAsync(IPEndPoint remote, CancellationToken cancellationToken = default)
        => ConnectAsync(remote, null, cancellationToken);

    /// <inheritdoc/>
    public async ValueTask<TransportConnection> ConnectAsync(IPEndPoint remote, string? hostName, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(remote);
        using CancellationTokenSource timeout = new(_options.HandshakeTimeout, _time);
        using CancellationTokenSource linked = CancellationTokenSource.CreateLinkedTokenSource(timeout.Token, cancellationToken);
        TransportConnection inner = await _inner.ConnectAsync(remote, hostName, linked.Token).ConfigureAwait(false);
        try
        {
            return await TlsConnection.ConnectAsync(inner, Authentication(hostName ?? remote.Address.ToString()), _buffering, linked.Token).ConfigureAwait(false);
        }
        catch (Exception exception) when (exception is not OutOfMemoryException)
        {
            // Nothing but the handshake went over it: closed at once, it carried no CoAP.
            inner.Abort(new IOException("The TLS handshake failed.", exception));
            await inner.DisposeAsync().ConfigureAwait(false);
            if (exception is OperationCanceledException && timeout.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
            {
                throw new TimeoutException($"No TLS handshake with {remote} within {_options.HandshakeTimeout.TotalSeconds:0.###} s.", exception);
            }

            throw;
        }
    }

    // Per connection, since the target host is: SNI when it is a name, and the name the certificate must carry (an IP
    // address as text makes SslStream send no SNI and match the certificate's IP address entries).
    private SslClientAuthenticationOptions Authentication(string targetHost) => new()
    {
        TargetHost = targetHost,
        ApplicationProtocols = TlsCertificates.AlpnList(),
        ClientCertificateContext = _certificate,
        EnabledSslProtocols = _options.EnabledProtocols,
        CertificateRevocationCheckMode = TlsCertificates.RevocationMode(_options),
        CertificateChainPolicy = _chainPolicy,
        RemoteCertificateValidationCallback = _decide,
    };
}
