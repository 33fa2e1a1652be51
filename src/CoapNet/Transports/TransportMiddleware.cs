namespace CoapNet.Transports;

/// <summary>How a server's endpoint and a client's scheme run the middleware around their transport: in the order added, each wrapping what the one before returned.</summary>
internal static class TransportMiddleware
{
    /// <summary>
    /// Wraps <paramref name="transport"/> in <paramref name="middleware"/>; on any failure what was made so far is disposed
    /// (the outermost owns the ones within) and the failure goes on.
    /// </summary>
    /// <param name="transport">The bare transport, owned by this call until it returns.</param>
    /// <param name="middleware">The middleware.</param>
    /// <param name="context">What each is given.</param>
    /// <param name="check">Checks what the last returned (that it carries the scheme it must); throws when it does not.</param>
    /// <param name="dispose">Disposes a transport.</param>
    /// <param name="owner">Who the middleware is for, for the message of one that returns nothing.</param>
    /// <returns>The outermost transport.</returns>
    public static T Apply<T>(T transport, IReadOnlyList<Func<T, CoapTransportContext, T>> middleware, CoapTransportContext context, Action<T> check, Action<T> dispose, string owner)
        where T : class
    {
        try
        {
            foreach (Func<T, CoapTransportContext, T> wrap in middleware)
            {
                transport = wrap(transport, context) ?? throw new InvalidOperationException($"{owner}: a middleware returned no transport.");
            }

            check(transport);
            return transport;
        }
        catch
        {
            dispose(transport);
            throw;
        }
    }
}
