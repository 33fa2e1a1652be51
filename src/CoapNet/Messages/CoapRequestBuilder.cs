using System.Diagnostics;

namespace CoapNet.Messages;

/// <summary>
/// A request target split into its Uri-Host, Uri-Port, Uri-Path and Uri-Query options once (RFC 7252
/// section 6.4), so that building each request to it parses nothing: <see cref="Build"/> copies the
/// ready option values into a new message. The text is parsed without <see cref="Uri"/>, by the parser
/// <see cref="CoapMessage.SetUri(Uri)"/> uses too.
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
        CoapUriParser.Parsed parsed = CoapUriParser.Parse(uri, validated: false);
        Scheme = parsed.Scheme;
        Host = parsed.Host;
        Port = parsed.Port;
        _entries = parsed.Entries;
        _pathStart = parsed.PathStart;
        _pathCount = parsed.PathCount;
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

                added.Add(CoapUriParser.Decode(relativePath, start, end, CoapUriParser.AllowedInSegment, "path segment", nameof(relativePath)));
                if (end == pathEnd)
                {
                    break;
                }

                start = end + 1;
            }
        }

        int argumentCount = CoapUriParser.CountQuery(relativePath, queryStart);

        // RFC 3986 section 5.2.3: merging with a base path that ends in '/' replaces its empty last segment.
        int kept = _pathCount > 0 && added.Count > 0 && _entries[_pathStart + _pathCount - 1].Value.IsEmpty ? _pathCount - 1 : _pathCount;
        int baseQueryStart = _pathStart + _pathCount;
        CoapOptionEntry[] entries = new CoapOptionEntry[_pathStart + kept + added.Count + (_entries.Length - baseQueryStart) + argumentCount];
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

        n = CoapUriParser.AddQuery(relativePath, queryStart, CoapUriParser.AllowedInQueryArgument, nameof(relativePath), entries, n);
        Debug.Assert(n == entries.Length, "every slot is filled");
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
        return new CoapMessage(type, method, 0, default, 0, options, default, 0, 0);
    }

    /// <summary>Replaces the Uri-Host, Uri-Port, Uri-Path and Uri-Query options of <paramref name="message"/> with this target's; other options stay.</summary>
    /// <param name="message">The request to address.</param>
    /// <exception cref="ArgumentNullException"><paramref name="message"/> is null.</exception>
    public void ApplyTo(CoapMessage message)
    {
        ArgumentNullException.ThrowIfNull(message);
        message.ReplaceUriOptions(_entries);
    }
}
