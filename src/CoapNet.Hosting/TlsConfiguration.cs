using CoapNet.Tls;
using Microsoft.Extensions.Configuration;

namespace CoapNet.Hosting;

/// <summary>
/// What configuration cannot bind by itself onto the coaps+tcp options (RFC 8323 section 9.1): the endpoints, which are
/// text, and the credentials, which are objects read from files or the certificate store
/// (<see cref="CoapCredentialConfiguration"/>). The rest ("ClientCertificateMode", "HandshakeTimeout",
/// "MaxPendingHandshakes", "MaxPendingHandshakesPerAddress", "EnabledProtocols", "CheckCertificateRevocation") binds by
/// name with the "Coap" section.
/// </summary>
/// <example>
/// <code>
/// "Coap": {
///   "Tls": {
///     "Endpoints": [ "[::]:5684" ],
///     "CertificateFile": "/etc/coap/server-chain.pem", "CertificateKeyFile": "/etc/coap/server.key",
///     "ClientCertificateMode": "Required", "TrustedRootsFile": "/etc/coap/devices-ca.pem"
///   },
///   "Client": { "Tls": { "TrustedRootsFile": "/etc/coap/ca.pem" } }
/// }
/// </code>
/// </example>
internal static class TlsConfiguration
{
    /// <summary>
    /// Adds the endpoints of "Endpoints" ("ADDRESS[:PORT]", port 5684 by default, RFC 8323 section 8.2) and sets the
    /// certificate, its intermediates and the trust roots for clients' certificates that <paramref name="section"/> names.
    /// </summary>
    /// <param name="options">The server's TLS options.</param>
    /// <param name="section">The "Coap:Tls" section.</param>
    /// <exception cref="FormatException">A value cannot be used; the message names its path.</exception>
    /// <exception cref="IOException">A file cannot be read; the message names its path.</exception>
    internal static void BindServer(TlsServerOptions options, IConfigurationSection section)
    {
        foreach (IConfigurationSection entry in section.GetSection(nameof(TlsServerOptions.Endpoints)).GetChildren())
        {
            if (entry.Value is { } endpoint)
            {
                options.Endpoints.Add(CoapConfiguration.ParseEndPoint(endpoint, entry.Path, TlsServerOptions.DefaultPort));
            }
        }

        // The binder accepts any number for an enumeration; one that names no mode is refused here, with its path,
        // rather than later by the server without it.
        if (!Enum.IsDefined(options.ClientCertificateMode))
        {
            throw new FormatException($"{section.Path}:{nameof(TlsServerOptions.ClientCertificateMode)} is '{section[nameof(TlsServerOptions.ClientCertificateMode)]}', which is not None, Allowed or Required.");
        }

        BindShared(options, section);
        if (CoapCredentialConfiguration.ReadCertificateWithChain(section) is var (certificate, chain))
        {
            options.Certificate = certificate;
            options.CertificateChain = chain;
        }
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
        BindShared(options, section);
        options.Certificate = CoapCredentialConfiguration.ReadCertificate(section) ?? options.Certificate;
    }

    private static void BindShared(TlsOptions options, IConfigurationSection section)
    {
        // Certificates are objects: the binder would make an empty one from a "Certificate" section and go on, so the
        // names of the properties themselves are refused and the keys that name files and stores are pointed to.
        foreach (string name in (ReadOnlySpan<string>)["Certificate", "CertificateChain", "TrustedRoots"])
        {
            if (section.GetSection(name).Exists())
            {
                throw new FormatException($"{section.Path}:{name} cannot be bound: name the certificate with CertificateFile and CertificateKeyFile or CertificateThumbprint, and the roots with TrustedRootsFile or TrustedRootsStoreName.");
            }
        }

        options.TrustedRoots = CoapCredentialConfiguration.ReadTrustedRoots(section) ?? options.TrustedRoots;
    }
}
