using CoapNet.Channels;
using CoapNet.Endpoints;
using CoapNet.Messaging;

namespace CoapNet.Oscore;

/// <summary>Adds OSCORE (RFC 8613) to a server's or a client's endpoints, and lets routes require it.</summary>
public static class OscoreEndpointOptionsExtensions
{
    /// <summary>The OSCORE stage's name, just below Observe (<see cref="CoapStageNames.Observe"/>).</summary>
    public const string StageName = "Oscore";

    /// <summary>The name of the outer block-wise stage, just below OSCORE, which fragments OSCORE messages (RFC 8613 section 4.1.3.4.2).</summary>
    public const string OuterBlockwiseStageName = "OscoreOuterBlockwise";

    /// <summary>
    /// Adds OSCORE to every endpoint these options make: the stage below Observe, so that notifications are protected
    /// each with a Partial IV of its own, and below the built-in block-wise stage, which fragments plaintexts (inner
    /// Block options); and a second block-wise stage below it for OSCORE messages too large for one message (outer
    /// Block options), RFC 8613 section 4.1.3.4.
    /// </summary>
    /// <param name="endpoint">A server's or a client's endpoint options.</param>
    /// <param name="oscore">The contexts: a server's by client kid, a client's by server address.</param>
    /// <returns><paramref name="endpoint"/>.</returns>
    /// <exception cref="ArgumentException">An argument is null, or OSCORE is already added.</exception>
    public static CoapEndpointOptions UseOscore(this CoapEndpointOptions endpoint, OscoreOptions oscore)
    {
        ArgumentNullException.ThrowIfNull(endpoint);
        ArgumentNullException.ThrowIfNull(oscore);
        return endpoint
            .UseStage(StageName, _ => new OscoreStage(oscore), CoapStagePosition.Below(CoapStageNames.Observe))
            .UseStage(OuterBlockwiseStageName, context => context.CreateBlockwiseStage(), CoapStagePosition.Below(StageName));
    }

    /// <summary>
    /// Serves the endpoints of <paramref name="builder"/> only to requests protected with OSCORE: any other gets 4.01
    /// Unauthorized (no identity), or 4.03 Forbidden when a transport authenticated the peer otherwise (DTLS, TLS).
    /// </summary>
    /// <typeparam name="TBuilder">An endpoint's or a group's builder.</typeparam>
    /// <param name="builder">The endpoint or group.</param>
    /// <returns><paramref name="builder"/>.</returns>
    public static TBuilder RequireOscore<TBuilder>(this TBuilder builder)
        where TBuilder : CoapConventionBuilder<TBuilder>
    {
        ArgumentNullException.ThrowIfNull(builder);
        return builder.RequireAuthorization(static (identity, _) => identity.Kind == CoapPeerIdentityKind.Oscore);
    }
}
