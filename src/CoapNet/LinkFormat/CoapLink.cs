using System.Globalization;
using System.Text;

namespace CoapNet.LinkFormat;

/// <summary>One link of a CoRE Link Format document (RFC 6690): a target and its attributes.</summary>
public sealed class CoapLink
{
    private readonly KeyValuePair<string, string?>[] _attributes;

    /// <summary>Creates a link.</summary>
    /// <param name="target">The URI reference between '&lt;' and '&gt;', such as "/sensors/temp".</param>
    /// <param name="attributes">The attributes in order; a null value is an attribute without "=value" (such as obs).</param>
    /// <exception cref="ArgumentException">The target is empty or contains '&gt;', or an attribute name is empty.</exception>
    public CoapLink(string target, IEnumerable<KeyValuePair<string, string?>>? attributes = null)
    {
        ArgumentException.ThrowIfNullOrEmpty(target);
        if (target.Contains('>', StringComparison.Ordinal))
        {
            throw new ArgumentException("A link target cannot contain '>' (RFC 6690 section 2).", nameof(target));
        }

        Target = target;
        _attributes = attributes is null ? [] : [.. attributes];
        foreach (KeyValuePair<string, string?> attribute in _attributes)
        {
            if (string.IsNullOrEmpty(attribute.Key))
            {
                throw new ArgumentException("An attribute name cannot be empty.", nameof(attributes));
            }
        }
    }

    /// <summary>The link target, a URI reference (usually a path such as "/sensors/temp").</summary>
    public string Target { get; }

    /// <summary>The attributes in document order; the value is null for an attribute written without "=".</summary>
    public IReadOnlyList<KeyValuePair<string, string?>> Attributes => _attributes;

    /// <summary>The resource types: the space-separated values of every "rt" attribute (RFC 6690 section 3.1).</summary>
    public IReadOnlyList<string> ResourceTypes => GetSpaceSeparated("rt");

    /// <summary>The interface descriptions: the space-separated values of every "if" attribute (RFC 6690 section 3.2).</summary>
    public IReadOnlyList<string> InterfaceDescriptions => GetSpaceSeparated("if");

    /// <summary>The content formats of "ct" (RFC 7252 section 7.2.1), which may list several separated by spaces.</summary>
    public IReadOnlyList<ushort> ContentFormats
    {
        get
        {
            List<ushort> formats = [];
            foreach (string value in GetSpaceSeparated("ct"))
            {
                if (ushort.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out ushort format))
                {
                    formats.Add(format);
                }
            }

            return formats;
        }
    }

    /// <summary>The maximum size estimate "sz" in bytes (RFC 6690 section 3.3), or null.</summary>
    public uint? Size => uint.TryParse(GetAttribute("sz"), NumberStyles.None, CultureInfo.InvariantCulture, out uint size) ? size : null;

    /// <summary>True when the link carries "obs": the resource is observable (RFC 7641 section 6).</summary>
    public bool IsObservable => HasAttribute("obs");

    /// <summary>The human-readable "title", or null.</summary>
    public string? Title => GetAttribute("title");

    /// <summary>True when an attribute named <paramref name="name"/> is present.</summary>
    /// <param name="name">The attribute name (case-sensitive, as RFC 6690 compares names).</param>
    /// <returns>True when present.</returns>
    public bool HasAttribute(string name)
    {
        foreach (KeyValuePair<string, string?> attribute in _attributes)
        {
            if (attribute.Key == name)
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>The value of the first attribute named <paramref name="name"/>, or null.</summary>
    /// <param name="name">The attribute name.</param>
    /// <returns>The value; null when absent or written without a value.</returns>
    public string? GetAttribute(string name)
    {
        foreach (KeyValuePair<string, string?> attribute in _attributes)
        {
            if (attribute.Key == name)
            {
                return attribute.Value;
            }
        }

        return null;
    }

    /// <summary>The link in CoRE Link Format, as in <c>&lt;/sensors/temp&gt;;rt="temperature-c";if="sensor";ct=0;obs</c>.</summary>
    public override string ToString()
    {
        StringBuilder builder = new();
        AppendTo(builder);
        return builder.ToString();
    }

    internal void AppendTo(StringBuilder builder)
    {
        builder.Append('<').Append(Target).Append('>');
        foreach (KeyValuePair<string, string?> attribute in _attributes)
        {
            builder.Append(';').Append(attribute.Key);
            if (attribute.Value is null)
            {
                continue;
            }

            builder.Append('=');
            if (NeedsQuotes(attribute.Key, attribute.Value))
            {
                builder.Append('"');
                foreach (char c in attribute.Value)
                {
                    if (c is '"' or '\\')
                    {
                        builder.Append('\\');
                    }

                    builder.Append(c);
                }

                builder.Append('"');
            }
            else
            {
                builder.Append(attribute.Value);
            }
        }
    }

    // RFC 6690 section 2 writes rt, if, title and anchor as quoted strings; other values may be ptokens.
    private static bool NeedsQuotes(string name, string value)
    {
        if (name is "rt" or "if" or "title" or "anchor" || value.Length == 0)
        {
            return true;
        }

        foreach (char c in value)
        {
            if (!char.IsAsciiLetterOrDigit(c) && c is not ('.' or '-' or '_' or '/' or ':' or '!' or '#' or '$' or '%' or '&' or '\'' or '(' or ')' or '*' or '+' or '<' or '=' or '>' or '?' or '@' or '[' or ']' or '^' or '`' or '{' or '|' or '}' or '~'))
            {
                return true;
            }
        }

        return false;
    }

    private List<string> GetSpaceSeparated(string name)
    {
        List<string> values = [];
        foreach (KeyValuePair<string, string?> attribute in _attributes)
        {
            if (attribute.Key == name && attribute.Value is not null)
            {
                values.AddRange(attribute.Value.Split(' ', StringSplitOptions.RemoveEmptyEntries));
            }
        }

        return values;
    }
}
