using System.Net;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.Server;

/// <summary>A request as a handler sees it: the message, who sent it, and the values its route captured.</summary>
/// <remarks>
/// A view of the server's exchange for the request, passed by value: every request reaches a handler, so the view
/// costs no object of its own (issue 11). It stays valid after the handler returns. A <c>default</c> value is not a
/// request; its members throw <see cref="InvalidOperationException"/>.
/// </remarks>
public readonly struct CoapRequest : IEquatable<CoapRequest>
{
    private static readonly Dictionary<string, string> NoRouteValues = [];
    private readonly CoapExchange? _exchange;

    internal CoapRequest(CoapExchange exchange) => _exchange = exchange;

    /// <summary>The request message, with every typed option accessor.</summary>
    /// <exception cref="InvalidOperationException">This is a <c>default</c> value, not a request the server made.</exception>
    public CoapMessage Message => Exchange.Request;

    /// <summary>
    /// Who sent the request: the transport (by scheme), the address and any security context: the transport's (DTLS, TLS),
    /// or the one a stage authenticated the request with end to end (OSCORE, RFC 8613), whose identity routes that require
    /// authorization check.
    /// </summary>
    /// <exception cref="InvalidOperationException">This is a <c>default</c> value, not a request the server made.</exception>
    public CoapPeer Peer => Exchange.ApplicationPeer;

    /// <summary>The sender's address (<see cref="CoapPeer.EndPoint"/> of <see cref="Peer"/>).</summary>
    /// <exception cref="InvalidOperationException">This is a <c>default</c> value, not a request the server made.</exception>
    public IPEndPoint RemoteEndPoint => Peer.EndPoint;

    /// <summary>The method: GET, POST, PUT, DELETE, FETCH, PATCH or iPATCH.</summary>
    /// <exception cref="InvalidOperationException">This is a <c>default</c> value, not a request the server made.</exception>
    public CoapCode Method => Message.Code;

    /// <summary>The request path, "/" for the root ("/store/lamp").</summary>
    /// <exception cref="InvalidOperationException">This is a <c>default</c> value, not a request the server made.</exception>
    public string Path => Message.UriPath;

    /// <summary>The values captured by the route's parameters, such as name for "/store/{name}".</summary>
    /// <exception cref="InvalidOperationException">This is a <c>default</c> value, not a request the server made.</exception>
    public IReadOnlyDictionary<string, string> RouteValues => ServerRequestFeature.Of(Exchange)?.RouteValues ?? NoRouteValues;

    /// <summary>The payload.</summary>
    /// <exception cref="InvalidOperationException">This is a <c>default</c> value, not a request the server made.</exception>
    public ReadOnlyMemory<byte> Payload => Message.Payload;

    /// <summary>The Content-Format of the payload, or null.</summary>
    /// <exception cref="InvalidOperationException">This is a <c>default</c> value, not a request the server made.</exception>
    public ushort? ContentFormat => Message.ContentFormat;

    /// <summary>The Accept option, or null.</summary>
    /// <exception cref="InvalidOperationException">This is a <c>default</c> value, not a request the server made.</exception>
    public ushort? Accept => Message.Accept;

    private CoapExchange Exchange => _exchange ?? throw new InvalidOperationException("This CoapRequest is a default value; the server passes handlers the requests it received.");

    /// <summary>True when both views are of the same request.</summary>
    /// <param name="left">One request.</param>
    /// <param name="right">The other.</param>
    /// <returns>True when they are the same exchange.</returns>
    public static bool operator ==(CoapRequest left, CoapRequest right) => left.Equals(right);

    /// <summary>True when the views are of different requests.</summary>
    /// <param name="left">One request.</param>
    /// <param name="right">The other.</param>
    /// <returns>True when they are different exchanges.</returns>
    public static bool operator !=(CoapRequest left, CoapRequest right) => !left.Equals(right);

    /// <summary>The value a route parameter captured, or null.</summary>
    /// <param name="name">The parameter name, as in "{name}".</param>
    /// <returns>The value.</returns>
    /// <exception cref="InvalidOperationException">This is a <c>default</c> value, not a request the server made.</exception>
    public string? GetRouteValue(string name) => ServerRequestFeature.Of(Exchange)?.RouteValues is { } values && values.TryGetValue(name, out string? value) ? value : null;

    /// <summary>The value of the first "name=value" Uri-Query argument with this name; "" for a bare "name"; null when absent.</summary>
    /// <param name="name">The argument name.</param>
    /// <returns>The value.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="name"/> is null.</exception>
    /// <exception cref="InvalidOperationException">This is a <c>default</c> value, not a request the server made.</exception>
    public string? GetQueryValue(string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        CoapExchange exchange = Exchange;

        // Decoded once per request and kept with the exchange, for a handler that asks for several arguments.
        ServerRequestFeature known = ServerRequestFeature.For(exchange);
        string[] query = known.QueryArguments ??= exchange.Request.GetUriQueryArguments();
        foreach (string argument in query)
        {
            int equals = argument.IndexOf('=', StringComparison.Ordinal);
            ReadOnlySpan<char> key = equals < 0 ? argument : argument.AsSpan(0, equals);
            if (key.SequenceEqual(name))
            {
                return equals < 0 ? string.Empty : argument[(equals + 1)..];
            }
        }

        return null;
    }

    /// <summary>
    /// Evaluates the request's conditions against <paramref name="current"/>, the way the server does before a handler
    /// of a route with state (RFC 7252 section 5.10.8): a 4.12 Precondition Failed when If-Match or If-None-Match does
    /// not hold, a 2.03 Valid for a GET (not an Observe one) whose ETag is the current one, or null when the method may
    /// be performed. A handler calls it under its own lock to make the check and the change one step.
    /// </summary>
    /// <param name="current">The target's state now.</param>
    /// <returns>The answer instead of performing the method, or null.</returns>
    /// <exception cref="InvalidOperationException">This is a <c>default</c> value, not a request the server made.</exception>
    public CoapResponse? EvaluateConditions(CoapResourceState current) => ConditionalRequests.Evaluate(Message, current);

    /// <summary>The payload decoded as UTF-8.</summary>
    /// <returns>The text.</returns>
    /// <exception cref="InvalidOperationException">This is a <c>default</c> value, not a request the server made.</exception>
    public string GetPayloadString() => Message.GetPayloadString();

    /// <inheritdoc/>
    public bool Equals(CoapRequest other) => ReferenceEquals(_exchange, other._exchange);

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is CoapRequest other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => _exchange is null ? 0 : System.Runtime.CompilerServices.RuntimeHelpers.GetHashCode(_exchange);

    /// <summary>The method and path, for logs; "(none)" for a <c>default</c> value.</summary>
    public override string ToString() => _exchange is null ? "(none)" : $"{Method} {Path}";
}
