using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace CoapNet.Messages;

/// <summary>
/// The one URI parser and percent-decoder of the library (RFC 7252 section 6.4): <see cref="CoapRequestBuilder"/>
/// and <see cref="CoapMessage.SetUri(Uri)"/> both split a URI into Uri-Host, Uri-Port, Uri-Path and Uri-Query
/// here. It reads the text in place, without <see cref="Uri"/>, and writes the options into one array.
/// </summary>
internal static class CoapUriParser
{
    // RFC 7252 section 5.10: Uri-Host holds 1-255 bytes, each Uri-Path and Uri-Query 0-255.
    private const int MaxOptionLength = 255;

    /// <summary>A URI split into its destination and its options.</summary>
    /// <param name="Scheme">The scheme in lower case.</param>
    /// <param name="Host">The IP address without brackets, or the host name as Uri-Host carries it.</param>
    /// <param name="Port">The URI's port, or the scheme's default.</param>
    /// <param name="Entries">Uri-Host, Uri-Port, Uri-Path and Uri-Query, in option-number order.</param>
    /// <param name="PathStart">The index of the first Uri-Path in <paramref name="Entries"/> (or where it would be).</param>
    /// <param name="PathCount">The number of Uri-Path entries.</param>
    internal readonly record struct Parsed(string Scheme, string Host, int Port, CoapOptionEntry[] Entries, int PathStart, int PathCount);

    /// <summary>Splits an absolute CoAP URI into request options (RFC 7252 section 6.4).</summary>
    /// <param name="uri">The URI text.</param>
    /// <param name="validated">
    /// True when the text comes from a <see cref="Uri"/>, which has already checked and escaped its characters
    /// (it leaves '[' and ']' unescaped in a path); false to reject every character RFC 3986 does not allow.
    /// </param>
    /// <param name="defaultPortOf">
    /// The default port of a scheme (a transport registered for it, <see cref="Transports.CoapTransportRegistry"/>), or null
    /// when it has none; null for the CoAP schemes' own (<see cref="CoapMessage.GetDefaultPort(string)"/>).
    /// </param>
    /// <returns>The destination and the options.</returns>
    /// <exception cref="ArgumentException">The text is not a CoAP URI; the message names the problem and where it is.</exception>
    internal static Parsed Parse(string uri, bool validated, Func<string, int?>? defaultPortOf = null)
    {
        int schemeEnd = uri.IndexOf(':', StringComparison.Ordinal);
        if (schemeEnd <= 0 || !IsScheme(uri.AsSpan(0, schemeEnd)))
        {
            throw Invalid(uri, "is not an absolute URI: it does not start with a scheme such as \"coap:\" (RFC 7252 section 6.4 step 1)");
        }

        string scheme = uri[..schemeEnd].ToLowerInvariant();
        int defaultPort;
        if (defaultPortOf is not null)
        {
            // A scheme with no default port (one only a transport of the application's knows) needs the port written out.
            defaultPort = defaultPortOf(scheme) ?? -1;
        }
        else
        {
            try
            {
                defaultPort = CoapMessage.GetDefaultPort(scheme);
            }
            catch (ArgumentException exception)
            {
                throw new ArgumentException($"'{uri}' has the scheme '{scheme}', which is not coap, coaps, coap+tcp, coaps+tcp, coap+ws or coaps+ws (RFC 7252 section 6.4 step 3).", nameof(uri), exception);
            }
        }

        int fragment = uri.IndexOf('#', StringComparison.Ordinal);
        if (fragment >= 0)
        {
            throw Invalid(uri, $"has a fragment at index {fragment}; a CoAP request URI must not (RFC 7252 section 6.4 step 4)");
        }

        if (!uri.AsSpan(schemeEnd + 1).StartsWith("//", StringComparison.Ordinal))
        {
            throw Invalid(uri, "has no authority: a CoAP URI is scheme://host[:port][/path][?query] (RFC 7252 section 6.1)");
        }

        int authorityStart = schemeEnd + 3;
        int authorityEnd = uri.AsSpan(authorityStart).IndexOfAny('/', '?');
        authorityEnd = authorityEnd < 0 ? uri.Length : authorityStart + authorityEnd;
        ParseAuthority(uri, authorityStart, authorityEnd, defaultPort, validated, out string host, out byte[]? uriHost, out int port);

        int queryStart = uri.IndexOf('?', authorityEnd);
        int pathEnd = queryStart < 0 ? uri.Length : queryStart;

        // One array, sized for every '/'-started segment and every '&'-separated argument; trimmed only when
        // dot segments or a lone "/" left slots unused.
        int slots = (uriHost is null ? 0 : 1) + (port != defaultPort ? 1 : 0)
            + uri.AsSpan(authorityEnd, pathEnd - authorityEnd).Count('/')
            + CountQuery(uri, queryStart);
        CoapOptionEntry[] entries = new CoapOptionEntry[slots];
        int n = 0;
        if (uriHost is not null)
        {
            entries[n++] = new CoapOptionEntry(CoapOptionNumber.UriHost, uriHost);
        }

        if (port != defaultPort)
        {
            entries[n++] = new CoapOptionEntry(CoapOptionNumber.UriPort, UIntCodec.Encode((uint)port));
        }

        int pathStart = n;
        n = AddPath(uri, authorityEnd, pathEnd, validated, entries, n);
        int pathCount = n - pathStart;
        n = AddQuery(uri, queryStart, validated ? null : AllowedInQueryArgument, nameof(uri), entries, n);
        return new Parsed(scheme, host, port, n == entries.Length ? entries : entries[..n], pathStart, pathCount);
    }

