namespace CoapNet.Cli;

/// <summary>
/// The tool's exit codes, chosen so a script can branch on the class of the answer without parsing
/// output: the CoAP response class where there is one (2.xx, 4.xx, 5.xx), distinct codes otherwise.
/// </summary>
internal static class ExitCodes
{
    /// <summary>A 2.xx response, a pong, or a server that stopped cleanly.</summary>
    public const int Success = 0;

    /// <summary>Any other failure: RST, a refused payload, an I/O error, an unexpected response code.</summary>
    public const int Error = 1;

    /// <summary>Bad usage: unknown option, missing argument, an unusable URI or Content-Format.</summary>
    public const int Usage = 2;

    /// <summary>No answer: the request timed out or the server could not be reached.</summary>
    public const int NoAnswer = 3;

    /// <summary>A 4.xx response.</summary>
    public const int ClientError = 4;

    /// <summary>A 5.xx response.</summary>
    public const int ServerError = 5;

    /// <summary>The help text's description of these codes, so every command documents them the same way.</summary>
    public const string Help = "Exit codes: 0 for a 2.xx answer, 4 for 4.xx, 5 for 5.xx, 3 for a timeout or no answer, 2 for bad usage, 1 for any other error.";

    /// <summary>The exit code for a response code: its class for 2, 4 and 5, otherwise <see cref="Error"/>.</summary>
    /// <param name="code">The response code.</param>
    /// <returns>The exit code.</returns>
    public static int For(Messages.CoapCode code) => code.Class switch
    {
        2 => Success,
        4 => ClientError,
        5 => ServerError,
        _ => Error,
    };
}
