using System.Globalization;

namespace CoapNet.Scenarios;

/// <summary>How the scenarios read their "--name value" command lines.</summary>
internal static class CommandLine
{
    /// <summary>
    /// Walks the arguments: -h or --help throws <paramref name="usage"/>; a name in <paramref name="flags"/> stands
    /// alone (value null), any other takes the next argument; <paramref name="apply"/> returns false for a name it
    /// does not know. Failures are <see cref="ArgumentException"/>s whose message ends with the usage.
    /// </summary>
    public static void Parse(string[] args, string usage, IReadOnlyCollection<string> flags, Func<string, string?, bool> apply)
    {
        for (int i = 0; i < args.Length; i++)
        {
            string name = args[i];
            if (name is "-h" or "--help")
            {
                throw new ArgumentException(usage);
            }

            string? value = flags.Contains(name) ? null : i + 1 < args.Length ? args[++i] : throw new ArgumentException($"{name} needs a value.\n{usage}");
            if (!apply(name, value))
            {
                throw new ArgumentException($"Unknown option {name}.\n{usage}");
            }
        }
    }

    /// <summary>A whole number of at least <paramref name="min"/> for option <paramref name="name"/>, or a message saying what it takes.</summary>
    public static int ParseCount(string name, string? value, int min)
        => int.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out int n) && n >= min
            ? n
            : throw new ArgumentException($"{name} takes whole numbers from {min} up, not '{value}'.");

    /// <summary>Comma-separated whole numbers of at least <paramref name="min"/> for option <paramref name="name"/>, such as "5,50,500".</summary>
    public static IReadOnlyList<int> ParseCounts(string name, string? value, int min)
    {
        List<int> counts = [];
        foreach (string n in (value ?? string.Empty).Split(','))
        {
            counts.Add(ParseCount(name, n, min));
        }

        return counts;
    }
}
