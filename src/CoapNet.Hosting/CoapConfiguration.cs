using System.Net;
using CoapNet.Blockwise;
using CoapNet.Client;
using CoapNet.Configuration;
using CoapNet.Endpoints;
using CoapNet.Freshness;
using CoapNet.Messaging;
using CoapNet.Messaging.Retransmission;
using CoapNet.Observe;
using CoapNet.QBlock;
using CoapNet.Server;
using CoapNet.Transports;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Logging;

namespace CoapNet.Hosting;

/// <summary>
/// What configuration cannot bind by itself onto the options types: the keys "Coap" may hold (any other stops the start),
/// the endpoints ("Coap:Endpoints:{name}", each a section with its address in "Url" and its own settings), the
/// retransmission policy, which is an object, and the host's logging and clock for the options that code left unset.
/// </summary>
/// <example>
/// <code>
/// "Coap": {
///   "Endpoints": {
///     "udp": { "Url": "coap://[::]:5683" },
///     "tcp": { "Url": "coap+tcp://[::]:5683", "Endpoint": { "ResponseTimeout": "00:01:00" } },
///     "secure": { "Url": "coaps+tcp://[::]:5684", "Tls": { "CertificateFile": "server.pem", "CertificateKeyFile": "server.key" } }
///   },
///   "MaxPendingRequests": 1024,
///   "Endpoint": { "SeparateResponseDelay": "00:00:00.100", "TransmissionParameters": { "AckTimeout": "00:00:02", "NStart": 1 } },
///   "Udp": { "SocketReceiveBufferSize": 4194304 },
///   "Connections": { "IdleTimeout": "00:05:00" },
///   "Client": { "LocalEndPoint": "0.0.0.0:0", "Endpoint": { "ResponseTimeout": "00:00:30" } }
/// }
/// </code>
/// </example>
internal static class CoapConfiguration
{
    /// <summary>The section the server's options are bound from.</summary>
    internal const string ServerSection = "Coap";

    /// <summary>The section the client's options are bound from.</summary>
    internal const string ClientSection = "Coap:Client";

    /// <summary>The section of the server's endpoints, one named section each.</summary>
    internal const string EndpointsSection = "Endpoints";

    /// <summary>
    /// Refuses the keys of "Coap" that are not settings: each named by its full path with the nearest known name, or,
    /// for a key of an earlier version, where its setting went. The keys are the options' own, those of each endpoint
    /// (with the sections packages register for an endpoint) and those of the sections packages register.
    /// </summary>
    /// <param name="configuration">The host's configuration.</param>
    /// <param name="sections">The sections packages own (CoapNet.Dtls's "Client:Dtls", ...).</param>
    /// <param name="endpointSections">The sections of an endpoint packages read (CoapNet.Dtls's "Dtls", ...).</param>
    /// <exception cref="CoapConfigurationException">A key is not a setting; the message names every one.</exception>
    internal static void Check(IConfiguration configuration, IEnumerable<CoapConfigurationSection> sections, IEnumerable<CoapEndpointConfigurationSection> endpointSections)
    {
        IConfigurationSection coap = configuration.GetSection(ServerSection);
        List<string> problems = [];

        // Endpoints written as before ("Coap:Endpoints:0" = "udp://[::]:5683") are told how to move, once each.
        foreach (IConfigurationSection entry in coap.GetSection(EndpointsSection).GetChildren())
        {
            if (entry.Value is { Length: > 0 } value)
            {
                problems.Add($"{entry.Path} is '{value}', but an endpoint is a section with its address in Url, under a name of your choosing: {entry.Path[..^entry.Key.Length]}udp:Url=coap://[::]:5683 (coap is UDP, coap+tcp TCP, coaps DTLS, coaps+tcp TLS).");
            }
        }

        if (problems.Count == 0)
        {
            Keys(sections, endpointSections).Check(coap, problems);
        }

        if (problems.Count > 0)
        {
            throw new CoapConfigurationException(problems);
        }
    }