    /// <summary>
    /// Adds one Uri-Query per '&amp;'-separated argument of the query that starts at <paramref name="queryStart"/>
    /// (its '?'; -1 for none) to <paramref name="entries"/> from index <paramref name="n"/> (RFC 7252 section 6.4
    /// step 9); "?" alone carries none.
    /// </summary>
    /// <returns>The index after the last argument added.</returns>
    internal static int AddQuery(string text, int queryStart, Func<char, bool>? allowed, string parameterName, CoapOptionEntry[] entries, int n)
    {
        if (queryStart < 0 || queryStart == text.Length - 1)
        {
            return n;
        }

        for (int position = queryStart + 1; ;)
        {
            int next = text.IndexOf('&', position);
            int end = next < 0 ? text.Length : next;
            entries[n++] = new CoapOptionEntry(CoapOptionNumber.UriQuery, Decode(text, position, end, allowed, "query argument", parameterName));
            if (next < 0)
            {
                return n;
            }

            position = next + 1;
        }
    }

    /// <summary>The number of Uri-Query options the query starting at <paramref name="queryStart"/> gives (see <see cref="AddQuery"/>).</summary>
    internal static int CountQuery(string text, int queryStart)
        => queryStart < 0 || queryStart == text.Length - 1 ? 0 : text.AsSpan(queryStart).Count('&') + 1;

    /// <summary>
    /// Percent-decodes text[start..end] to the bytes it encodes (RFC 7252 section 6.4 steps 5, 8 and 9), even when
    /// they are not valid UTF-8, taking non-ASCII characters as their UTF-8 bytes (an IRI, RFC 3987 section 3.1) and
    /// rejecting an ASCII character the component cannot hold unless <paramref name="allowed"/> is null.
    /// </summary>
    /// <param name="text">The whole text, named in an error message.</param>
    /// <param name="start">Where the component starts.</param>
    /// <param name="end">Where it ends (exclusive).</param>
    /// <param name="allowed">The ASCII characters the component may hold unencoded; null for any (already validated).</param>
    /// <param name="component">"host", "path segment" or "query argument", for the error message and the length bound.</param>
    /// <param name="parameterName">The parameter an <see cref="ArgumentException"/> names.</param>
    /// <returns>The decoded bytes.</returns>
    internal static byte[] Decode(string text, int start, int end, Func<char, bool>? allowed, string component, string parameterName)
    {
        ReadOnlySpan<char> part = text.AsSpan(start, end - start);
        byte[] bytes = new byte[Encoding.UTF8.GetByteCount(part)];
        int length = 0;
        for (int i = 0; i < part.Length; i++)
        {
            char c = part[i];
            if (c == '%')
            {
                if (i + 2 >= part.Length || !char.IsAsciiHexDigit(part[i + 1]) || !char.IsAsciiHexDigit(part[i + 2]))
                {
                    throw new ArgumentException($"'{text}' has a malformed percent-encoding at index {start + i}: '%' must be followed by two hexadecimal digits (RFC 3986 section 2.1).", parameterName);
                }

                bytes[length++] = (byte)((HexValue(part[i + 1]) << 4) | HexValue(part[i + 2]));
                i += 2;
            }
            else if (c < 0x80)
            {
                if (allowed is not null && !allowed(c))
                {
                    throw new ArgumentException($"'{text}' has '{(char.IsControl(c) ? $"U+{(int)c:X4}" : c.ToString())}' at index {start + i}, which a URI {component} cannot hold unencoded (RFC 3986 section 3).", parameterName);
                }

                bytes[length++] = (byte)c;
            }
            else
            {
                // An IRI character (RFC 3987 section 3.1): its UTF-8 bytes, as if percent-encoded.
                int count = char.IsHighSurrogate(c) && i + 1 < part.Length ? 2 : 1;
                length += Encoding.UTF8.GetBytes(part.Slice(i, count), bytes.AsSpan(length));
                i += count - 1;
            }
        }

        if (length > MaxOptionLength && component != "host")
        {
            string option = component == "query argument" ? "Uri-Query" : "Uri-Path";
            throw new ArgumentException($"'{text}' has a {component} of {length} bytes at index {start}; {option} holds at most {MaxOptionLength} (RFC 7252 section 5.10.1).", parameterName);
        }

        return length == bytes.Length ? bytes : bytes[..length];
    }

