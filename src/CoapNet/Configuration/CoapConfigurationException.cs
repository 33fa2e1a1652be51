namespace CoapNet.Configuration;

/// <summary>
/// Configuration holds keys that are not settings (a misspelling, a key of an earlier version, a package's section whose
/// package was not added): the start stops, and the message names each key's full path with the nearest known name or
/// where the setting went ("Coap:MaxPendingRequest is not a setting; did you mean MaxPendingRequests?"). Values are never
/// quoted, so no secret is.
/// </summary>
public sealed class CoapConfigurationException : InvalidOperationException
{
    /// <summary>Creates the exception for <paramref name="problems"/>.</summary>
    /// <param name="problems">One sentence per key, each naming its path; at least one.</param>
    public CoapConfigurationException(IReadOnlyList<string> problems)
        : base(Describe(problems))
    {
        Problems = problems;
    }

    /// <summary>One sentence per key that is not a setting.</summary>
    public IReadOnlyList<string> Problems { get; }

    private static string Describe(IReadOnlyList<string> problems)
    {
        ArgumentNullException.ThrowIfNull(problems);
        ArgumentOutOfRangeException.ThrowIfZero(problems.Count);
        return problems.Count == 1 ? problems[0] : $"{problems.Count} configuration keys are not settings: {string.Join(" ", problems)}";
    }
}
