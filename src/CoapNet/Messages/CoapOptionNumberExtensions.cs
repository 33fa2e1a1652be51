namespace CoapNet.Messages;

/// <summary>The properties RFC 7252 section 5.4.6 encodes in the bits of an option number.</summary>
public static class CoapOptionNumberExtensions
{
    /// <summary>RFC 7252 section 5.4.6: an odd option number is critical.</summary>
    /// <param name="number">The option number.</param>
    /// <returns>True when the option is critical.</returns>
    public static bool IsCritical(this CoapOptionNumber number) => ((ushort)number & 1) != 0;

    /// <summary>RFC 7252 section 5.4.6: bit 1 of the option number marks it unsafe to forward.</summary>
    /// <param name="number">The option number.</param>
    /// <returns>True when the option is unsafe.</returns>
    public static bool IsUnsafe(this CoapOptionNumber number) => ((ushort)number & 2) != 0;

    /// <summary>RFC 7252 section 5.4.6: bits 2-4 all set (with the option safe to forward) mark NoCacheKey.</summary>
    /// <param name="number">The option number.</param>
    /// <returns>True when the option is not part of the cache key.</returns>
    public static bool IsNoCacheKey(this CoapOptionNumber number) => ((ushort)number & 0x1E) == 0x1C;
}
