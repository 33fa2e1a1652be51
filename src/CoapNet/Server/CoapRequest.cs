using System.Net;
using CoapNet.Channels;
using CoapNet.Messages;

namespace CoapNet.Server;

/// <summary>A request as a handler sees it: the message, who sent it, and the values its route captured.</summary>
public sealed class CoapRequest
{
    private static readonly Dictionary<string, string> NoRouteValues = [];
    private readonly Dictionary<string, string> _routeValues;
    private string[]? _query;

    internal CoapRequest(CoapMessage message, CoapPeer peer, Dictionary<string, string>? routeValues)
    {
        Message = message;
        Peer = peer;
        _routeValues = routeValues ?? NoRouteValues;
    }

    /// <summary>The request message, with every typed option accessor.</summary>
    public CoapMessage Message { get; }

    /// <summary>Who sent the request: the transport (by scheme), the address and any security context.</summary>
    public CoapPeer Peer { get; }

    /// <summary>The sender's address (<see cref="CoapPeer.EndPoint"/> of <see cref="Peer"/>).</summary>
    public IPEndPoint RemoteEndPoint => Peer.EndPoint;

    /// <summary>The method: GET, POST, PUT, DELETE, FETCH, PATCH or iPATCH.</summary>
    public CoapCode Method => Message.Code;

    /// <summary>The request path, "/" for the root ("/store/lamp").</summary>
    public string Path => Message.UriPath;

    /// <summary>The values captured by the route's parameters, such as name for "/store/{name}".</summary>
    public IReadOnlyDictionary<string, string> RouteValues => _routeValues;

    /// <summary>The payload.</summary>
    public ReadOnlyMemory<byte> Payload => Message.Payload;

    /// <summary>The Content-Format of the payload, or null.</summary>
    public ushort? ContentFormat => Message.ContentFormat;

    /// <summary>The Accept option, or null.</summary>
    public ushort? Accept => Message.Accept;

    /// <summary>The value a route parameter captured, or null.</summary>
    /// <param name="name">The parameter name, as in "{name}".</param>
    /// <returns>The value.</returns>
    public string? GetRouteValue(string name) => _routeValues.TryGetValue(name, out string? value) ? value : null;

    /// <summary>The value of the first "name=value" Uri-Query argument with this name; "" for a bare "name"; null when absent.</summary>
    /// <param name="name">The argument name.</param>
    /// <returns>The value.</returns>
    public string? GetQueryValue(string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        _query ??= Message.GetUriQueryArguments();
        foreach (string argument in _query)
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

    /// <summary>The payload decoded as UTF-8.</summary>
    /// <returns>The text.</returns>
    public string GetPayloadString() => Message.GetPayloadString();

    /// <summary>The method and path, for logs.</summary>
    public override string ToString() => $"{Method} {Path}";
}
