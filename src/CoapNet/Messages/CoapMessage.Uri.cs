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
    public static int GetDefaultPort(string scheme) => scheme switch
    {
        "coap" or "coap+tcp" => 5683,
        "coaps" or "coaps+tcp" => 5684,
        "coap+ws" => 80,
        "coaps+ws" => 443,
        _ => throw new ArgumentException($"'{scheme}' is not a CoAP URI scheme (coap, coaps, coap+tcp, coaps+tcp, coap+ws, coaps+ws).", nameof(scheme)),
    };

    /// <summary>
    /// Replaces Uri-Host, Uri-Port, Uri-Path and Uri-Query with the parts of <paramref name="uri"/>
    /// (RFC 7252 section 6.4): Uri-Host only when the host is a name rather than an IP literal,
    /// Uri-Port only when the port differs from the scheme's default, one Uri-Path per
    /// percent-decoded segment and one Uri-Query per percent-decoded '&amp;'-separated argument.
    /// </summary>
    /// <param name="uri">An absolute CoAP URI without a fragment.</param>
    /// <exception cref="ArgumentNullException"><paramref name="uri"/> is null.</exception>
    /// <exception cref="ArgumentException">The URI is relative, has a fragment or an empty host, contains '\', or its scheme is not a CoAP scheme.</exception>
    public void SetUri(Uri uri)
    {
        ArgumentNullException.ThrowIfNull(uri);
        if (!uri.IsAbsoluteUri)
        {
            throw new ArgumentException($"'{uri}' is not an absolute URI (RFC 7252 section 6.4 step 1).", nameof(uri));
        }

        string scheme = uri.Scheme.ToLowerInvariant();
        int defaultPort = GetDefaultPort(scheme);
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

        CoapOptionCollection options = Options;
        options.RemoveAll(CoapOptionNumber.UriHost);
        options.RemoveAll(CoapOptionNumber.UriPort);
        options.RemoveAll(CoapOptionNumber.UriPath);
        options.RemoveAll(CoapOptionNumber.UriQuery);

        // Step 5: an IP literal names the destination itself and needs no Uri-Host.
        if (uri.HostNameType is not (UriHostNameType.IPv4 or UriHostNameType.IPv6))
        {
            options.Add(CoapOptionNumber.UriHost, uri.IdnHost.ToLowerInvariant());
        }

        // Steps 6 and 7: the destination port is the URI's port; Uri-Port says it only when it is not the default.
        if (!uri.IsDefaultPort && uri.Port >= 0 && uri.Port != defaultPort)
        {
            options.Add(CoapOptionNumber.UriPort, (uint)uri.Port);
        }

        // Step 8: "" and "/" mean no Uri-Path; otherwise every segment, empty ones included.
        string path = uri.AbsolutePath;
        if (path.Length > 1)
        {
            AddPercentDecoded(options, CoapOptionNumber.UriPath, path.AsSpan(1), '/');
        }

        // Step 9: each '&'-separated argument is one Uri-Query.
        string query = uri.Query;
        if (query.Length > 1)
        {
            AddPercentDecoded(options, CoapOptionNumber.UriQuery, query.AsSpan(1), '&');
        }
    }

    /// <summary>One option per <paramref name="separator"/>-separated piece of <paramref name="text"/>, empty pieces included, read in place.</summary>
    private static void AddPercentDecoded(CoapOptionCollection options, CoapOptionNumber number, ReadOnlySpan<char> text, char separator)
    {
        while (true)
        {
            int end = text.IndexOf(separator);
            options.Add(number, PercentDecode(end < 0 ? text : text[..end]));
            if (end < 0)
            {
                return;
            }

            text = text[(end + 1)..];
        }
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
            AppendEscaped(builder, Encoding.UTF8.GetBytes(host), AllowedInHost);
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
                AppendEscaped(builder, option.Value.Span, AllowedInSegment);
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
                AppendEscaped(builder, option.Value.Span, AllowedInQueryArgument);
                separator = '&';
            }
        }

        return new Uri(builder.ToString(), UriKind.Absolute);
    }

    // RFC 3986: unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~"; sub-delims = "!" / "$" / "&" / "'" / "(" / ")" / "*" / "+" / "," / ";" / "=".
    internal static bool IsUnreservedOrSubDelim(char c)
        => char.IsAsciiLetterOrDigit(c) || c is '-' or '.' or '_' or '~' or '!' or '$' or '&' or '\'' or '(' or ')' or '*' or '+' or ',' or ';' or '=';

    internal static bool AllowedInHost(char c) => IsUnreservedOrSubDelim(c);

    // segment = *pchar, pchar = unreserved / pct-encoded / sub-delims / ":" / "@".
    internal static bool AllowedInSegment(char c) => IsUnreservedOrSubDelim(c) || c is ':' or '@';

    // query = *( pchar / "/" / "?" ), but '&' separates arguments (RFC 7252 section 6.5 step 8), so it is escaped inside one.
    internal static bool AllowedInQueryArgument(char c) => c != '&' && (AllowedInSegment(c) || c is '/' or '?');

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

    // RFC 7252 section 6.4 steps 8 and 9: each percent-encoding becomes the byte it encodes, even when the bytes are not
    // valid UTF-8 (Uri.UnescapeDataString leaves such a sequence as text, so "%FF" would become the three bytes "%FF").
    private static byte[] PercentDecode(ReadOnlySpan<char> text)
    {
        byte[] bytes = new byte[Encoding.UTF8.GetByteCount(text)];
        Encoding.UTF8.GetBytes(text, bytes);
        int length = 0;
        for (int i = 0; i < bytes.Length; i++)
        {
            if (bytes[i] == '%' && i + 2 < bytes.Length && Uri.IsHexDigit((char)bytes[i + 1]) && Uri.IsHexDigit((char)bytes[i + 2]))
            {
                bytes[length++] = (byte)((Uri.FromHex((char)bytes[i + 1]) << 4) | Uri.FromHex((char)bytes[i + 2]));
                i += 2;
            }
            else
            {
                bytes[length++] = bytes[i];
            }
        }

        return length == bytes.Length ? bytes : bytes[..length];
    }
}