    /// <summary>
    /// Adds an endpoint to <paramref name="options"/> for each section of "Coap:Endpoints", in their order: its address
    /// from "Url" (<see cref="CoapServerOptions.Listen(string, Action{CoapListenOptions}?)"/>), its own settings from its
    /// "Endpoint" section (over a copy of the server's, <see cref="CoapEndpointOptions.Clone"/>), TLS from its "Tls" section, and each section a package
    /// registered for endpoints (CoapNet.Dtls's "Dtls"). Nothing is bound: the server binds them when it starts.
    /// </summary>
    /// <param name="options">The server's options.</param>
    /// <param name="section">The "Coap" section.</param>
    /// <param name="endpointSections">The sections of an endpoint packages read.</param>
    /// <exception cref="FormatException">An endpoint has no Url, or one that is not an endpoint address, or a value cannot be used; the message names its path.</exception>
    internal static void BindEndpoints(CoapServerOptions options, IConfigurationSection section, IEnumerable<CoapEndpointConfigurationSection> endpointSections)
    {
        foreach (IConfigurationSection entry in section.GetSection(EndpointsSection).GetChildren())
        {
            string url = entry["Url"] is { Length: > 0 } text
                ? text
                : throw new FormatException($"{entry.Path}:Url is missing: each endpoint names its address, such as {entry.Path}:Url=coap://[::]:5683.");
            try
            {
                options.Listen(url);
            }
            catch (FormatException e)
            {
                throw new FormatException($"{entry.Path}:Url: {e.Message}", e);
            }

            // Refused here rather than when the server starts: old names (udp://, tcp://) and typos are the usual cause.
            string scheme = options.ListenOptions[^1].Address.Scheme;
            if (options.Transports.Find(scheme) is null)
            {
                throw new FormatException($"{entry.Path}:Url is '{url}', but the server has no transport for {scheme}: it has {string.Join(", ", options.Transports.Schemes)} (coap is UDP, coap+tcp TCP, coaps DTLS, coaps+tcp TLS; a package adds more).");
            }

            Configure(options.ListenOptions[^1], entry, options.Endpoint, endpointSections);
        }
    }

    /// <summary>Sets the client's local endpoint from "LocalEndPoint" in <paramref name="section"/> ("0.0.0.0:0", "[::]:0"), when present.</summary>
    /// <param name="options">The client's options.</param>
    /// <param name="section">The "Coap:Client" section.</param>
    /// <exception cref="FormatException">The value is not an IP address and port; the message quotes it.</exception>
    internal static void BindLocalEndPoint(CoapClientOptions options, IConfiguration section)
    {
        IConfigurationSection entry = section.GetSection(nameof(CoapClientOptions.LocalEndPoint));
        if (entry.Value is not string text)
        {
            return;
        }

        // The one endpoint parser, with the scheme whose socket this is.
        options.LocalEndPoint = CoapAddress.TryParse($"{Channels.CoapPeer.UdpScheme}://{text}", null, out CoapAddress? address, out _) && address.IPAddress is not null
            ? address.ToEndPoint()
            : throw new FormatException($"{entry.Path} is '{text}', which is not an IP address with an optional port, such as [::]:0 or 0.0.0.0:0.");
    }

    /// <summary>
    /// Sets the retransmission policy from "RetransmissionPolicy" in an endpoint section: "Rfc7252" (the default: RFC 7252
    /// section 4.2's fixed back-off) or "Cocoa" (draft-ietf-core-cocoa-03), whose settings are the "Cocoa" subsection
    /// (<see cref="CocoaOptions"/>: "MaxTimeout", "WeakEstimator"). The policy is an object, so configuration names it.
    /// </summary>
    /// <param name="options">An endpoint's options.</param>
    /// <param name="section">The endpoint section ("Coap:Endpoint", "Coap:Client:Endpoint", "Coap:Endpoints:{name}:Endpoint").</param>
    /// <exception cref="FormatException">The name is neither; the message quotes it.</exception>
    internal static void BindRetransmissionPolicy(CoapEndpointOptions options, IConfiguration section)
    {
        IConfigurationSection entry = section.GetSection(nameof(CoapEndpointOptions.RetransmissionPolicy));
        switch (entry.Value)
        {
            case null:
                return;
            case var name when name.Equals("Rfc7252", StringComparison.OrdinalIgnoreCase):
                options.RetransmissionPolicy = CoapRetransmissionPolicy.Rfc7252;
                return;
            case var name when name.Equals("Cocoa", StringComparison.OrdinalIgnoreCase):
                CocoaOptions cocoa = new();
                section.GetSection("Cocoa").Bind(cocoa);
                options.RetransmissionPolicy = CoapRetransmissionPolicy.Cocoa(cocoa);
                return;
            default:
                throw new FormatException($"{entry.Path} is '{entry.Value}'; it names a retransmission policy: Rfc7252 or Cocoa.");
        }
    }

    /// <summary>Gives <paramref name="options"/> the host's logging and clock where code left them unset.</summary>
    /// <param name="options">An endpoint's options.</param>
    /// <param name="loggerFactory">The host's logger factory, or null.</param>
    /// <param name="timeProvider">The host's clock, or null.</param>
    internal static void UseHostServices(CoapEndpointOptions options, ILoggerFactory? loggerFactory, TimeProvider? timeProvider)
    {
        options.LoggerFactory ??= loggerFactory;
        if (timeProvider is not null && ReferenceEquals(options.TimeProvider, TimeProvider.System))
        {
            options.TimeProvider = timeProvider;
        }
    }

