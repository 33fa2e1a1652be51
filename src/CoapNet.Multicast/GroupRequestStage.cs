using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.RateLimiting;
using CoapNet.Transports;

namespace CoapNet.Multicast;

/// <summary>
/// What a server does differently with a request that reached it through a group (RFC 7252 section 8.2,
/// draft-ietf-core-groupcomm-bis section 3.1): a source past its rate is not answered; an error is not answered unless
/// the request's No-Response option asks for errors (RFC 7967); a discovery whose filter matched nothing is not
/// answered (RFC 6690 section 4.1); and what is answered waits a random point within the leisure, so the members of
/// the group do not all answer at once. Only group endpoints have it: every request through it came by multicast.
/// A GET with Observe registers an observation as on any endpoint (the server's list of observers is shared by its
/// endpoints); its notifications are not group answers and pass as they are.
/// </summary>
/// <remarks>
/// It sits nearest the wire (below every other stage), so it sees each request first and every response last, the
/// errors other stages make (block-wise, Echo) included. A CON to a group never reaches it: the group transport drops
/// it before the message layer would acknowledge it (RFC 7252 section 8.1).
/// </remarks>
internal sealed class GroupRequestStage(CoapStageContext context, CoapMulticastOptions options, CoapTokenBuckets<AddressGroup> limit) : CoapStage
{
    private const string WellKnownCore = "/.well-known/core";

    private readonly TimeSpan _leisure = options.EffectiveLeisure();
    private readonly Random? _seeded = context.Options.Random;

    /// <inheritdoc/>
    public override void ReceiveRequest(CoapExchange exchange, Action<CoapExchange> next)
    {
        if (limit.TryTake(AddressGroup.Of(exchange.RemoteEndPoint.Address)) > 0)
        {
            exchange.EndWithoutResponse();
            return;
        }

        next(exchange);
    }

    /// <inheritdoc/>
    public override void SendResponse(CoapExchange exchange, CoapMessage response, Action<CoapExchange, CoapMessage> next)
    {
        if (exchange.IsFurtherResponse)
        {
            // A notification of an observation a group request registered (RFC 7641 with draft-ietf-core-groupcomm-bis's
            // Observe on a group): it answers a change at this server, not the group request all members heard, so it
            // neither waits a leisure (RFC 7252 section 8.2 spreads the answers to one request) nor is held back as an
            // error, since an error notification is how the observer learns that its observation ended (RFC 7641
            // section 4.2). It goes to the observer by unicast, from the unicast address, as every answer does.
            next(exchange, response);
            return;
        }

        if (Suppressed(exchange.Request, response))
        {
            exchange.EndWithoutResponse();
            return;
        }

        TimeSpan delay = Delay();
        if (delay <= TimeSpan.Zero)
        {
            next(exchange, response);
            return;
        }

        // RFC 7252 section 8.2: "pick a random point of time within the chosen leisure period to send back the unicast
        // response". The response is held by its timer alone; the rate limit bounds how many are held.
        Pending pending = new(exchange, response, next);
        pending.Timer = context.TimeProvider.CreateTimer(static state => ((Pending)state!).Send(), pending, delay, Timeout.InfiniteTimeSpan);
    }

    /// <summary>
    /// True when the response to a group request is not sent. draft-ietf-core-groupcomm-bis section 3.1.2: a server
    /// does not answer a group request with an error unless the client asked for errors with No-Response (RFC 7967
    /// section 2.1); a request that carries the option had it applied by the No-Response stage above, so its errors pass.
    /// RFC 6690 section 4.1: a filtered discovery that matched nothing is not answered to a group.
    /// </summary>
    internal static bool Suppressed(CoapMessage request, CoapMessage response)
    {
        if ((response.Code.IsClientError || response.Code.IsServerError) && request.NoResponse is null)
        {
            return true;
        }

        return response.Code == CoapCode.Content
            && response.Payload.IsEmpty
            && request.Code == CoapCode.Get
            && request.UriQuery.Length > 0
            && string.Equals(request.UriPath, WellKnownCore, StringComparison.Ordinal);
    }

    private TimeSpan Delay()
    {
        if (_leisure <= TimeSpan.Zero)
        {
            return TimeSpan.Zero;
        }

        // The endpoint's random source (CoapEndpointOptions.Random), as retransmission jitter uses; a seeded one is not
        // thread-safe, Random.Shared is.
        if (_seeded is null)
        {
            return TimeSpan.FromTicks((long)(Random.Shared.NextDouble() * _leisure.Ticks));
        }

        lock (_seeded)
        {
            return TimeSpan.FromTicks((long)(_seeded.NextDouble() * _leisure.Ticks));
        }
    }

    private sealed class Pending(CoapExchange exchange, CoapMessage response, Action<CoapExchange, CoapMessage> next)
    {
        public ITimer? Timer;

        public void Send()
        {
            Timer?.Dispose();
            try
            {
                next(exchange, response);
            }
            catch (ObjectDisposedException)
            {
                // The endpoint closed within the leisure: the response is not sent, as if lost.
            }
        }
    }
}
