using System.Globalization;
using System.Net;
using CoapNet.Server;
using Microsoft.Extensions.Logging;

namespace CoapNet.Hosting;

/// <summary>
/// The settings of a hosted <see cref="CoapServer"/> as configuration binds them, from the "Coap" section
/// by default. <see cref="CoapServerOptions"/> itself is built from them when the server is created
/// (its properties are init-only, and endpoints are <see cref="IPEndPoint"/>s, which configuration cannot bind).
/// </summary>
/// <example>
/// <code>
/// "Coap": {
///   "Endpoints": [ "udp://[::]:5683", "tcp://[::]:5683" ],
///   "MaxPendingRequests": 1024,
///   "TransmissionParameters": { "AckTimeout": "00:00:02", "NStart": 1 },
///   "Connections": { "IdleTimeout": "00:05:00" }
/// }
/// </code>
/// </example>
public sealed class CoapServerSettings
{
    /// <summary>The default configuration section.</summary>
    public const string SectionName = "Coap";

    /// <summary>
    /// Where to listen, each "udp://ADDRESS:PORT" or "tcp://ADDRESS:PORT" ("coap://" and "coap+tcp://"
    /// mean the same), with an IP address ("[::]", "0.0.0.0", "127.0.0.1"); the port defaults to 5683.
    /// With no endpoint anywhere, the server listens on UDP [::]:5683.
    /// </summary>
    public List<string> Endpoints { get; set; } = [];

    /// <summary>More UDP endpoints, each "ADDRESS:PORT" ("[::]:5683").</summary>
    public List<string> UdpEndpoints { get; set; } = [];

    /// <summary>More TCP endpoints (RFC 8323), each "ADDRESS:PORT".</summary>
    public List<string> TcpEndpoints { get; set; } = [];

    /// <summary>See <see cref="CoapServerOptions.MaxPendingRequests"/>.</summary>
    public int? MaxPendingRequests { get; set; }

    /// <summary>See <see cref="CoapServerOptions.MaxDegreeOfParallelism"/>.</summary>
    public int? MaxDegreeOfParallelism { get; set; }

    /// <summary>See <see cref="CoapServerOptions.LoadSheddingMaxAge"/>.</summary>
    public TimeSpan? LoadSheddingMaxAge { get; set; }

    /// <summary>See <see cref="CoapServerOptions.SeparateResponseDelay"/>.</summary>
    public TimeSpan? SeparateResponseDelay { get; set; }

    /// <summary>See <see cref="CoapServerOptions.MaxMessageSize"/>.</summary>
    public int? MaxMessageSize { get; set; }

    /// <summary>See <see cref="CoapServerOptions.DeduplicationCapacity"/>.</summary>
    public int? DeduplicationCapacity { get; set; }

    /// <summary>See <see cref="CoapServerOptions.MaxPeers"/>.</summary>
    public int? MaxPeers { get; set; }

    /// <summary>See <see cref="CoapServerOptions.MaxOptionCount"/>.</summary>
    public int? MaxOptionCount { get; set; }

    /// <summary>The RFC 7252 section 4.8 transmission parameters.</summary>
    public CoapTransmissionSettings TransmissionParameters { get; set; } = new();

    /// <summary>The limits of TCP connections.</summary>
    public CoapConnectionSettings Connections { get; set; } = new();

    /// <summary>The bounds on observations and the type of notifications (RFC 7641).</summary>
    public CoapObserveSettings Observe { get; set; } = new();

    /// <summary>Builds the server's options: these settings, with the host's logging and clock.</summary>
    /// <param name="loggerFactory">The host's logger factory, or null.</param>
    /// <param name="timeProvider">The clock; null for the system's.</param>
    /// <returns>The options.</returns>
    /// <exception cref="FormatException">An endpoint is not an IP address and port with a known scheme; the message quotes it.</exception>
    public CoapServerOptions ToServerOptions(ILoggerFactory? loggerFactory = null, TimeProvider? timeProvider = null)
    {
        List<IPEndPoint> udp = [];
        List<IPEndPoint> tcp = [];
        foreach (string endpoint in Endpoints)
        {
            int scheme = endpoint.IndexOf("://", StringComparison.Ordinal);
            string name = scheme < 0 ? string.Empty : endpoint[..scheme].ToLowerInvariant();
            List<IPEndPoint> list = name switch
            {
                "udp" or "coap" => udp,
                "tcp" or "coap+tcp" => tcp,
                _ => throw new FormatException($"Coap:Endpoints has '{endpoint}', which is neither udp://ADDRESS:PORT nor tcp://ADDRESS:PORT."),
            };
            list.Add(ParseEndPoint(endpoint[(scheme + 3)..], "Endpoints", endpoint));
        }

        foreach (string endpoint in UdpEndpoints)
        {
            udp.Add(ParseEndPoint(endpoint, "UdpEndpoints", endpoint));
        }

        foreach (string endpoint in TcpEndpoints)
        {
            tcp.Add(ParseEndPoint(endpoint, "TcpEndpoints", endpoint));
        }

        CoapServerOptions defaults = new();
        return new CoapServerOptions
        {
            Endpoints = udp,
            TcpEndpoints = tcp,
            LoggerFactory = loggerFactory,
            TimeProvider = timeProvider ?? TimeProvider.System,
            TransmissionParameters = TransmissionParameters.ToParameters(),
            Connections = Connections.ToOptions(),
            Observe = Observe.ToOptions(),
            MaxPendingRequests = MaxPendingRequests ?? defaults.MaxPendingRequests,
            MaxDegreeOfParallelism = MaxDegreeOfParallelism ?? defaults.MaxDegreeOfParallelism,
            LoadSheddingMaxAge = LoadSheddingMaxAge ?? defaults.LoadSheddingMaxAge,
            SeparateResponseDelay = SeparateResponseDelay ?? defaults.SeparateResponseDelay,
            MaxMessageSize = MaxMessageSize ?? defaults.MaxMessageSize,
            DeduplicationCapacity = DeduplicationCapacity ?? defaults.DeduplicationCapacity,
            MaxPeers = MaxPeers ?? defaults.MaxPeers,
            MaxOptionCount = MaxOptionCount ?? defaults.MaxOptionCount,
        };
    }

    // "ADDRESS[:PORT]" with an IP literal; a URI parses both bracketed IPv6 and the default port.
    private static IPEndPoint ParseEndPoint(string text, string key, string original)
    {
        if (Uri.TryCreate("coap://" + text, UriKind.Absolute, out Uri? uri) && uri.AbsolutePath == "/" && uri.Query.Length == 0
            && IPAddress.TryParse(uri.HostNameType == UriHostNameType.IPv6 ? uri.Host.Trim('[', ']') : uri.Host, out IPAddress? address))
        {
            return new IPEndPoint(address, uri.Port < 0 ? 5683 : uri.Port);
        }

        throw new FormatException(string.Create(CultureInfo.InvariantCulture, $"Coap:{key} has '{original}', which is not an IP address with an optional port, such as [::]:5683 or 127.0.0.1:5683."));
    }
}
