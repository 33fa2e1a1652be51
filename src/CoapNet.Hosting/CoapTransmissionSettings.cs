using CoapNet.Messaging;

namespace CoapNet.Hosting;

/// <summary>
/// The RFC 7252 section 4.8 transmission parameters as configuration binds them (a "TransmissionParameters"
/// section); each value left out keeps the RFC's default.
/// </summary>
public sealed class CoapTransmissionSettings
{
    /// <summary>ACK_TIMEOUT, such as "00:00:02".</summary>
    public TimeSpan? AckTimeout { get; set; }

    /// <summary>ACK_RANDOM_FACTOR, at least 1.</summary>
    public double? AckRandomFactor { get; set; }

    /// <summary>MAX_RETRANSMIT.</summary>
    public int? MaxRetransmit { get; set; }

    /// <summary>NSTART: outstanding interactions per peer.</summary>
    public int? NStart { get; set; }

    /// <summary>DEFAULT_LEISURE.</summary>
    public TimeSpan? DefaultLeisure { get; set; }

    /// <summary>PROBING_RATE in bytes per second.</summary>
    public double? ProbingRate { get; set; }

    /// <summary>MAX_LATENCY.</summary>
    public TimeSpan? MaxLatency { get; set; }

    /// <summary>PROCESSING_DELAY.</summary>
    public TimeSpan? ProcessingDelay { get; set; }

    /// <summary>The parameters with every value set here replacing the default's.</summary>
    /// <returns>The parameters; <see cref="CoapTransmissionParameters.Default"/> when nothing is set.</returns>
    public CoapTransmissionParameters ToParameters()
    {
        CoapTransmissionParameters defaults = CoapTransmissionParameters.Default;
        return defaults with
        {
            AckTimeout = AckTimeout ?? defaults.AckTimeout,
            AckRandomFactor = AckRandomFactor ?? defaults.AckRandomFactor,
            MaxRetransmit = MaxRetransmit ?? defaults.MaxRetransmit,
            NStart = NStart ?? defaults.NStart,
            DefaultLeisure = DefaultLeisure ?? defaults.DefaultLeisure,
            ProbingRate = ProbingRate ?? defaults.ProbingRate,
            MaxLatency = MaxLatency ?? defaults.MaxLatency,
            ProcessingDelay = ProcessingDelay ?? defaults.ProcessingDelay,
        };
    }
}
