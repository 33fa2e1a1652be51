using System.Globalization;
using System.Net;
using CoapNet.Client;
using CoapNet.Messaging;
using CoapNet.Messaging.Retransmission;
using CoapNet.Server;
using CoapNet.Transports;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Logging;

namespace CoapNet.Hosting;

/// <summary>
/// What configuration cannot bind by itself onto the options types: endpoints are <see cref="IPEndPoint"/>s, written in
/// configuration as text, and the host's logging and clock fill the options that code left unset.
/// </summary>
/// <example>
/// <code>
/// "Coap": {
///   "Endpoints": [ "udp://[::]:5683", "tcp://[::]:5683" ],
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

    /// <summary>
    /// Adds the endpoints of <paramref name="section"/> to <paramref name="options"/>: each entry of "Endpoints" is
    /// "udp://ADDRESS:PORT" or "tcp://ADDRESS:PORT" ("coap://" and "coap+tcp://" mean the same; without a scheme, UDP),
    /// each entry of "TcpEndpoints" is "ADDRESS:PORT"; the address is an IP literal ("[::]", "0.0.0.0") and the port
    /// defaults to 5683.
    /// </summary>
    /// <param name="options">The server's options.</param>
    /// <param name="section">The "Coap" section.</param>
    /// <exception cref="FormatException">An endpoint is not an IP address and port with a known scheme; the message quotes it.</exception>
    internal static void BindEndpoints(CoapServerOptions options, IConfiguration section)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(section);
        foreach (IConfigurationSection entry in section.GetSection(nameof(CoapServerOptions.Endpoints)).GetChildren())
        {
            if (entry.Value is not string endpoint)
            {
                continue;
            }

            int scheme = endpoint.IndexOf("://", StringComparison.Ordinal);
            string name = scheme < 0 ? "udp" : endpoint[..scheme].ToLowerInvariant();
            IList<IPEndPoint> list = name switch
            {
                "udp" or "coap" => options.Endpoints,
                "tcp" or "coap+tcp" => options.TcpEndpoints,
                "coaps+tcp" => throw new FormatException($"{entry.Path} is '{endpoint}': coaps+tcp endpoints go in Coap:Tls:Endpoints, beside the server's certificate."),
                _ => throw new FormatException($"{entry.Path} is '{endpoint}', which is neither udp://ADDRESS:PORT nor tcp://ADDRESS:PORT."),
            };
            list.Add(ParseEndPoint(scheme < 0 ? endpoint : endpoint[(scheme + 3)..], entry.Path, UdpTransportOptions.DefaultPort, endpoint));
        }

        foreach (IConfigurationSection entry in section.GetSection(nameof(CoapServerOptions.TcpEndpoints)).GetChildren())
        {
            if (entry.Value is string endpoint)
            {
                options.TcpEndpoints.Add(ParseEndPoint(endpoint, entry.Path, UdpTransportOptions.DefaultPort));
            }
        }
    }

    /// <summary>Sets the client's local endpoint from "LocalEndPoint" in <paramref name="section"/> ("0.0.0.0:0", "[::]:0"), when present.</summary>
    /// <param name="options">The client's options.</param>
    /// <param name="section">The "Coap:Client" section.</param>
    /// <exception cref="FormatException">The value is not an IP address and port; the message quotes it.</exception>
    internal static void BindLocalEndPoint(CoapClientOptions options, IConfiguration section)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(section);
        IConfigurationSection entry = section.GetSection(nameof(CoapClientOptions.LocalEndPoint));
        if (entry.Value is string text)
        {
            options.LocalEndPoint = ParseEndPoint(text, entry.Path, UdpTransportOptions.DefaultPort);
        }
    }

    /// <summary>
    /// Sets the retransmission policy from "RetransmissionPolicy" in an endpoint section: "Rfc7252" (the default: RFC 7252
    /// section 4.2's fixed back-off) or "Cocoa" (draft-ietf-core-cocoa-03), whose settings are the "Cocoa" subsection
    /// (<see cref="CocoaOptions"/>: "MaxTimeout", "WeakEstimator"). The policy is an object, so configuration names it.
    /// </summary>
    /// <param name="options">An endpoint's options.</param>
    /// <param name="section">The endpoint section ("Coap:Endpoint", "Coap:Client:Endpoint").</param>
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

    /// <summary>"ADDRESS[:PORT]" with an IP literal ("[::]", "0.0.0.0"), <paramref name="defaultPort"/> when the port is left out.</summary>
    /// <param name="text">The address and port.</param>
    /// <param name="path">The configuration path of the value, for the error.</param>
    /// <param name="defaultPort">The port when the text has none.</param>
    /// <param name="original">The value as configured, for the error, when <paramref name="text"/> is part of it.</param>
    /// <returns>The endpoint.</returns>
    /// <exception cref="FormatException">The text is not an IP address with an optional port; the message quotes it.</exception>
    internal static IPEndPoint ParseEndPoint(string text, string path, int defaultPort, string? original = null)
    {
        // A URI parses both bracketed IPv6 and the missing port.
        if (Uri.TryCreate("coap://" + text, UriKind.Absolute, out Uri? uri) && uri.AbsolutePath == "/" && uri.Query.Length == 0
            && IPAddress.TryParse(uri.HostNameType == UriHostNameType.IPv6 ? uri.Host.Trim('[', ']') : uri.Host, out IPAddress? address))
        {
            return new IPEndPoint(address, uri.Port < 0 ? defaultPort : uri.Port);
        }

        throw new FormatException(string.Create(CultureInfo.InvariantCulture, $"{path} is '{original ?? text}', which is not an IP address with an optional port, such as [::]:{defaultPort} or 127.0.0.1:{defaultPort}."));
    }
}
