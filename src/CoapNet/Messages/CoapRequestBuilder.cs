using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace CoapNet.Messages;

/// <summary>
/// A request target split into its Uri-Host, Uri-Port, Uri-Path and Uri-Query options once (RFC 7252
/// section 6.4), so that building each request to it parses nothing: <see cref="Build"/> copies the
/// ready option values into a new message. Parsing is done here, without <see cref="Uri"/>.
/// </summary>
/// <remarks>
/// <para>
/// Create one per resource (or per base URI, with <see cref="WithPath"/> for the resources below it) and
/// keep it: it is immutable and may be shared between threads. The messages it builds share its option
/// value bytes, which nothing can change through a <see cref="ReadOnlyMemory{T}"/>.
/// </para>
/// <para>
/// Uri-Host is included only when the host is a name rather than an IP literal (step 5), and Uri-Port only
/// when the port is not the scheme's default (steps 6 and 7), as <see cref="CoapMessage.SetUri(Uri)"/> does.
/// Dot segments are removed as in RFC 3986 section 5.2.4 (step 2); path segments and query arguments are
/// percent-decoded to the bytes they encode (steps 8 and 9).
/// </para>
/// </remarks>
public sealed class CoapRequestBuilder
{
    // RFC 7252 section 5.10: Uri-Host holds 1-255 bytes, each Uri-Path and Uri-Query 0-255.
    private const int MaxOptionLength = 255;

    // Sorted by option number (Uri-Host 3, Uri-Port 7, Uri-Path 11, Uri-Query 15), as a collection keeps them.
    private readonly CoapOptionEntry[] _entries;
    private readonly int _pathStart;
    private readonly int _pathCount;

