using CoapNet.Channels;
using CoapNet.Messaging;

namespace CoapNet.RateLimiting;

/// <summary>Adds the request rate limit per device to an endpoint's stack.</summary>
public static class CoapRateLimitEndpointOptionsExtensions
{
    /// <summary>The stage's name in the chain (<see cref="CoapStagePosition.Above(string)"/> and the like can place another stage by it).</summary>
    public const string StageName = "IdentityRateLimit";

    /// <summary>
    /// Limits how fast each device may send requests (<paramref name="options"/>): a request past its device's rate is
    /// answered 4.29 Too Many Requests with Max-Age, the whole seconds until it may send again (RFC 8516 section 3), when it
    /// is confirmable or came over a reliable transport, and dropped unanswered when it is non-confirmable (as a server that
    /// sheds load drops a NON request, RFC 7252 section 5.9.3.4); it reaches no stage above and no handler. The stage sits
    /// nearest the wire (<see cref="CoapStagePosition.BelowAll"/>), so every request counts, each block of a block-wise
    /// transfer too. Every endpoint made with these endpoint options shares one table, so a device's requests count across
    /// transports; refusals are counted on <c>coap.server.requests.limited</c>.
    /// </summary>
    /// <param name="endpoint">The endpoint's options (a server's <c>CoapServerOptions.Endpoint</c>, or a listener's own).</param>
    /// <param name="options">The rate, the burst and the table's bound; read now.</param>
    /// <returns>The endpoint's options.</returns>
    /// <exception cref="ArgumentException">A setting is out of range, or the stage was added already; the message names it.</exception>
    public static CoapEndpointOptions UseIdentityRateLimit(this CoapEndpointOptions endpoint, CoapIdentityRateLimitOptions options)
    {
        ArgumentNullException.ThrowIfNull(endpoint);
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        CoapTokenBuckets<PeerIdentityKey> buckets = new(options.RequestsPerSecond, options.Burst, options.MaxIdentities, endpoint.TimeProvider);
        return endpoint.UseStage(StageName, _ => new IdentityRateLimitStage(buckets), CoapStagePosition.BelowAll);
    }
}
