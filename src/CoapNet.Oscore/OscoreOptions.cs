using System.Collections.Concurrent;
using System.Net;

namespace CoapNet.Oscore;

/// <summary>
/// The OSCORE contexts of an endpoint (RFC 8613): on a server, the contexts of the clients it accepts, found by the
/// request's kid and 'kid context' (section 8.2); on a client, the context to use with each server, by its address
/// (section 8.1: different servers have different contexts). Pass it to
/// <see cref="OscoreEndpointOptionsExtensions.UseOscore"/>.
/// </summary>
/// <remarks>Thread-safe; contexts may be added while the endpoint runs.</remarks>
public sealed class OscoreOptions
{
    private readonly ConcurrentDictionary<string, OscoreContext> _byKidAndContext = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, OscoreContext> _byKid = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<IPEndPoint, OscoreContext> _byServer = new();

    /// <summary>Accepts requests protected with <paramref name="context"/>: its Recipient ID is the client's kid.</summary>
    /// <param name="context">A client's context, as this server holds it.</param>
    /// <returns>These options.</returns>
    /// <exception cref="ArgumentException">A context with the same Recipient ID and ID Context is already added.</exception>
    public OscoreOptions AddServerContext(OscoreContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        if (!_byKidAndContext.TryAdd(Key(context.RecipientId.Span, context.IdContext), context))
        {
            throw new ArgumentException($"A context for {context.PeerIdentity} is already added; each client has one.", nameof(context));
        }

        _byKid.TryAdd(Key(context.RecipientId.Span, null), context);
        return this;
    }

    /// <summary>Protects every request to <paramref name="server"/> with <paramref name="context"/>.</summary>
    /// <param name="server">The server's address, as the client's requests go to it.</param>
    /// <param name="context">The context this client shares with that server.</param>
    /// <returns>These options.</returns>
    public OscoreOptions AddClientContext(IPEndPoint server, OscoreContext context)
    {
        ArgumentNullException.ThrowIfNull(server);
        ArgumentNullException.ThrowIfNull(context);
        _byServer[server] = context;
        return this;
    }

    /// <summary>The context for requests to <paramref name="server"/>, or null to send them unprotected.</summary>
    internal OscoreContext? ForServer(IPEndPoint server) => _byServer.IsEmpty ? null : _byServer.GetValueOrDefault(server);

    /// <summary>
    /// The context a request's kid and 'kid context' name (RFC 8613 section 8.2, step 2); without a kid context, a context
    /// without ID Context first, then any with that Recipient ID.
    /// </summary>
    internal OscoreContext? ForClient(ReadOnlySpan<byte> kid, ReadOnlyMemory<byte>? kidContext)
    {
        if (kidContext is { } sent)
        {
            return _byKidAndContext.GetValueOrDefault(Key(kid, sent.ToArray()));
        }

        return _byKidAndContext.GetValueOrDefault(Key(kid, null)) ?? _byKid.GetValueOrDefault(Key(kid, null));
    }

    private static string Key(ReadOnlySpan<byte> kid, byte[]? idContext)
        => (idContext is null ? "-" : Convert.ToHexString(idContext)) + ":" + Convert.ToHexString(kid);
}
