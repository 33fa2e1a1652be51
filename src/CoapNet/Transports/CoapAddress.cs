using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using CoapNet.Messages;

namespace CoapNet.Transports;

/// <summary>
/// Where a CoAP endpoint is, as a URI names it: a scheme, which picks the transport (coap over UDP, coap+tcp, coaps over
/// DTLS, coaps+tcp over TLS, and whatever a package registers), a host and a port. The one parser of endpoint addresses:
/// a server's endpoints in code and in configuration (<c>coaps://[::]:5684</c>) and the coap tool's URI argument read
/// it here, with the URI parser of requests (RFC 7252 section 6.4) underneath.
/// </summary>
/// <remarks>Immutable; equal when the scheme, the host and the port are.</remarks>
public sealed class CoapAddress : IEquatable<CoapAddress>
{
    private static readonly System.Buffers.SearchValues<char> SchemeCharacters = System.Buffers.SearchValues.Create("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.");

    /// <summary>An address for an endpoint: <paramref name="scheme"/> at <paramref name="endPoint"/>.</summary>
    /// <param name="scheme">The URI scheme, such as "coap" or "coaps+tcp" (RFC 3986 section 3.1 syntax).</param>
    /// <param name="endPoint">The IP address and port.</param>
    /// <exception cref="ArgumentException">The scheme is not a URI scheme.</exception>
    public CoapAddress(string scheme, IPEndPoint endPoint)
    {
        ArgumentNullException.ThrowIfNull(endPoint);
        Scheme = CheckScheme(scheme, nameof(scheme));
        IPAddress = endPoint.Address;
        Host = endPoint.Address.ToString();
        Port = endPoint.Port;
    }

    private CoapAddress(string scheme, string host, int port)
    {
        Scheme = scheme;
        Host = host;
        Port = port;
        IPAddress = IPAddress.TryParse(host, out IPAddress? address) ? address : null;
    }

    /// <summary>The URI scheme, in lower case: it picks the transport.</summary>
    public string Scheme { get; }

    /// <summary>The host: an IP address (an IPv6 one without its brackets) or a name, in lower case.</summary>
    public string Host { get; }

    /// <summary>The port: the one written, or the scheme's default.</summary>
    public int Port { get; }

    /// <summary>The host when it is an IP address; null when it is a name.</summary>
    public IPAddress? IPAddress { get; }

    /// <summary>
    /// Reads <paramref name="text"/>, a CoAP URI such as "coap://[::]:5683" or "coaps://device.example/temp": its scheme,
    /// host and port (a path and query may follow and are not part of the address). A port left out is the scheme's
    /// default: the transport <paramref name="transports"/> has for it, else the CoAP schemes' own (5683 for coap and
    /// coap+tcp, 5684 for coaps and coaps+tcp, RFC 7252 section 6 and RFC 8323 section 8).
    /// </summary>
    /// <param name="text">The URI.</param>
    /// <param name="transports">The transports whose default ports count; null for the CoAP schemes' alone.</param>
    /// <returns>The address.</returns>
    /// <exception cref="FormatException">The text is not such a URI; the message quotes it and says what is wrong where.</exception>
    public static CoapAddress Parse(string text, CoapTransportRegistry? transports = null)
    {
        ArgumentNullException.ThrowIfNull(text);
        return TryParse(text, transports, out CoapAddress? address, out string? error) ? address : throw new FormatException(error);
    }

    /// <summary>Reads <paramref name="text"/> as <see cref="Parse"/> does, without throwing.</summary>
    /// <param name="text">The URI.</param>
    /// <param name="transports">The transports whose default ports count; null for the CoAP schemes' alone.</param>
    /// <param name="address">The address, when the text is one.</param>
    /// <param name="error">What is wrong with the text, when it is not; a sentence that quotes it.</param>
    /// <returns>True when the text is an address.</returns>
    public static bool TryParse([NotNullWhen(true)] string? text, CoapTransportRegistry? transports, [NotNullWhen(true)] out CoapAddress? address, [NotNullWhen(false)] out string? error)
        => TryParse(text, transports, addressOnly: false, out address, out error);

