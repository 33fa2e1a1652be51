using CoapNet.Messaging;
using CoapNet.RateLimiting;
using CoapNet.Server;
using CoapNet.Transports;

namespace CoapNet.Multicast;

/// <summary>Group communication on a CoAP server (RFC 7252 section 8, draft-ietf-core-groupcomm-bis).</summary>
public static class CoapMulticastServerExtensions
{
    /// <summary>The name of the stage <see cref="UseGroupRequests"/> adds, nearest the wire.</summary>
    public const string StageName = "GroupRequests";

    /// <summary>
    /// Adds a UDP endpoint on <see cref="CoapMulticastOptions.Port"/> (5683) that joins the groups
    /// (<see cref="CoapMulticastOptions.Groups"/>, All CoAP Nodes by default) on the interfaces chosen, and serves unicast
    /// requests on that port too: do not also listen on "coap://[::]:5683". A request sent to a group reaches an endpoint
    /// of its own (one per group, named "multicast GROUP") that is NON only, never answers with a Reset, answers after a
    /// random leisure and not with errors unless asked (<see cref="UseGroupRequests"/>); its responses go from the unicast
    /// address. Group endpoints take the server's <see cref="CoapServerOptions.Endpoint"/> settings as they are now, so set
    /// those first. There is no coaps on a group: DTLS secures one peer, never a group (Group OSCORE is not here).
    /// </summary>
    /// <param name="options">The server's options.</param>
    /// <param name="configure">Chooses the groups, the interfaces, the leisure and the rate limit; null for the defaults.</param>
    /// <returns>The server's options.</returns>
    /// <exception cref="ArgumentException">A setting is out of range, a group is not a multicast address or no interface has a name given.</exception>
    public static CoapServerOptions ListenMulticast(this CoapServerOptions options, Action<CoapMulticastOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        CoapMulticastOptions multicast = new();
        configure?.Invoke(multicast);
        multicast.Validate();
        if (multicast.Interfaces.Count > 0)
        {
            // A name that is not there is the operator's mistake: said now, not at start.
            _ = MulticastSockets.InterfaceIndexes(multicast.Interfaces);
        }

        MulticastSockets sockets = new(multicast);
        CoapEndpointOptions group = options.Endpoint.Clone();
        group.UseGroupRequests(multicast);
        options.Listen(sockets.Unicast);
        foreach (MulticastEndpointTransport transport in sockets.Groups)
        {
            options.Listen(transport, listen =>
            {
                listen.Name = "multicast " + transport.Group;
                listen.Endpoint = group;
            });
        }

        return options;
    }

    /// <summary>
    /// Makes an endpoint answer as a member of a group (every request it receives is taken to have come by multicast):
    /// a source past <see cref="CoapMulticastOptions.RequestsPerSecond"/> is not answered; an error (4.xx, 5.xx) is not
    /// sent unless the request's No-Response option asks for errors (draft-ietf-core-groupcomm-bis section 3.1.2, RFC 7967);
    /// a /.well-known/core query that matched nothing is not answered (RFC 6690 section 4.1); what is sent waits a random
    /// point within the leisure (RFC 7252 section 8.2). <see cref="ListenMulticast"/> does this for its group endpoints;
    /// call it for a group transport of your own, whose transport must itself drop CON requests (RFC 7252 section 8.1).
    /// </summary>
    /// <param name="endpoint">The group endpoint's options.</param>
    /// <param name="options">The leisure and the rate limit.</param>
    /// <returns>The endpoint's options.</returns>
    /// <exception cref="ArgumentException">A setting is out of range.</exception>
    public static CoapEndpointOptions UseGroupRequests(this CoapEndpointOptions endpoint, CoapMulticastOptions options)
    {
        ArgumentNullException.ThrowIfNull(endpoint);
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();

        // One limit for every endpoint made with these options, so a source's requests count across the groups.
        CoapTokenBuckets<AddressGroup> limit = new(options.RequestsPerSecond, options.Burst, options.MaxTrackedSources, endpoint.TimeProvider);
        return endpoint.UseStage(StageName, context => new GroupRequestStage(context, options, limit), CoapStagePosition.BelowAll);
    }
}
