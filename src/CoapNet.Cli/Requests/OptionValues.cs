using System.Globalization;
using System.Text;
using CoapNet.Messages;

namespace CoapNet.Cli.Requests;

/// <summary>
/// The values the command line gives in libcoap's notations: <c>-O NUM,VALUE</c> (any option, its value as text or as
/// 0x-prefixed hex), <c>-b [NUM,]SIZE</c> (a block size and the block to start at) and a key as text or hex (<c>-k</c>).
/// </summary>
internal static class OptionValues
{
    /// <summary>
    /// Reads <c>NUM[,VALUE]</c>: the option's number (or its registered name, such as If-None-Match), and its value.
    /// A value starting with 0x is hex bytes; a decimal number for an option whose format is uint (RFC 7252 section
    /// 3.2) is encoded as one, in as few bytes as it takes; anything else is UTF-8 text. No value is an empty option.
    /// </summary>
    /// <param name="text">What the user typed.</param>
    /// <param name="option">The option.</param>
    /// <param name="error">Why it is not one, when it is not.</param>
    /// <returns>True when the text is an option.</returns>
    public static bool TryParseOption(string text, out CoapOptionEntry option, out string? error)
    {
        option = default;
        int comma = text.IndexOf(',', StringComparison.Ordinal);
        string name = comma < 0 ? text : text[..comma];
        string value = comma < 0 ? string.Empty : text[(comma + 1)..];
        if (!TryParseNumber(name, out CoapOptionNumber number))
        {
            error = $"'{name}' is not an option number from 0 to 65535 or a known option name (in -O '{text}').";
            return false;
        }

        CoapOptionDefinition.TryGet(number, out CoapOptionDefinition? definition);
        ReadOnlyMemory<byte> bytes;
        if (value.StartsWith("0x", StringComparison.OrdinalIgnoreCase))
        {
            if (!TryParseHex(value.AsSpan(2), out byte[]? hex))
            {
                error = $"'{value}' is not hex bytes (an even number of digits after 0x) in -O '{text}'.";
                return false;
            }

            bytes = hex;
        }
        else if (definition?.Format == CoapOptionFormat.UInt && value.Length > 0)
        {
            if (!uint.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out uint number32))
            {
                error = $"{definition.Name} takes a number from 0 to {uint.MaxValue} (or 0x-prefixed hex), not '{value}'.";
                return false;
            }

            bytes = new UIntOption(number, number32).Encode();
        }
        else
        {
            bytes = Encoding.UTF8.GetBytes(value);
        }

        option = new CoapOptionEntry(number, bytes);
        if (!option.HasValidLength)
        {
            error = $"{definition!.Name} ({(ushort)number}) takes {definition.MinLength} to {definition.MaxLength} bytes, not {bytes.Length} (RFC 7252 section 5.10).";
            return false;
        }

        error = null;
        return true;
    }

    /// <summary>
    /// Reads libcoap's <c>-b [NUM,]SIZE</c>: a block size of 16 to 1024 bytes, a power of two (RFC 7959 section 2.2),
    /// and the block to start a download at.
    /// </summary>
    /// <param name="text">What the user typed.</param>
    /// <param name="block">The block number (0 when none was given) and size.</param>
    /// <param name="error">Why it is not one, when it is not.</param>
    /// <returns>True when the text is a block.</returns>
    public static bool TryParseBlock(string text, out (int Number, int Size) block, out string? error)
    {
        block = default;
        int comma = text.IndexOf(',', StringComparison.Ordinal);
        int number = 0;
        if (comma >= 0 && (!int.TryParse(text.AsSpan(0, comma), NumberStyles.None, CultureInfo.InvariantCulture, out number) || number > CoapBlock.MaxNumber))
        {
            error = $"'{text[..comma]}' is not a block number from 0 to {CoapBlock.MaxNumber} (in -b '{text}').";
            return false;
        }

        string sizeText = comma < 0 ? text : text[(comma + 1)..];
        if (!int.TryParse(sizeText, NumberStyles.None, CultureInfo.InvariantCulture, out int size) || size is < 16 or > 1024 || (size & (size - 1)) != 0)
        {
            error = $"'{sizeText}' is not a block size: 16, 32, 64, 128, 256, 512 or 1024 bytes (RFC 7959 section 2.2).";
            return false;
        }

        block = (number, size);
        error = null;
        return true;
    }

    /// <summary>Text as its UTF-8 bytes, or 0x-prefixed hex as the bytes it spells.</summary>
    /// <param name="text">What the user typed.</param>
    /// <param name="bytes">The bytes.</param>
    /// <returns>False for 0x followed by something that is not hex bytes.</returns>
    public static bool TryParseTextOrHex(string text, out byte[] bytes)
    {
        if (text.StartsWith("0x", StringComparison.OrdinalIgnoreCase))
        {
            bool ok = TryParseHex(text.AsSpan(2), out byte[]? hex);
            bytes = hex ?? [];
            return ok;
        }

        bytes = Encoding.UTF8.GetBytes(text);
        return true;
    }

    private static bool TryParseNumber(string name, out CoapOptionNumber number)
    {
        if (ushort.TryParse(name, NumberStyles.None, CultureInfo.InvariantCulture, out ushort value))
        {
            number = (CoapOptionNumber)value;
            return true;
        }

        foreach (CoapOptionDefinition definition in CoapOptionDefinition.All)
        {
            if (string.Equals(definition.Name, name, StringComparison.OrdinalIgnoreCase))
            {
                number = definition.Number;
                return true;
            }
        }

        number = default;
        return false;
    }

    private static bool TryParseHex(ReadOnlySpan<char> digits, out byte[]? bytes)
    {
        bytes = null;
        if (digits.Length % 2 != 0)
        {
            return false;
        }

        try
        {
            bytes = Convert.FromHexString(digits);
            return true;
        }
        catch (FormatException)
        {
            return false;
        }
    }
}