    // RFC 3986: unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~"; sub-delims = "!" / "$" / "&" / "'" / "(" / ")" / "*" / "+" / "," / ";" / "=".
    internal static bool IsUnreservedOrSubDelim(char c)
        => char.IsAsciiLetterOrDigit(c) || c is '-' or '.' or '_' or '~' or '!' or '$' or '&' or '\'' or '(' or ')' or '*' or '+' or ',' or ';' or '=';

    internal static bool AllowedInHost(char c) => IsUnreservedOrSubDelim(c);

    // segment = *pchar, pchar = unreserved / pct-encoded / sub-delims / ":" / "@".
    internal static bool AllowedInSegment(char c) => IsUnreservedOrSubDelim(c) || c is ':' or '@';

    // query = *( pchar / "/" / "?" ), but '&' separates arguments (RFC 7252 section 6.5 step 8), so it is escaped inside one.
    internal static bool AllowedInQueryArgument(char c) => c != '&' && (AllowedInSegment(c) || c is '/' or '?');

    // RFC 3986 section 3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
    private static bool IsScheme(ReadOnlySpan<char> scheme)
    {
        if (!char.IsAsciiLetter(scheme[0]))
        {
            return false;
        }

        foreach (char c in scheme)
        {
            if (!char.IsAsciiLetterOrDigit(c) && c is not ('+' or '-' or '.'))
            {
                return false;
            }
        }

        return true;
    }

    // RFC 7252 section 6.1: authority = host [ ":" port ], with no user information.
    private static void ParseAuthority(string uri, int start, int end, int defaultPort, bool validated, out string host, out byte[]? uriHost, out int port)
    {
        ReadOnlySpan<char> authority = uri.AsSpan(start, end - start);
        int at = authority.IndexOf('@');
        if (at >= 0)
        {
            throw Invalid(uri, $"has user information before '@' at index {start + at}; a CoAP URI has none (RFC 7252 section 6.1)");
        }

        int hostEnd;
        if (!authority.IsEmpty && authority[0] == '[')
        {
            // RFC 3986 section 3.2.2: IP-literal = "[" IPv6address "]"; it names the destination, so no Uri-Host (step 5).
            int close = authority.IndexOf(']');
            if (close < 0)
            {
                throw Invalid(uri, $"opens an IP literal with '[' at index {start} but does not close it");
            }

            string literal = authority[1..close].ToString();
            if (!IPAddress.TryParse(literal, out IPAddress? address) || address.AddressFamily != AddressFamily.InterNetworkV6)
            {
                throw Invalid(uri, $"has '[{literal}]', which is not an IPv6 address");
            }

            host = literal;
            uriHost = null;
            hostEnd = close + 1;
            if (hostEnd < authority.Length && authority[hostEnd] != ':')
            {
                throw Invalid(uri, $"has '{authority[hostEnd].ToString()}' after the IP literal at index {start + hostEnd}; only ':' and a port may follow");
            }
        }
        else
        {
            hostEnd = authority.IndexOf(':');
            hostEnd = hostEnd < 0 ? authority.Length : hostEnd;
            ReadOnlySpan<char> name = authority[..hostEnd];
            if (name.IsEmpty)
            {
                throw Invalid(uri, "has no host");
            }

            if (IsIPv4(name))
            {
                host = name.ToString();
                uriHost = null;
            }
            else
            {
                // Step 5: the host in ASCII lower case, with percent-encodings converted to the characters they encode.
                byte[] decoded = Decode(uri, start, start + hostEnd, validated ? null : AllowedInHost, "host", nameof(uri));
                if (decoded.Length > MaxOptionLength)
                {
                    throw Invalid(uri, $"has a host of {decoded.Length} bytes; Uri-Host holds at most {MaxOptionLength} (RFC 7252 section 5.10.1)");
                }

                host = ToAsciiHost(uri, decoded);
                uriHost = Encoding.UTF8.GetBytes(host);
            }
        }

        port = defaultPort;
        if (hostEnd < authority.Length)
        {
            // RFC 3986 section 3.2.3: port = *DIGIT; an empty port means the scheme's default.
            ReadOnlySpan<char> digits = authority[(hostEnd + 1)..];
            if (!digits.IsEmpty)
            {
                if (digits.ContainsAnyExceptInRange('0', '9') || !int.TryParse(digits, NumberStyles.None, CultureInfo.InvariantCulture, out port) || port > ushort.MaxValue)
                {
                    throw Invalid(uri, $"has the port '{digits}', which is not a number from 0 to 65535");
                }
            }
        }

        if (port < 0)
        {
            throw Invalid(uri, "has no port, and its scheme has no default port to stand for it");
        }
    }

