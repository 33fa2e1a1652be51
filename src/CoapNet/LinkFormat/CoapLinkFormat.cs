using System.Diagnostics.CodeAnalysis;
using System.Text;

namespace CoapNet.LinkFormat;

/// <summary>Reads and writes the CoRE Link Format (RFC 6690), the content of /.well-known/core.</summary>
public static class CoapLinkFormat
{
    /// <summary>Parses a link-format document.</summary>
    /// <param name="text">The document, such as <c>&lt;/a&gt;;rt="x",&lt;/b&gt;;ct=0</c>.</param>
    /// <returns>The links in document order.</returns>
    /// <exception cref="FormatException">The text is not valid link format; the message gives the position.</exception>
    public static IReadOnlyList<CoapLink> Parse(string text)
    {
        if (!TryParse(text, out IReadOnlyList<CoapLink>? links, out string? error))
        {
            throw new FormatException(error);
        }

        return links;
    }

    /// <summary>Parses a link-format document without throwing.</summary>
    /// <param name="text">The document.</param>
    /// <param name="links">The links, when valid.</param>
    /// <param name="error">What is wrong and where, when invalid.</param>
    /// <returns>True when the text is valid link format.</returns>
    public static bool TryParse(string text, [NotNullWhen(true)] out IReadOnlyList<CoapLink>? links, [NotNullWhen(false)] out string? error)
    {
        ArgumentNullException.ThrowIfNull(text);
        List<CoapLink> result = [];
        links = null;
        int i = SkipSpace(text, 0);
        while (i < text.Length)
        {
            // link-value = "<" URI-Reference ">" *( ";" link-param )
            if (text[i] != '<')
            {
                error = $"Expected '<' at position {i}.";
                return false;
            }

            int close = text.IndexOf('>', i + 1);
            if (close < 0)
            {
                error = $"The link target starting at position {i} has no closing '>'.";
                return false;
            }

            string target = text[(i + 1)..close];
            if (target.Length == 0)
            {
                error = $"Empty link target at position {i}.";
                return false;
            }

            List<KeyValuePair<string, string?>> attributes = [];
            i = SkipSpace(text, close + 1);
            while (i < text.Length && text[i] == ';')
            {
                i = SkipSpace(text, i + 1);
                int nameStart = i;
                while (i < text.Length && (char.IsAsciiLetterOrDigit(text[i]) || text[i] is '!' or '#' or '$' or '&' or '+' or '-' or '.' or '^' or '_' or '`' or '|' or '~' or '*'))
                {
                    i++;
                }

                if (i == nameStart)
                {
                    error = $"Expected an attribute name at position {i}.";
                    return false;
                }

                string name = text[nameStart..i];
                string? value = null;
                i = SkipSpace(text, i);
                if (i < text.Length && text[i] == '=')
                {
                    i = SkipSpace(text, i + 1);
                    if (!TryReadValue(text, ref i, out value, out error))
                    {
                        return false;
                    }
                }

                attributes.Add(new KeyValuePair<string, string?>(name, value));
                i = SkipSpace(text, i);
            }

            result.Add(new CoapLink(target, attributes));
            if (i < text.Length)
            {
                if (text[i] != ',')
                {
                    error = $"Expected ',' or ';' at position {i}.";
                    return false;
                }

                i = SkipSpace(text, i + 1);
                if (i == text.Length)
                {
                    error = "The document ends with ','.";
                    return false;
                }
            }
        }

        links = result;
        error = null;
        return true;
    }

    /// <summary>Writes links as one link-format document, separated by ','.</summary>
    /// <param name="links">The links.</param>
    /// <returns>The document.</returns>
    public static string Format(IEnumerable<CoapLink> links)
    {
        ArgumentNullException.ThrowIfNull(links);
        StringBuilder builder = new();
        foreach (CoapLink link in links)
        {
            if (builder.Length > 0)
            {
                builder.Append(',');
            }

            link.AppendTo(builder);
        }

        return builder.ToString();
    }

    private static bool TryReadValue(string text, ref int i, out string? value, [NotNullWhen(false)] out string? error)
    {
        if (i < text.Length && text[i] == '"')
        {
            // quoted-string with backslash escapes (RFC 2616 section 2.2, as RFC 6690 uses it).
            StringBuilder builder = new();
            for (i++; i < text.Length && text[i] != '"'; i++)
            {
                if (text[i] == '\\' && i + 1 < text.Length)
                {
                    i++;
                }

                builder.Append(text[i]);
            }

            if (i >= text.Length)
            {
                value = null;
                error = "A quoted attribute value has no closing quote.";
                return false;
            }

            i++;
            value = builder.ToString();
            error = null;
            return true;
        }

        int start = i;
        while (i < text.Length && text[i] is not (',' or ';' or ' ' or '\t' or '\r' or '\n' or '"'))
        {
            i++;
        }

        value = text[start..i];
        error = null;
        return true;
    }

    private static int SkipSpace(string text, int i)
    {
        while (i < text.Length && text[i] is ' ' or '\t' or '\r' or '\n')
        {
            i++;
        }

        return i;
    }
}
