using CoapNet.Configuration;
using CoapNet.Server;
using CoapNet.Tls;
using Microsoft.Extensions.Configuration;

namespace CoapNet.Hosting;

/// <summary>
/// What configuration cannot bind by itself onto the coaps+tcp options (RFC 8323 section 9.1): the credentials, which are
/// objects read from files or the certificate store (<see cref="CoapCredentialConfiguration"/>). The rest
/// ("ClientCertificateMode", "HandshakeTimeout", "MaxPendingHandshakes", "MaxPendingHandshakesPerAddress",
/// "EnabledProtocols", "CheckCertificateRevocation")
/// binds by name.
/// </summary>
/// <example>
/// <code>
/// "Coap": {
///   "Endpoints": {
///     "secure": {
///       "Url": "coaps+tcp://[::]:5684",
///       "Tls": {
///         "CertificateFile": "/etc/coap/server-chain.pem", "CertificateKeyFile": "/etc/coap/server.key",
///         "ClientCertificateMode": "Required", "TrustedRootsFile": "/etc/coap/devices-ca.pem"
///       }
///     }
///   },
///   "Client": { "Tls": { "TrustedRootsFile": "/etc/coap/ca.pem" } }
/// }
/// </code>
/// </example>
internal static class TlsConfiguration
{
    /// <summary>The keys of an endpoint's "Tls" section: the server's settings by name and the credential keys.</summary>
    internal static CoapConfigurationKeys ServerKeys() => CoapConfigurationKeys.Of<TlsServerOptions>().Add([.. CoapCredentialConfiguration.Keys().Names]);

    /// <summary>The keys of "Coap:Client:Tls": the client's settings by name and the credential keys.</summary>
    internal static CoapConfigurationKeys ClientKeys() => CoapConfigurationKeys.Of<TlsClientOptions>().Add([.. CoapCredentialConfiguration.Keys().Names]);

    /// <summary>
    /// Secures <paramref name="endpoint"/> with TLS as its "Tls" section says: the certificate (and the intermediates
    /// that follow it in its file), the trust roots for clients' certificates, and the settings by name.
    /// </summary>
    /// <param name="endpoint">The endpoint.</param>
    /// <param name="section">Its "Tls" section.</param>
    /// <exception cref="FormatException">The section names no certificate, or a value cannot be used; the message names its path.</exception>
    /// <exception cref="IOException">A file cannot be read; the message names its path.</exception>
    internal static void UseTls(CoapListenOptions endpoint, IConfigurationSection section)
    {
        TlsServerOptions options = ReadServer(section);
        try
        {
            endpoint.UseTls(options);
        }
        catch (ArgumentException e)
        {
            // A setting the options refuse (a timeout of zero, a certificate without its key) is named by its section.
            throw new FormatException($"{section.Path}: {e.Message}", e);
        }
    }

    /// <summary>The TLS options an endpoint's "Tls" section names (see <see cref="UseTls"/>).</summary>
    /// <param name="section">The section.</param>
    /// <returns>The options, with the certificate.</returns>
    /// <exception cref="FormatException">The section names no certificate, or a value cannot be used; the message names its path.</exception>
    /// <exception cref="IOException">A file cannot be read; the message names its path.</exception>
    internal static TlsServerOptions ReadServer(IConfigurationSection section)
    {
        TlsServerOptions options = new();
        section.Bind(options);

        // The binder accepts any number for an enumeration; one that names no mode is refused here, with its path,
        // rather than later by the server without it.
        if (!Enum.IsDefined(options.ClientCertificateMode))
        {
            throw new FormatException($"{section.Path}:{nameof(TlsServerOptions.ClientCertificateMode)} is '{section[nameof(TlsServerOptions.ClientCertificateMode)]}', which is not None, Allowed or Required.");
        }

        options.TrustedRoots = CoapCredentialConfiguration.ReadTrustedRoots(section) ?? options.TrustedRoots;
        options.Certificate = CoapCredentialConfiguration.ReadCertificate(section, out System.Security.Cryptography.X509Certificates.X509Certificate2Collection? chain)
            ?? throw new FormatException($"{section.Path} names no certificate: a coaps+tcp server authenticates with one. Set {section.Path}:CertificateFile and CertificateKeyFile (PEM), or CertificateThumbprint (the certificate store).");
        options.CertificateChain = chain;
        return options;
    }

    /// <summary>
    /// Sets the client's certificate (sent when a server asks for one) and the roots servers' certificates must chain to
    /// that <paramref name="section"/> names; without roots the system's trust store decides, and the server's
    /// certificate must name the URI's host either way.
    /// </summary>
    /// <param name="options">The client's TLS options.</param>
    /// <param name="section">The "Coap:Client:Tls" section.</param>
    /// <exception cref="FormatException">A value cannot be used; the message names its path.</exception>
    /// <exception cref="IOException">A file cannot be read; the message names its path.</exception>
    internal static void BindClient(TlsClientOptions options, IConfigurationSection section)
    {
        options.TrustedRoots = CoapCredentialConfiguration.ReadTrustedRoots(section) ?? options.TrustedRoots;
        options.Certificate = CoapCredentialConfiguration.ReadCertificate(section) ?? options.Certificate;
    }
}