    /// <summary>Splits an absolute CoAP URI into request options (RFC 7252 section 6.4).</summary>
    /// <param name="uri">
    /// An absolute coap, coaps, coap+tcp, coaps+tcp, coap+ws or coaps+ws URI with a host and without a
    /// fragment or user information, such as "coap://sensor.local/temperature?unit=C". Non-ASCII characters
    /// (an IRI) are taken as their UTF-8 bytes; a non-ASCII host name becomes its IDNA (punycode) form.
    /// </param>
    /// <exception cref="ArgumentNullException"><paramref name="uri"/> is null.</exception>
    /// <exception cref="ArgumentException">The text is not such a URI; the message names the problem and where it is.</exception>
    public CoapRequestBuilder(string uri)
    {
        ArgumentNullException.ThrowIfNull(uri);
        int schemeEnd = uri.IndexOf(':', StringComparison.Ordinal);
        if (schemeEnd <= 0 || !IsScheme(uri.AsSpan(0, schemeEnd)))
        {
            throw Invalid(uri, "is not an absolute URI: it does not start with a scheme such as \"coap:\" (RFC 7252 section 6.4 step 1)");
        }

        Scheme = uri[..schemeEnd].ToLowerInvariant();
        int defaultPort;
        try
        {
            defaultPort = CoapMessage.GetDefaultPort(Scheme);
        }
        catch (ArgumentException exception)
        {
            throw new ArgumentException($"'{uri}' has the scheme '{Scheme}', which is not coap, coaps, coap+tcp, coaps+tcp, coap+ws or coaps+ws (RFC 7252 section 6.4 step 3).", nameof(uri), exception);
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
        ParseAuthority(uri, authorityStart, authorityEnd, defaultPort, out string host, out byte[]? uriHost, out int port);
        Host = host;
        Port = port;

        int queryStart = uri.IndexOf('?', authorityEnd);
        int pathEnd = queryStart < 0 ? uri.Length : queryStart;
        List<byte[]> segments = SplitPath(uri, authorityEnd, pathEnd);
        List<byte[]> arguments = SplitQuery(uri, queryStart);

        List<CoapOptionEntry> entries = new(2 + segments.Count + arguments.Count);
        if (uriHost is not null)
        {
            entries.Add(new CoapOptionEntry(CoapOptionNumber.UriHost, uriHost));
        }

        if (port != defaultPort)
        {
            entries.Add(new CoapOptionEntry(CoapOptionNumber.UriPort, UIntCodec.Encode((uint)port)));
        }

        _pathStart = entries.Count;
        _pathCount = segments.Count;
        foreach (byte[] segment in segments)
        {
            entries.Add(new CoapOptionEntry(CoapOptionNumber.UriPath, segment));
        }

        foreach (byte[] argument in arguments)
        {
            entries.Add(new CoapOptionEntry(CoapOptionNumber.UriQuery, argument));
        }

        _entries = [.. entries];
    }

    private CoapRequestBuilder(CoapRequestBuilder parent, CoapOptionEntry[] entries, int pathCount)
    {
        Scheme = parent.Scheme;
        Host = parent.Host;
        Port = parent.Port;
        _entries = entries;
        _pathStart = parent._pathStart;
        _pathCount = pathCount;
    }

    /// <summary>The scheme in lower case, such as "coap" or "coaps+tcp".</summary>
    public string Scheme { get; }

    /// <summary>
    /// The host to send to: an IP address without brackets ("192.0.2.1", "2001:db8::1"), or the host name in
    /// lower case and percent-decoded, as Uri-Host carries it ("sensor.local").
    /// </summary>
    public string Host { get; }

    /// <summary>The port to send to: the URI's port, or the scheme's default (5683 for coap, 5684 for coaps).</summary>
    public int Port { get; }

    /// <summary>
    /// Returns a builder for a resource below this one: the segments of <paramref name="relativePath"/> follow
    /// this builder's path (after dropping one trailing empty segment, as "coap://h/a/" plus "b" is "/a/b"), and
    /// its query arguments follow this builder's. The text is split and percent-decoded here, once.
    /// </summary>
    /// <param name="relativePath">Segments separated by '/', optionally followed by '?' and '&amp;'-separated arguments: "sensors/t1?unit=C".</param>
    /// <returns>A new builder; this one is unchanged.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="relativePath"/> is null.</exception>
    /// <exception cref="ArgumentException">
    /// The text starts with '/', contains a "." or ".." segment, a fragment, a character a URI path or query
    /// cannot hold, a malformed percent-encoding, or a segment or argument longer than 255 bytes.
    /// </exception>
    public CoapRequestBuilder WithPath(string relativePath)
    {
        ArgumentNullException.ThrowIfNull(relativePath);
        if (relativePath.StartsWith('/'))
        {
            throw new ArgumentException($"'{relativePath}' starts with '/'; give the path relative to this builder's, or create a new builder for an absolute URI.", nameof(relativePath));
        }

        int fragment = relativePath.IndexOf('#', StringComparison.Ordinal);
        if (fragment >= 0)
        {
            throw new ArgumentException($"'{relativePath}' has a fragment at index {fragment}; a CoAP request URI must not (RFC 7252 section 6.4 step 4).", nameof(relativePath));
        }

        int queryStart = relativePath.IndexOf('?', StringComparison.Ordinal);
        int pathEnd = queryStart < 0 ? relativePath.Length : queryStart;
        List<byte[]> added = [];
        if (pathEnd > 0)
        {
            int start = 0;
            while (true)
            {
                int end = relativePath.IndexOf('/', start, pathEnd - start);
                end = end < 0 ? pathEnd : end;
                ReadOnlySpan<char> segment = relativePath.AsSpan(start, end - start);
                if (segment is "." or "..")
                {
                    throw new ArgumentException($"'{relativePath}' has a dot segment at index {start}; a relative path here only appends segments.", nameof(relativePath));
                }

                added.Add(Decode(relativePath, start, end, CoapMessage.AllowedInSegment, "path segment", nameof(relativePath)));
                if (end == pathEnd)
                {
                    break;
                }

                start = end + 1;
            }
        }

        List<byte[]> arguments = SplitQuery(relativePath, queryStart, nameof(relativePath));

        // RFC 3986 section 5.2.3: merging with a base path that ends in '/' replaces its empty last segment.
        int kept = _pathCount > 0 && added.Count > 0 && _entries[_pathStart + _pathCount - 1].Value.IsEmpty ? _pathCount - 1 : _pathCount;
        int baseQueryStart = _pathStart + _pathCount;
        CoapOptionEntry[] entries = new CoapOptionEntry[_pathStart + kept + added.Count + (_entries.Length - baseQueryStart) + arguments.Count];
        int n = 0;
        for (int i = 0; i < _pathStart + kept; i++)
        {
            entries[n++] = _entries[i];
        }

        foreach (byte[] segment in added)
        {
            entries[n++] = new CoapOptionEntry(CoapOptionNumber.UriPath, segment);
        }

        for (int i = baseQueryStart; i < _entries.Length; i++)
        {
            entries[n++] = _entries[i];
        }

        foreach (byte[] argument in arguments)
        {
            entries[n++] = new CoapOptionEntry(CoapOptionNumber.UriQuery, argument);
        }

        return new CoapRequestBuilder(this, entries, kept + added.Count);
    }

    /// <summary>Builds a request to this target: the method, the type, and the target's Uri-Host, Uri-Port, Uri-Path and Uri-Query options.</summary>
    /// <param name="method">The request method, such as <see cref="CoapCode.Get"/>.</param>
    /// <param name="type">Confirmable (the default) or non-confirmable.</param>
    /// <returns>A new message with Message ID 0 and no token, for the caller (or its endpoint) to assign.</returns>
    /// <exception cref="ArgumentException"><paramref name="method"/> is not a request method, or <paramref name="type"/> is not CON or NON.</exception>
    public CoapMessage Build(CoapCode method, CoapMessageType type = CoapMessageType.Confirmable)
    {
        if (!method.IsRequest)
        {
            throw new ArgumentException($"{method} is not a request method.", nameof(method));
        }

        if (type is not (CoapMessageType.Confirmable or CoapMessageType.NonConfirmable))
        {
            throw new ArgumentException($"A request is confirmable or non-confirmable (RFC 7252 section 4), not {type}.", nameof(type));
        }

        // One copy of the ready entries: the message may change its options without touching the builder's.
        CoapOptionCollection? options = _entries.Length == 0 ? null : new CoapOptionCollection((CoapOptionEntry[])_entries.Clone());
        return new CoapMessage(type, method, 0, default, 0, options, default);
    }

    /// <summary>Replaces the Uri-Host, Uri-Port, Uri-Path and Uri-Query options of <paramref name="message"/> with this target's; other options stay.</summary>
    /// <param name="message">The request to address.</param>
    /// <exception cref="ArgumentNullException"><paramref name="message"/> is null.</exception>
    public void ApplyTo(CoapMessage message)
    {
        ArgumentNullException.ThrowIfNull(message);
        CoapOptionCollection options = message.Options;
        options.RemoveAll(CoapOptionNumber.UriHost);
        options.RemoveAll(CoapOptionNumber.UriPort);
        options.RemoveAll(CoapOptionNumber.UriPath);
        options.RemoveAll(CoapOptionNumber.UriQuery);
        foreach (CoapOptionEntry entry in _entries)
        {
            options.Add(entry);
        }
    }

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
    private static void ParseAuthority(string uri, int start, int end, int defaultPort, out string host, out byte[]? uriHost, out int port)
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
                byte[] decoded = Decode(uri, start, start + hostEnd, CoapMessage.AllowedInHost, "host", nameof(uri));
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

    // Steps 2 and 8: the path's segments after removing dot segments (RFC 3986 section 5.2.4); "" and "/" have none.
    private static List<byte[]> SplitPath(string uri, int start, int end)
    {
        List<byte[]> segments = [];
        if (end - start <= 1)
        {
            return segments;
        }

        for (int position = start + 1; ;)
        {
            int next = uri.IndexOf('/', position, end - position);
            int segmentEnd = next < 0 ? end : next;
            bool last = next < 0;
            ReadOnlySpan<char> raw = uri.AsSpan(position, segmentEnd - position);
            if (raw is "." or "..")
            {
                if (raw is ".." && segments.Count > 0)
                {
                    segments.RemoveAt(segments.Count - 1);
                }

                // "/a/." and "/a/b/.." both end in "/": the path keeps a trailing empty segment.
                if (last)
                {
                    segments.Add([]);
                }
            }
            else
            {
                segments.Add(Decode(uri, position, segmentEnd, CoapMessage.AllowedInSegment, "path segment", nameof(uri)));
            }

            if (last)
            {
                break;
            }

            position = next + 1;
        }

        // A path that resolves to "/" has no Uri-Path (step 8).
        if (segments.Count == 1 && segments[0].Length == 0)
        {
            segments.Clear();
        }

        return segments;
    }

    // Step 9: one argument per '&'-separated part of the query; "?" alone carries none, as with SetUri.
    private static List<byte[]> SplitQuery(string text, int queryStart, string parameterName = "uri")
    {
        List<byte[]> arguments = [];
        if (queryStart < 0 || queryStart == text.Length - 1)
        {
            return arguments;
        }

        for (int position = queryStart + 1; ;)
        {
            int next = text.IndexOf('&', position);
            int end = next < 0 ? text.Length : next;
            arguments.Add(Decode(text, position, end, CoapMessage.AllowedInQueryArgument, "query argument", parameterName));
            if (next < 0)
            {
                return arguments;
            }

            position = next + 1;
        }
    }

    /// <summary>
    /// Percent-decodes text[start..end] to the bytes it encodes (RFC 7252 section 6.4 steps 5, 8 and 9), taking
    /// non-ASCII characters as their UTF-8 bytes and rejecting ASCII characters the component cannot hold.
    /// </summary>
    private static byte[] Decode(string text, int start, int end, Func<char, bool> allowed, string component, string parameterName)
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
                if (!allowed(c))
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

    private static int HexValue(char c) => c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;

    private static ArgumentException Invalid(string uri, string problem) => new($"'{uri}' {problem}.", nameof(uri));
}
