using System.Globalization;
using System.Net;
using System.Text;

namespace CoapNet.Messages;

// Decomposing a URI into options (RFC 7252 section 6.4) and composing one from options (section 6.5).
public sealed partial class CoapMessage
{
    /// <summary>The default port of a CoAP URI scheme: 5683 for coap and coap+tcp, 5684 for coaps and coaps+tcp (RFC 7252 section 6, RFC 8323 section 8), 80 and 443 for coap+ws and coaps+ws.</summary>
    /// <param name="scheme">The scheme, in lower case.</param>
    /// <returns>The default port.</returns>
    /// <exception cref="ArgumentException">The scheme is not a CoAP scheme.</exception>
    public static int GetDefaultPort(string scheme)
        => KnownDefaultPort(scheme) ?? throw new ArgumentException($"'{scheme}' is not a CoAP URI scheme (coap, coaps, coap+tcp, coaps+tcp, coap+ws, coaps+ws).", nameof(scheme));

    /// <summary>The default port of a CoAP URI scheme (see <see cref="GetDefaultPort(string)"/>), or null for any other scheme.</summary>
    internal static int? KnownDefaultPort(string scheme) => scheme switch
    {
        "coap" or "coap+tcp" => 5683,
        "coaps" or "coaps+tcp" => 5684,
        "coap+ws" => 80,
        "coaps+ws" => 443,
        _ => null,
    };

    /// <summary>
    /// Replaces Uri-Host, Uri-Port, Uri-Path and Uri-Query with the parts of <paramref name="uri"/>
    /// (RFC 7252 section 6.4): Uri-Host only when the host is a name rather than an IP literal,
    /// Uri-Port only when the port differs from the scheme's default, one Uri-Path per
    /// percent-decoded segment and one Uri-Query per percent-decoded '&amp;'-separated argument.
    /// </summary>
    /// <param name="uri">An absolute CoAP URI without a fragment.</param>
    /// <exception cref="ArgumentNullException"><paramref name="uri"/> is null.</exception>
    /// <exception cref="ArgumentException">
    /// The URI is relative, has a fragment or an empty host, contains '\', or its scheme is not a CoAP scheme; or its
    /// host, a path segment or a query argument decodes to more than the 255 bytes its option holds (RFC 7252 section 5.10.1).
    /// </exception>
    public void SetUri(Uri uri)
    {
        // Parsed before any option changes, so that a rejected URI leaves the message as it was.
        ReplaceUriOptions(ParseUri(uri));
    }

    /// <summary>Replaces Uri-Host, Uri-Port, Uri-Path and Uri-Query with <paramref name="entries"/>; other options stay.</summary>
    internal void ReplaceUriOptions(ReadOnlySpan<CoapOptionEntry> entries)
    {
        CoapOptionCollection options = Options;
        options.RemoveAll(CoapOptionNumber.UriHost);
        options.RemoveAll(CoapOptionNumber.UriPort);
        options.RemoveAll(CoapOptionNumber.UriPath);
        options.RemoveAll(CoapOptionNumber.UriQuery);
        foreach (CoapOptionEntry entry in entries)
        {
            options.Add(entry);
        }
    }

    /// <summary>The Uri-Host, Uri-Port, Uri-Path and Uri-Query options of <paramref name="uri"/>, in option-number order (see <see cref="SetUri"/>).</summary>
    /// <param name="uri">The URI.</param>
    /// <param name="defaultPortOf">The default port of a scheme a registered transport speaks (see <see cref="CoapUriParser.Parse"/>); null for the CoAP schemes alone.</param>
    private static CoapOptionEntry[] ParseUri(Uri uri, Func<string, int?>? defaultPortOf = null)
    {
        ArgumentNullException.ThrowIfNull(uri);
        if (!uri.IsAbsoluteUri)
        {
            throw new ArgumentException($"'{uri}' is not an absolute URI (RFC 7252 section 6.4 step 1).", nameof(uri));
        }

        if (defaultPortOf is null)
        {
            _ = GetDefaultPort(uri.Scheme.ToLowerInvariant());
        }

        if (uri.Fragment.Length > 0)
        {
            throw new ArgumentException($"'{uri}' has a fragment; a CoAP URI must not (RFC 7252 section 6.4 step 4).", nameof(uri));
        }

        // RFC 3986 allows no '\' anywhere, but System.Uri silently reads one in the path as '/', which would split a segment.
        if (uri.OriginalString.Contains('\\', StringComparison.Ordinal))
        {
            throw new ArgumentException($"'{uri.OriginalString}' is not a URI: RFC 3986 does not allow '\\' (RFC 7252 section 6.4 step 1).", nameof(uri));
        }

        // An empty reg-name would become a Uri-Host of length 0, which is outside the option's bounds (RFC 7252 section 5.10.1).
        if (uri.Host.Length == 0)
        {
            throw new ArgumentException($"'{uri}' has no host.", nameof(uri));
        }

        // The one parser (RFC 7252 section 6.4), given the text System.Uri has checked and escaped, without the user
        // information, which a CoAP URI does not have (section 6.1) and SetUri has always ignored.
        string text = uri.GetComponents(UriComponents.SchemeAndServer | UriComponents.PathAndQuery, UriFormat.UriEscaped);
        return CoapUriParser.Parse(text, validated: true, defaultPortOf).Entries;
    }

