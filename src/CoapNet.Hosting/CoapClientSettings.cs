using System.Net;
using CoapNet.Client;
using CoapNet.Messaging;
using Microsoft.Extensions.Logging;

namespace CoapNet.Hosting;

/// <summary>
/// The settings of a registered <see cref="CoapClient"/> as configuration binds them, from the
/// "Coap:Client" section by default.
/// </summary>
public sealed class CoapClientSettings
{
    /// <summary>The default configuration section.</summary>
    public const string SectionName = "Coap:Client";

    /// <summary>The local UDP endpoint to bind, such as "0.0.0.0:0"; null for [::]:0 (dual-stack, a free port).</summary>
    public string? LocalEndPoint { get; set; }

    /// <summary>Send requests as NON instead of CON (RFC 7252 section 2.2).</summary>
    public bool UseNonConfirmable { get; set; }

    /// <summary>See <see cref="CoapEndpointOptions.ResponseTimeout"/>.</summary>
    public TimeSpan? ResponseTimeout { get; set; }

    /// <summary>See <see cref="CoapEndpointOptions.MaxMessageSize"/>.</summary>
    public int? MaxMessageSize { get; set; }

    /// <summary>See <see cref="CoapEndpointOptions.TokenLength"/>.</summary>
    public int? TokenLength { get; set; }

    /// <summary>The RFC 7252 section 4.8 transmission parameters.</summary>
    public CoapTransmissionSettings TransmissionParameters { get; set; } = new();

    /// <summary>The limits of coap+tcp connections.</summary>
    public CoapConnectionSettings Connections { get; set; } = new();

    /// <summary>Builds the client's options: these settings, with the host's logging and clock.</summary>
    /// <param name="loggerFactory">The host's logger factory, or null.</param>
    /// <param name="timeProvider">The clock; null for the system's.</param>
    /// <returns>The options.</returns>
    /// <exception cref="FormatException"><see cref="LocalEndPoint"/> is not an IP address and port.</exception>
    public CoapClientOptions ToClientOptions(ILoggerFactory? loggerFactory = null, TimeProvider? timeProvider = null)
    {
        IPEndPoint? local = null;
        if (LocalEndPoint is not null && !IPEndPoint.TryParse(LocalEndPoint, out local))
        {
            throw new FormatException($"Coap:Client:LocalEndPoint is '{LocalEndPoint}', which is not an IP address and port such as 0.0.0.0:0.");
        }

        CoapEndpointOptions defaults = new();
        return new CoapClientOptions
        {
            LocalEndPoint = local,
            UseNonConfirmable = UseNonConfirmable,
            Connections = Connections.ToOptions(),
            Endpoint = new CoapEndpointOptions
            {
                LoggerFactory = loggerFactory,
                TimeProvider = timeProvider ?? TimeProvider.System,
                TransmissionParameters = TransmissionParameters.ToParameters(),
                ResponseTimeout = ResponseTimeout,
                MaxMessageSize = MaxMessageSize ?? defaults.MaxMessageSize,
                TokenLength = TokenLength ?? defaults.TokenLength,
            },
        };
    }
}