    // An IRI host may hold non-ASCII letters: Uri-Host carries its IDNA form, as System.Uri's IdnHost does.
    private static string ToAsciiHost(string uri, byte[] decoded)
    {
        string text = Encoding.UTF8.GetString(decoded);
        if (Ascii.IsValid(decoded))
        {
            return text.ToLowerInvariant();
        }

        try
        {
            return new IdnMapping().GetAscii(text).ToLowerInvariant();
        }
        catch (ArgumentException exception)
        {
            throw new ArgumentException($"'{uri}' has the host '{text}', which is not a valid internationalized domain name: {exception.Message}", nameof(uri), exception);
        }
    }

    // RFC 3986 section 3.2.2: IPv4address = dec-octet "." dec-octet "." dec-octet "." dec-octet, and nothing looser.
    private static bool IsIPv4(ReadOnlySpan<char> name)
    {
        Span<Range> ranges = stackalloc Range[5];
        int octets = name.Split(ranges, '.');
        if (octets != 4)
        {
            return false;
        }

        foreach (Range range in ranges[..octets])
        {
            ReadOnlySpan<char> octet = name[range];
            if (octet.IsEmpty || octet.Length > 3 || octet.ContainsAnyExceptInRange('0', '9')
                || (octet.Length > 1 && octet[0] == '0') || int.Parse(octet, NumberStyles.None, CultureInfo.InvariantCulture) > 255)
            {
                return false;
            }
        }

        return true;
    }

    // Steps 2 and 8: one Uri-Path per segment after removing dot segments (RFC 3986 section 5.2.4); "" and "/" give none.
    private static int AddPath(string uri, int start, int end, bool validated, CoapOptionEntry[] entries, int n)
    {
        if (end - start <= 1)
        {
            return n;
        }

        int first = n;
        for (int position = start + 1; ;)
        {
            int next = uri.IndexOf('/', position, end - position);
            int segmentEnd = next < 0 ? end : next;
            bool last = next < 0;
            ReadOnlySpan<char> raw = uri.AsSpan(position, segmentEnd - position);
            if (raw is "." or "..")
            {
                if (raw is ".." && n > first)
                {
                    n--;
                }

                // "/a/." and "/a/b/.." both end in "/": the path keeps a trailing empty segment.
                if (last)
                {
                    entries[n++] = new CoapOptionEntry(CoapOptionNumber.UriPath, Array.Empty<byte>());
                }
            }
            else
            {
                entries[n++] = new CoapOptionEntry(CoapOptionNumber.UriPath, Decode(uri, position, segmentEnd, validated ? null : AllowedInSegment, "path segment", nameof(uri)));
            }

            if (last)
            {
                break;
            }

            position = next + 1;
        }

        // A path that resolves to "/" has no Uri-Path (step 8).
        return n - first == 1 && entries[first].Value.IsEmpty ? first : n;
    }

    private static int HexValue(char c) => c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;

    private static ArgumentException Invalid(string uri, string problem) => new($"'{uri}' {problem}.", nameof(uri));
}
