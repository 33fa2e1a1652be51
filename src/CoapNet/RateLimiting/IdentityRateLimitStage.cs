using CoapNet.Channels;
using CoapNet.Diagnostics;
using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.RateLimiting;

/// <summary>
/// A server's stage that takes a token of the request's device (<see cref="PeerIdentityKey"/>) for each request, and
/// answers one past the rate itself (see <see cref="CoapRateLimitEndpointOptionsExtensions.UseIdentityRateLimit"/>).
/// </summary>
internal sealed class IdentityRateLimitStage(CoapTokenBuckets<PeerIdentityKey> buckets) : CoapStage
{
    /// <inheritdoc/>
    public override void ReceiveRequest(CoapExchange exchange, Action<CoapExchange> next)
    {
        double wait = buckets.TryTake(PeerIdentityKey.Of(exchange.Peer));
        if (wait <= 0)
        {
            next(exchange);
            return;
        }

        if (CoapInstrumentation.LimitedCounter.Enabled)
        {
            CoapInstrumentation.LimitedCounter.Add(1, new KeyValuePair<string, object?>("url.scheme", exchange.Peer.Scheme));
        }

        if (!exchange.IsConfirmable && !exchange.IsReliable)
        {
            // RFC 7252 section 5.9.3.4's shedding: a NON request past the rate is dropped, costing no answer.
            exchange.EndWithoutResponse();
            return;
        }

        // RFC 8516 section 3: 4.29 with Max-Age, the whole seconds until the device has a request to spend again. It goes
        // down through the stages below this one only (there are none: this one is nearest the wire).
        CoapMessage tooMany = new() { Code = CoapCode.TooManyRequests };
        tooMany.MaxAge = (uint)Math.Min(uint.MaxValue, Math.Ceiling(wait));
        exchange.RespondFrom(this, tooMany);
    }
}
