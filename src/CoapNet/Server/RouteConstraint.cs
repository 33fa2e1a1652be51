using System.Globalization;

namespace CoapNet.Server;

/// <summary>
/// What a route parameter's value must be for the route to match ("{id:int}"): a request whose segment is not one
/// takes another route or gets 4.04 Not Found, as the resource it names does not exist (RFC 7252 section 5.9.2.5),
/// so a handler bound to an int never sees text. The names are ASP.NET Core's: int, long, bool, guid, double, alpha.
/// </summary>
internal sealed class RouteConstraint
{
    private readonly Kind _kind;

    private RouteConstraint(string name, Kind kind)
    {
        Name = name;
        _kind = kind;
    }

    private enum Kind
    {
        Int,
        Long,
        Bool,
        Guid,
        Double,
        Alpha,
    }

    /// <summary>The constraint as written in the template ("int").</summary>
    public string Name { get; }

    /// <summary>Parses a constraint name; an unknown one is refused with the template in the message.</summary>
    public static RouteConstraint Parse(string name, string template) => name switch
    {
        "int" => new(name, Kind.Int),
        "long" => new(name, Kind.Long),
        "bool" => new(name, Kind.Bool),
        "guid" => new(name, Kind.Guid),
        "double" => new(name, Kind.Double),
        "alpha" => new(name, Kind.Alpha),
        _ => throw new ArgumentException($"The route template '{template}' uses the unknown constraint '{name}' (known: int, long, bool, guid, double, alpha).", nameof(template)),
    };

    /// <summary>True when a segment's text meets the constraint; parsed as the binder parses it (invariant culture).</summary>
    public bool Accepts(ReadOnlySpan<char> value) => _kind switch
    {
        Kind.Int => int.TryParse(value, NumberStyles.Integer, CultureInfo.InvariantCulture, out _),
        Kind.Long => long.TryParse(value, NumberStyles.Integer, CultureInfo.InvariantCulture, out _),
        Kind.Bool => bool.TryParse(value, out _),
        Kind.Guid => System.Guid.TryParse(value, out _),
        Kind.Double => double.TryParse(value, NumberStyles.Float | NumberStyles.AllowThousands, CultureInfo.InvariantCulture, out _),
        _ => IsAlpha(value),
    };

    /// <summary>The same test on a segment's UTF-8 bytes (a Uri-Path option is at most 255 bytes, so it decodes on the stack).</summary>
    public bool Accepts(ReadOnlySpan<byte> utf8)
    {
        Span<char> chars = stackalloc char[256];
        int count = System.Text.Encoding.UTF8.GetChars(utf8[..Math.Min(utf8.Length, 255)], chars);
        return utf8.Length <= 255 && Accepts(chars[..count]);
    }

    private static bool IsAlpha(ReadOnlySpan<char> value)
    {
        foreach (char c in value)
        {
            if (!char.IsAsciiLetter(c))
            {
                return false;
            }
        }

        return true;
    }
}