    /// <summary>The keys "Coap" may hold: the options' own, the endpoints', the client's, and those packages registered.</summary>
    internal static CoapConfigurationKeys Keys(IEnumerable<CoapConfigurationSection> sections, IEnumerable<CoapEndpointConfigurationSection> endpointSections)
    {
        CoapConfigurationKeys endpoint = new CoapConfigurationKeys("Url")
            .Add(nameof(CoapListenOptions.Endpoint), EndpointKeys())
            .Add("Tls", TlsConfiguration.ServerKeys());
        foreach (CoapEndpointConfigurationSection package in endpointSections)
        {
            endpoint.Add(package.Name, package.Keys);
        }

        CoapConfigurationKeys keys = CoapConfigurationKeys.Of<CoapServerOptions>()
            .AddList(EndpointsSection, endpoint)
            .Add(nameof(CoapServerOptions.Endpoint), EndpointKeys())
            .Add(nameof(CoapServerOptions.Udp), CoapConfigurationKeys.Of<UdpTransportOptions>())
            .Add(nameof(CoapServerOptions.Tcp), CoapConfigurationKeys.Of<TcpTransportOptions>())
            .Add(nameof(CoapServerOptions.Connections), CoapConfigurationKeys.Of<CoapConnectionOptions>())
            .Add(nameof(CoapServerOptions.Observe), CoapConfigurationKeys.Of<ObserveOptions>())
            .Add(nameof(CoapServerOptions.Handlers), CoapConfigurationKeys.Of<CoapHandlerOptions>())
            .Add("Client", ClientKeys())
            .AddRetired("TcpEndpoints", "endpoints are sections of Coap:Endpoints, each with its address in Url, such as Coap:Endpoints:tcp:Url=coap+tcp://[::]:5683.")
            .AddRetired("Tls", "a coaps+tcp endpoint is a section of Coap:Endpoints with its certificate in its Tls section, such as Coap:Endpoints:secure:Url=coaps+tcp://[::]:5684 with Coap:Endpoints:secure:Tls:CertificateFile and CertificateKeyFile.")
            .AddRetired("Dtls", "a coaps endpoint is a section of Coap:Endpoints with its credentials in its Dtls section (CoapNet.Dtls's AddCoapsEndpoints()), such as Coap:Endpoints:secure:Url=coaps://[::]:5684 with Coap:Endpoints:secure:Dtls:PskKeys.");
        foreach (CoapConfigurationSection package in sections)
        {
            keys.Add(package.Path, package.Keys);
        }

        return keys;
    }

    // What an endpoint's settings may hold, on a server, a server's endpoint and a client alike.
    private static CoapConfigurationKeys EndpointKeys()
        => CoapConfigurationKeys.Of<CoapEndpointOptions>()
            .Add(nameof(CoapEndpointOptions.RetransmissionPolicy))
            .Add(nameof(CoapEndpointOptions.TransmissionParameters), CoapConfigurationKeys.Of<CoapTransmissionParameters>())
            .Add(nameof(CoapEndpointOptions.Blockwise), CoapConfigurationKeys.Of<BlockwiseOptions>())
            .Add(nameof(CoapEndpointOptions.Echo), CoapConfigurationKeys.Of<EchoOptions>())
            .Add(nameof(CoapEndpointOptions.QBlock), CoapConfigurationKeys.Of<QBlockOptions>())
            .AddList(nameof(CoapEndpointOptions.Paths), CoapConfigurationKeys.Of<CoapPathOptions>())
            .Add("Cocoa", CoapConfigurationKeys.Of<CocoaOptions>());

    private static CoapConfigurationKeys ClientKeys()
        => CoapConfigurationKeys.Of<CoapClientOptions>()
            .Add(nameof(CoapClientOptions.LocalEndPoint))
            .Add(nameof(CoapClientOptions.Endpoint), EndpointKeys())
            .Add(nameof(CoapClientOptions.Connections), CoapConfigurationKeys.Of<CoapConnectionOptions>())
            .Add(nameof(CoapClientOptions.Udp), CoapConfigurationKeys.Of<UdpTransportOptions>())
            .Add(nameof(CoapClientOptions.Tcp), CoapConfigurationKeys.Of<TcpTransportOptions>())
            .Add(nameof(CoapClientOptions.Tls), TlsConfiguration.ClientKeys());

    // One endpoint's own settings: its Endpoint section over the server's, TLS, and what packages read of it.
    private static void Configure(CoapListenOptions endpoint, IConfigurationSection entry, CoapEndpointOptions serverEndpoint, IEnumerable<CoapEndpointConfigurationSection> endpointSections)
    {
        endpoint.Name = entry.Path;
        IConfigurationSection own = entry.GetSection(nameof(CoapListenOptions.Endpoint));
        if (own.Exists())
        {
            // A copy of the server's settings as configuration and code left them (its stages included), so an endpoint's
            // section changes only what it names.
            CoapEndpointOptions settings = serverEndpoint.Clone();
            own.Bind(settings);
            BindRetransmissionPolicy(settings, own);
            endpoint.Endpoint = settings;
        }

        IConfigurationSection tls = entry.GetSection("Tls");
        if (tls.Exists())
        {
            TlsConfiguration.UseTls(endpoint, tls);
        }

        foreach (CoapEndpointConfigurationSection package in endpointSections)
        {
            IConfigurationSection section = entry.GetSection(package.Name);
            if (section.Exists())
            {
                package.Configure(endpoint, section);
            }
        }
    }
}