    /// <summary>
    /// Composes the request URI from the options (RFC 7252 section 6.5). Uri-Host and Uri-Port, when
    /// absent, come from the destination the request was sent to.
    /// </summary>
    /// <param name="scheme">The URI scheme; "coap" by default.</param>
    /// <param name="destinationHost">The host (name or IP address) the request was sent to, used when there is no Uri-Host.</param>
    /// <param name="destinationPort">The port the request was sent to, used when there is no Uri-Port; the scheme's default when null.</param>
    /// <returns>The absolute URI.</returns>
    /// <exception cref="ArgumentException">The scheme is not a CoAP scheme, or neither Uri-Host nor <paramref name="destinationHost"/> gives a host.</exception>
    public Uri GetUri(string scheme = "coap", string? destinationHost = null, int? destinationPort = null)
    {
        ArgumentNullException.ThrowIfNull(scheme);
        int defaultPort = GetDefaultPort(scheme);
        string? host = UriHost ?? destinationHost;
        if (string.IsNullOrEmpty(host))
        {
            throw new ArgumentException("The message has no Uri-Host option, so the destination host must be given.", nameof(destinationHost));
        }

        StringBuilder builder = new();
        builder.Append(scheme).Append("://");
        if (IPAddress.TryParse(host, out IPAddress? address) && address.AddressFamily == System.Net.Sockets.AddressFamily.InterNetworkV6)
        {
            builder.Append('[').Append(address.ToString()).Append(']');
        }
        else
        {
            AppendEscaped(builder, Encoding.UTF8.GetBytes(host), CoapUriParser.AllowedInHost);
        }

        int port = UriPort ?? destinationPort ?? defaultPort;
        if (port != defaultPort)
        {
            builder.Append(':').Append(port.ToString(CultureInfo.InvariantCulture));
        }

        // Steps 6 to 8 escape the option values byte by byte, so a value that is not valid UTF-8 still round-trips.
        // The options are read where they are (a parsed message's wire bytes, or the collection): a parsed message
        // has no collection until something asks for one, and composes the same URI as a built one.
        bool anySegment = false;
        foreach (CoapOptionEntry option in ReadOptions())
        {
            if (option.Number == CoapOptionNumber.UriPath)
            {
                builder.Append('/');
                AppendEscaped(builder, option.Value.Span, CoapUriParser.AllowedInSegment);
                anySegment = true;
            }
        }

        if (!anySegment)
        {
            builder.Append('/');
        }

        char separator = '?';
        foreach (CoapOptionEntry option in ReadOptions())
        {
            if (option.Number == CoapOptionNumber.UriQuery)
            {
                builder.Append(separator);
                AppendEscaped(builder, option.Value.Span, CoapUriParser.AllowedInQueryArgument);
                separator = '&';
            }
        }

        return new Uri(builder.ToString(), UriKind.Absolute);
    }

    // Every non-ASCII character becomes the percent-encoding of its UTF-8 bytes, as do the disallowed ASCII ones.
    private static void AppendEscaped(StringBuilder builder, ReadOnlySpan<byte> value, Func<char, bool> allowed)
    {
        foreach (byte b in value)
        {
            if (b < 0x80 && allowed((char)b))
            {
                builder.Append((char)b);
            }
            else
            {
                builder.Append('%').Append(b.ToString("X2", CultureInfo.InvariantCulture));
            }
        }
    }
}
