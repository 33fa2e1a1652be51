using CoapNet.Channels;
using CoapNet.Client;
using CoapNet.Messaging;
using CoapNet.Server;
using CoapNet.Transports;

namespace CoapNet.Dtls;

/// <summary>
/// DTLS as middleware (RFC 7252 section 9.1): a coaps endpoint or a client's coaps transport is UDP wrapped by
/// <c>UseDtls</c>, which secures every datagram in a session and hands up plaintext with that session's context.
/// </summary>
/// <example>
/// <code>
/// CoapServerOptions server = new();
/// server.Listen("coaps://[::]:5684", endpoint =&gt; endpoint.UseDtls(new DtlsServerOptions { PskKeys = DtlsServerOptions.PskTable(keys) }));
/// CoapClientOptions client = new CoapClientOptions().UseDtls(new DtlsClientOptions { PskIdentity = "device-1", PskKey = key });
/// </code>
/// </example>
public static class CoapDtlsOptionsExtensions
{
    /// <summary>
    /// Secures the endpoint's datagrams with DTLS 1.2 as <paramref name="options"/> say (credentials, session bounds): a
    /// <see cref="DtlsServerTransport"/> over the endpoint's UDP socket when the server starts. Logging and the clock are
    /// the endpoint's unless the options set their own.
    /// </summary>
    /// <param name="endpoint">A coaps endpoint.</param>
    /// <param name="options">The credentials and bounds; read when the server starts.</param>
    /// <returns>The endpoint.</returns>
    /// <exception cref="ArgumentException">A setting is missing or out of range (no credential, say); the message names it.</exception>
    public static CoapListenOptions UseDtls(this CoapListenOptions endpoint, DtlsServerOptions options)
    {
        ArgumentNullException.ThrowIfNull(endpoint);
        ArgumentNullException.ThrowIfNull(options);

        // Refused here, where the mistake is made, rather than when the server starts.
        options.Validate();
        return endpoint.UseDatagramMiddleware((network, context) =>
        {
            UseEndpointServices(options, context.Endpoint);
            return new DtlsServerTransport(network, options);
        });
    }

    /// <summary>
    /// Secures the client's coaps transport with DTLS 1.2 as <paramref name="options"/> say: a <see cref="DtlsClientTransport"/>
    /// over the UDP socket the client opens on its first coaps:// request, which makes a session per server and puts each
    /// request in it. Logging and the clock are the client's unless the options set their own.
    /// </summary>
    /// <param name="client">The client's options.</param>
    /// <param name="options">The credentials and bounds.</param>
    /// <returns>The client's options.</returns>
    /// <exception cref="ArgumentException">A setting is missing or out of range; the message names it.</exception>
    public static CoapClientOptions UseDtls(this CoapClientOptions client, DtlsClientOptions options)
    {
        ArgumentNullException.ThrowIfNull(client);
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        return client.UseDatagramMiddleware(CoapPeer.DtlsScheme, (network, context) =>
        {
            UseEndpointServices(options, context.Endpoint);
            return new DtlsClientTransport(network, options);
        });
    }

    private static void UseEndpointServices(DtlsOptions options, CoapEndpointOptions endpoint)
    {
        options.LoggerFactory ??= endpoint.LoggerFactory;
        if (ReferenceEquals(options.TimeProvider, TimeProvider.System))
        {
            options.TimeProvider = endpoint.TimeProvider;
        }
    }
}
