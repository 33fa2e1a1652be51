using System.Diagnostics.CodeAnalysis;

namespace CoapNet.Messages;

/// <summary>
/// What the registry says about one option number: its name, value format, length bounds and
/// whether it may repeat (RFC 7252 section 5.10 and the RFCs cited on <see cref="CoapOptionNumber"/>).
/// </summary>
public sealed class CoapOptionDefinition
{
    private static readonly CoapOptionDefinition[] Registered =
    [
        new(CoapOptionNumber.IfMatch, "If-Match", CoapOptionFormat.Opaque, 0, 8, true),
        new(CoapOptionNumber.UriHost, "Uri-Host", CoapOptionFormat.String, 1, 255, false),
        new(CoapOptionNumber.ETag, "ETag", CoapOptionFormat.Opaque, 1, 8, true),
        new(CoapOptionNumber.IfNoneMatch, "If-None-Match", CoapOptionFormat.Empty, 0, 0, false),
        new(CoapOptionNumber.Observe, "Observe", CoapOptionFormat.UInt, 0, 3, false),
        new(CoapOptionNumber.UriPort, "Uri-Port", CoapOptionFormat.UInt, 0, 2, false),
        new(CoapOptionNumber.LocationPath, "Location-Path", CoapOptionFormat.String, 0, 255, true),
        new(CoapOptionNumber.Oscore, "OSCORE", CoapOptionFormat.Opaque, 0, 255, false),
        new(CoapOptionNumber.UriPath, "Uri-Path", CoapOptionFormat.String, 0, 255, true),
        new(CoapOptionNumber.ContentFormat, "Content-Format", CoapOptionFormat.UInt, 0, 2, false),
        new(CoapOptionNumber.MaxAge, "Max-Age", CoapOptionFormat.UInt, 0, 4, false),
        new(CoapOptionNumber.UriQuery, "Uri-Query", CoapOptionFormat.String, 0, 255, true),
        new(CoapOptionNumber.HopLimit, "Hop-Limit", CoapOptionFormat.UInt, 1, 1, false),
        new(CoapOptionNumber.Accept, "Accept", CoapOptionFormat.UInt, 0, 2, false),
        new(CoapOptionNumber.QBlock1, "Q-Block1", CoapOptionFormat.UInt, 0, 3, false),
        new(CoapOptionNumber.LocationQuery, "Location-Query", CoapOptionFormat.String, 0, 255, true),
        new(CoapOptionNumber.Edhoc, "EDHOC", CoapOptionFormat.Empty, 0, 0, false),
        new(CoapOptionNumber.Block2, "Block2", CoapOptionFormat.UInt, 0, 3, false),
        new(CoapOptionNumber.Block1, "Block1", CoapOptionFormat.UInt, 0, 3, false),
        new(CoapOptionNumber.Size2, "Size2", CoapOptionFormat.UInt, 0, 4, false),
        new(CoapOptionNumber.QBlock2, "Q-Block2", CoapOptionFormat.UInt, 0, 3, true),
        new(CoapOptionNumber.ProxyUri, "Proxy-Uri", CoapOptionFormat.String, 1, 1034, false),
        new(CoapOptionNumber.ProxyScheme, "Proxy-Scheme", CoapOptionFormat.String, 1, 255, false),
        new(CoapOptionNumber.Size1, "Size1", CoapOptionFormat.UInt, 0, 4, false),
        new(CoapOptionNumber.Echo, "Echo", CoapOptionFormat.Opaque, 1, 40, false),
        new(CoapOptionNumber.NoResponse, "No-Response", CoapOptionFormat.UInt, 0, 1, false),
        new(CoapOptionNumber.RequestTag, "Request-Tag", CoapOptionFormat.Opaque, 0, 8, true),
    ];

    private CoapOptionDefinition(CoapOptionNumber number, string name, CoapOptionFormat format, int minLength, int maxLength, bool isRepeatable)
    {
        Number = number;
        Name = name;
        Format = format;
        MinLength = minLength;
        MaxLength = maxLength;
        IsRepeatable = isRepeatable;
    }

    /// <summary>Every option an RFC registers, in ascending number order.</summary>
    public static IReadOnlyList<CoapOptionDefinition> All => Registered;

