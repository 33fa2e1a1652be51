// The namespace is named after RFC 9175 section 2 ("Request Freshness and the Echo Option"), not "Echo": a namespace
// CoapNet.Echo would hide every member named Echo from code in namespaces under CoapNet (the tests' Echo handler).
namespace CoapNet.Freshness;

/// <summary>
/// Settings of a server's use of the Echo option (252, RFC 9175 section 2): the freshness of unsafe requests and the
/// amplification mitigation. Both are off by default; a client always answers a 4.01 Unauthorized that carries an
/// Echo option by repeating its request once with that value (RFC 9175 section 2.3), whatever these settings say.
/// </summary>
/// <remarks>
/// The server keeps no state per challenge: an Echo value is a timestamp and a MAC over it and the client's address
/// under a random key of the server's (RFC 9175 appendix A), so a value is good only from the address it was sent to,
/// within <see cref="FreshnessWindow"/> and until the server restarts. A peer that returns a good value counts as
/// verified until the value is <see cref="FreshnessWindow"/> old; at most <see cref="MaxVerifiedPeers"/> are remembered.
/// </remarks>
public sealed class EchoOptions
{
    /// <summary>
    /// True to require fresh requests for the unsafe methods (POST, PUT, DELETE, PATCH, iPATCH; GET and FETCH are
    /// safe): one from a peer not verified within <see cref="FreshnessWindow"/> is answered 4.01 Unauthorized with an
    /// Echo option and not processed, and its repetition carrying that value is (RFC 9175 sections 2.3 and 2.4, item 1).
    /// Default false.
    /// </summary>
    public bool RequireFreshness { get; set; }

    /// <summary>
    /// How long an Echo value the server made stays good, and a peer that returned one counts as verified (default
    /// 5 s). RFC 9175 section 2.3 leaves it to the application: short for actuators, longer for less critical state.
    /// </summary>
    public TimeSpan FreshnessWindow { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// True to mitigate amplification over UDP (RFC 9175 sections 2.4, item 3, and 2.6, updating RFC 7252 section
    /// 11.3): a response more than three times the size of its request, to a peer not verified within
    /// <see cref="FreshnessWindow"/>, is replaced by a 4.01 Unauthorized with an Echo option, and an unsafe request
    /// from such a peer is challenged before it is processed (replacing its response afterwards would make the
    /// client's repetition act twice). Default false, although RFC 9175 section 2.6 says a server SHOULD: a client
    /// that does not implement Echo (many do not) would get 4.01 for every large response. Enable it on a server
    /// reachable from networks where source addresses can be spoofed.
    /// </summary>
    public bool LimitAmplification { get; set; }

    /// <summary>
    /// How many verified peers the server remembers at once (default 10000); past it, after the expired ones are
    /// dropped, a newly verified peer is not remembered and is challenged again on its next request that needs it.
    /// </summary>
    public int MaxVerifiedPeers { get; set; } = 10000;

    /// <summary>True when either check is enabled, so the server reads the Echo option of requests at all.</summary>
    internal bool Enabled => RequireFreshness || LimitAmplification;

    internal void Validate()
    {
        if (FreshnessWindow <= TimeSpan.Zero)
        {
            throw new ArgumentException("FreshnessWindow must be positive.", nameof(FreshnessWindow));
        }

        if (MaxVerifiedPeers < 0)
        {
            throw new ArgumentException("MaxVerifiedPeers must not be negative.", nameof(MaxVerifiedPeers));
        }
    }

    /// <summary>A copy of these settings, for an endpoint's own (<see cref="Messaging.CoapEndpointOptions.Clone"/>).</summary>
    internal EchoOptions Copy() => (EchoOptions)MemberwiseClone();
}
