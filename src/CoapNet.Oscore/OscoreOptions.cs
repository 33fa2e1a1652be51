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
    // A server's contexts by Recipient ID, packed into a number (an ID is at most 7 bytes, RFC 8613 section 3.3), each with
    // the contexts of that ID in the order added: finding a request's context costs no allocation. Replaced, never changed,
    // under _gate; read without it.
    private readonly ConcurrentDictionary<ulong, OscoreContext[]> _byKid = new();
    private readonly object _gate = new();
    private readonly ConcurrentDictionary<IPEndPoint, OscoreContext> _byServer = new();

    /// <summary>Accepts requests protected with <paramref name="context"/>: its Recipient ID is the client's kid.</summary>
    /// <param name="context">A client's context, as this server holds it.</param>
    /// <returns>These options.</returns>
    /// <exception cref="ArgumentException">A context with the same Recipient ID and ID Context is already added.</exception>
    public OscoreOptions AddServerContext(OscoreContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        ulong key = Key(context.RecipientId.Span);
        lock (_gate)
        {
            OscoreContext[] added = _byKid.GetValueOrDefault(key) ?? [];
            foreach (OscoreContext other in added)
            {
                if (SameIdContext(other.IdContext, context.IdContext))
                {
                    throw new ArgumentException($"A context for {context.PeerIdentity} is already added; each client has one.", nameof(context));
                }
            }

            _byKid[key] = [.. added, context];
        }

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
    /// without ID Context first, then the first added with that Recipient ID. Allocates nothing: it runs for every request.
    /// </summary>
    internal OscoreContext? ForClient(ReadOnlySpan<byte> kid, ReadOnlyMemory<byte>? kidContext)
    {
        if (kid.Length > Cose.OscoreAlgorithm.MaxIdLength || !_byKid.TryGetValue(Key(kid), out OscoreContext[]? contexts))
        {
            return null;
        }

        if (kidContext is { } sent)
        {
            foreach (OscoreContext context in contexts)
            {
                if (context.IdContext is { } idContext && sent.Span.SequenceEqual(idContext))
                {
                    return context;
                }
            }

            return null;
        }

        foreach (OscoreContext context in contexts)
        {
            if (context.IdContext is null)
            {
                return context;
            }
        }

        return contexts[0];
    }

    /// <summary>An ID of at most 7 bytes as one number: its length in the top byte, its bytes below, so no two IDs share one.</summary>
    private static ulong Key(ReadOnlySpan<byte> id)
    {
        ulong key = (ulong)id.Length << 56;
        for (int i = 0; i < id.Length; i++)
        {
            key |= (ulong)id[i] << (8 * i);
        }

        return key;
    }

    private static bool SameIdContext(byte[]? one, byte[]? other)
        => one is null ? other is null : other is not null && one.AsSpan().SequenceEqual(other);
}
