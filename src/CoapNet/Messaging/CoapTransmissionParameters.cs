namespace CoapNet.Messaging;

/// <summary>
/// The transmission parameters of RFC 7252 section 4.8 and the time values derived from them
/// (section 4.8.2). The defaults are the RFC's.
/// </summary>
public sealed record CoapTransmissionParameters
{
    /// <summary>A new instance with the RFC 7252 defaults (a new one each time, since the parameters can be changed).</summary>
    public static CoapTransmissionParameters Default => new();

    /// <summary>ACK_TIMEOUT: the minimum initial retransmission timeout (default 2 s).</summary>
    public TimeSpan AckTimeout { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>ACK_RANDOM_FACTOR: the initial timeout is random in [ACK_TIMEOUT, ACK_TIMEOUT x this] (default 1.5, at least 1).</summary>
    public double AckRandomFactor { get; set; } = 1.5;

    /// <summary>MAX_RETRANSMIT: how often a confirmable message is retransmitted (default 4).</summary>
    public int MaxRetransmit { get; set; } = 4;

    /// <summary>NSTART: outstanding interactions per peer (default 1, RFC 7252 section 4.7).</summary>
    public int NStart { get; set; } = 1;

    /// <summary>DEFAULT_LEISURE: how long a multicast responder may wait (default 5 s).</summary>
    public TimeSpan DefaultLeisure { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>PROBING_RATE in bytes per second toward a peer that does not respond (default 1).</summary>
    public double ProbingRate { get; set; } = 1;

    /// <summary>MAX_LATENCY: the longest a datagram is assumed to take in transit (default 100 s).</summary>
    public TimeSpan MaxLatency { get; set; } = TimeSpan.FromSeconds(100);

    /// <summary>PROCESSING_DELAY: the time a node takes to turn a CON into an ACK (default ACK_TIMEOUT).</summary>
    public TimeSpan? ProcessingDelay { get; set; }

    /// <summary>MAX_TRANSMIT_SPAN = ACK_TIMEOUT x (2^MAX_RETRANSMIT - 1) x ACK_RANDOM_FACTOR (default 45 s).</summary>
    public TimeSpan MaxTransmitSpan => AckTimeout * (((1 << MaxRetransmit) - 1) * AckRandomFactor);

    /// <summary>MAX_TRANSMIT_WAIT = ACK_TIMEOUT x (2^(MAX_RETRANSMIT + 1) - 1) x ACK_RANDOM_FACTOR (default 93 s).</summary>
    public TimeSpan MaxTransmitWait => AckTimeout * (((1 << (MaxRetransmit + 1)) - 1) * AckRandomFactor);

    /// <summary>EXCHANGE_LIFETIME = MAX_TRANSMIT_SPAN + 2 x MAX_LATENCY + PROCESSING_DELAY (default 247 s).</summary>
    public TimeSpan ExchangeLifetime => MaxTransmitSpan + (2 * MaxLatency) + (ProcessingDelay ?? AckTimeout);

    /// <summary>NON_LIFETIME = MAX_TRANSMIT_SPAN + MAX_LATENCY (default 145 s).</summary>
    public TimeSpan NonLifetime => MaxTransmitSpan + MaxLatency;

    /// <summary>Checks that the parameters make sense.</summary>
    /// <exception cref="ArgumentException">A parameter is out of range; the message names it.</exception>
    public void Validate()
    {
        if (AckTimeout <= TimeSpan.Zero)
        {
            throw new ArgumentException("AckTimeout must be positive.", nameof(AckTimeout));
        }

        if (!(AckRandomFactor >= 1.0) || double.IsInfinity(AckRandomFactor))
        {
            throw new ArgumentException("AckRandomFactor must be at least 1 (RFC 7252 section 4.8.1).", nameof(AckRandomFactor));
        }

        if (MaxRetransmit is < 0 or > 20)
        {
            throw new ArgumentException("MaxRetransmit must be between 0 and 20.", nameof(MaxRetransmit));
        }

        if (NStart < 1)
        {
            throw new ArgumentException("NStart must be at least 1.", nameof(NStart));
        }

        if (MaxLatency < TimeSpan.Zero || DefaultLeisure < TimeSpan.Zero || ProcessingDelay < TimeSpan.Zero)
        {
            throw new ArgumentException("MaxLatency, DefaultLeisure and ProcessingDelay must not be negative.");
        }
    }

    /// <summary>A copy of these settings, for an endpoint's own (<see cref="Messaging.CoapEndpointOptions.Clone"/>).</summary>
    internal CoapTransmissionParameters Copy() => (CoapTransmissionParameters)MemberwiseClone();
}