    /// <summary>
    /// As the public <see cref="TryParse(string?, CoapTransportRegistry?, out CoapAddress?, out string?)"/>; with
    /// <paramref name="addressOnly"/>, what an endpoint cannot listen on is refused too: a path or a query (an endpoint is
    /// an address, not a resource) and a host name.
    /// </summary>
    internal static bool TryParse([NotNullWhen(true)] string? text, CoapTransportRegistry? transports, bool addressOnly, [NotNullWhen(true)] out CoapAddress? address, [NotNullWhen(false)] out string? error)
    {
        address = null;
        if (string.IsNullOrEmpty(text))
        {
            error = "An endpoint address is a URI such as coap://[::]:5683; the text is empty.";
            return false;
        }

        try
        {
            CoapUriParser.Parsed parsed = CoapUriParser.Parse(text, validated: false, scheme => transports?.Find(scheme)?.DefaultPort ?? CoapMessage.KnownDefaultPort(scheme));
            if (addressOnly && parsed.Entries.Length > parsed.PathStart)
            {
                error = $"'{text}' names a resource after its address; an endpoint listens on scheme://host:port alone, such as coap://[::]:5683.";
                return false;
            }

            address = new CoapAddress(parsed.Scheme, parsed.Host, parsed.Port);
            if (addressOnly && address.IPAddress is null)
            {
                error = $"'{text}' {NamesAHost(address.Host)}";
                address = null;
                return false;
            }

            error = null;
            return true;
        }
        catch (ArgumentException e)
        {
            // The parser's sentence, without the " (Parameter 'uri')" that ArgumentException appends: the reader never saw that parameter.
            error = e.ParamName is null ? e.Message : e.Message.Replace($" (Parameter '{e.ParamName}')", string.Empty, StringComparison.Ordinal);
            return false;
        }
    }

    /// <summary>The IP endpoint of an address whose host is an IP address.</summary>
    /// <returns>The endpoint.</returns>
    /// <exception cref="InvalidOperationException">The host is a name: a server listens on an address, not a name.</exception>
    public IPEndPoint ToEndPoint()
        => IPAddress is { } address
            ? new IPEndPoint(address, Port)
            : throw new InvalidOperationException($"{this} {NamesAHost(Host)}");

    /// <summary>The address as a URI: "coap://[::1]:5683".</summary>
    /// <returns>The text.</returns>
    public override string ToString()
    {
        string host = IPAddress is { AddressFamily: AddressFamily.InterNetworkV6 } ? $"[{Host}]" : Host;
        return string.Create(CultureInfo.InvariantCulture, $"{Scheme}://{host}:{Port}");
    }

    /// <inheritdoc/>
    public bool Equals(CoapAddress? other)
        => other is not null && Port == other.Port && string.Equals(Scheme, other.Scheme, StringComparison.Ordinal) && string.Equals(Host, other.Host, StringComparison.Ordinal);

    /// <inheritdoc/>
    public override bool Equals(object? obj) => Equals(obj as CoapAddress);

    /// <inheritdoc/>
    public override int GetHashCode() => HashCode.Combine(Scheme, Host, Port);

    private static string NamesAHost(string host)
        => $"names the host '{host}'; an endpoint listens on an IP address, such as [::] (every interface), 0.0.0.0 or 127.0.0.1.";

    /// <summary>Checks the syntax of a URI scheme (RFC 3986 section 3.1) and returns it in lower case.</summary>
    internal static string CheckScheme(string scheme, string parameterName)
    {
        ArgumentException.ThrowIfNullOrEmpty(scheme, parameterName);
        if (!char.IsAsciiLetter(scheme[0]) || scheme.AsSpan().ContainsAnyExcept(SchemeCharacters))
        {
            throw new ArgumentException($"'{scheme}' is not a URI scheme: a letter, then letters, digits, '+', '-' or '.' (RFC 3986 section 3.1).", parameterName);
        }

        return scheme.ToLowerInvariant();
    }
}
