using System.Globalization;

namespace CoapNet.Samples.Server;

/// <summary>
/// The key file of --psk-file (the one benchmarks/tools/coap-fleet.c writes): UTF-8 text, one identity a line as
/// "identity hexkey" (a 16-byte pre-shared key in lowercase hexadecimal), lines beginning with '#' ignored.
/// </summary>
public static class SamplePskFile
{
    /// <summary>The length of every key in the file, in bytes.</summary>
    public const int KeyLength = 16;

    /// <summary>Reads the identities and their keys from <paramref name="path"/>.</summary>
    /// <param name="path">The file.</param>
    /// <returns>Each identity's key.</returns>
    /// <exception cref="FormatException">A line is not "identity hexkey", or an identity comes twice; the message names the line.</exception>
    /// <exception cref="IOException">The file cannot be read.</exception>
    public static Dictionary<string, byte[]> Load(string path)
    {
        ArgumentNullException.ThrowIfNull(path);
        Dictionary<string, byte[]> keys = new(StringComparer.Ordinal);
        int number = 0;
        foreach (string line in File.ReadLines(path))
        {
            number++;
            if (line.Length == 0 || line[0] == '#')
            {
                continue;
            }

            int space = line.IndexOf(' ', StringComparison.Ordinal);
            string hex = space < 0 ? string.Empty : line[(space + 1)..].TrimEnd('\r');
            if (space <= 0 || hex.Length != 2 * KeyLength || !IsHex(hex))
            {
                throw new FormatException(string.Create(CultureInfo.InvariantCulture, $"{path} line {number}: not \"identity hexkey\" with a {KeyLength}-byte key in hexadecimal."));
            }

            if (!keys.TryAdd(line[..space], Convert.FromHexString(hex)))
            {
                throw new FormatException(string.Create(CultureInfo.InvariantCulture, $"{path} line {number}: the identity '{line[..space]}' comes twice."));
            }
        }

        return keys;
    }

    private static bool IsHex(string text)
    {
        foreach (char c in text)
        {
            if (!char.IsAsciiHexDigit(c))
            {
                return false;
            }
        }

        return true;
    }
}