    /// <summary>The option number.</summary>
    public CoapOptionNumber Number { get; }

    /// <summary>The registered name, such as "Uri-Path".</summary>
    public string Name { get; }

    /// <summary>The value format.</summary>
    public CoapOptionFormat Format { get; }

    /// <summary>The smallest valid value length in bytes.</summary>
    public int MinLength { get; }

    /// <summary>The largest valid value length in bytes.</summary>
    public int MaxLength { get; }

    /// <summary>True when the option may occur more than once in a message (RFC 7252 section 5.4.5).</summary>
    public bool IsRepeatable { get; }

    /// <summary>True when the option is critical: a recipient that does not understand it must reject the message.</summary>
    public bool IsCritical => Number.IsCritical();

    /// <summary>True when a proxy that does not understand the option must not forward the message.</summary>
    public bool IsUnsafe => Number.IsUnsafe();

    /// <summary>True when the option is not part of the cache key.</summary>
    public bool IsNoCacheKey => Number.IsNoCacheKey();

    /// <summary>Looks up the definition of a registered option number.</summary>
    /// <param name="number">The option number.</param>
    /// <param name="definition">The definition, or null when the number is not registered by an RFC.</param>
    /// <returns>True when the number is registered.</returns>
    public static bool TryGet(CoapOptionNumber number, [NotNullWhen(true)] out CoapOptionDefinition? definition)
    {
        int index = IndexOf(number);
        definition = index < 0 ? null : Registered[index];
        return index >= 0;
    }

    /// <summary>The registered name of <paramref name="number"/>, or its decimal value when it is not registered.</summary>
    /// <param name="number">The option number.</param>
    /// <returns>The name.</returns>
    public static string GetName(CoapOptionNumber number)
        => TryGet(number, out CoapOptionDefinition? d) ? d.Name : ((ushort)number).ToString(System.Globalization.CultureInfo.InvariantCulture);

    /// <summary>True when <paramref name="length"/> is within the registered bounds of the option, or the option is not registered.</summary>
    internal static bool IsValidLength(CoapOptionNumber number, int length)
    {
        int index = IndexOf(number);
        return index < 0 || (length >= Registered[index].MinLength && length <= Registered[index].MaxLength);
    }

    /// <summary>True when the option is registered as repeatable, or is not registered (unknown options are not judged).</summary>
    internal static bool IsRepeatableOrUnknown(CoapOptionNumber number)
    {
        int index = IndexOf(number);
        return index < 0 || Registered[index].IsRepeatable;
    }

    // A switch compiles to a jump table: no dictionary lookup and no allocation.
    private static int IndexOf(CoapOptionNumber number) => number switch
    {
        CoapOptionNumber.IfMatch => 0,
        CoapOptionNumber.UriHost => 1,
        CoapOptionNumber.ETag => 2,
        CoapOptionNumber.IfNoneMatch => 3,
        CoapOptionNumber.Observe => 4,
        CoapOptionNumber.UriPort => 5,
        CoapOptionNumber.LocationPath => 6,
        CoapOptionNumber.Oscore => 7,
        CoapOptionNumber.UriPath => 8,
        CoapOptionNumber.ContentFormat => 9,
        CoapOptionNumber.MaxAge => 10,
        CoapOptionNumber.UriQuery => 11,
        CoapOptionNumber.HopLimit => 12,
        CoapOptionNumber.Accept => 13,
        CoapOptionNumber.QBlock1 => 14,
        CoapOptionNumber.LocationQuery => 15,
        CoapOptionNumber.Edhoc => 16,
        CoapOptionNumber.Block2 => 17,
        CoapOptionNumber.Block1 => 18,
        CoapOptionNumber.Size2 => 19,
        CoapOptionNumber.QBlock2 => 20,
        CoapOptionNumber.ProxyUri => 21,
        CoapOptionNumber.ProxyScheme => 22,
        CoapOptionNumber.Size1 => 23,
        CoapOptionNumber.Echo => 24,
        CoapOptionNumber.NoResponse => 25,
        CoapOptionNumber.RequestTag => 26,
        _ => -1,
    };

    /// <inheritdoc/>
    public override string ToString() => $"{Name} ({(ushort)Number})";
}
