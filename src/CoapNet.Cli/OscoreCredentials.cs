using System.CommandLine;
using System.Net;
using CoapNet.Oscore;
using CoapNet.Oscore.Configuration;
using Microsoft.Extensions.Configuration;

namespace CoapNet.Cli;

/// <summary>
/// --oscore FILE: protects the requests with OSCORE (RFC 8613), the security context read from a JSON file with the keys
/// of a context in configuration (<see cref="OscoreConfiguration.ContextKeys"/>: MasterSecret, MasterSalt, SenderId,
/// RecipientId, IdContext, ...). The Sender Sequence Number is kept in FILE.seq beside it (or the file SequenceFile names,
/// relative to FILE's folder), reserved before use (section 7.5.1, Appendix B.1.1), so the next run never reuses a nonce
/// and the server's replay window takes its requests.
/// </summary>
internal sealed class OscoreCredentials
{
    /// <summary>--oscore: the context's file.</summary>
    public Option<FileInfo?> Context { get; } = new("--oscore")
    {
        Description = "Protect the requests with OSCORE (RFC 8613): the context is the JSON object in FILE (MasterSecret, MasterSalt, SenderId, RecipientId in hex or base64; IdContext); the sequence number is kept in FILE.seq beside it.",
        HelpName = "FILE",
    };

    /// <summary>Adds the option to <paramref name="command"/>.</summary>
    /// <param name="command">The command.</param>
    public void AddTo(Command command) => command.Add(Context);

    /// <summary>The contexts for <paramref name="server"/> that --oscore gives, or null without it.</summary>
    /// <param name="parse">The parse result.</param>
    /// <param name="server">The server the command talks to: the context is its (a "Peer" in the file is not read).</param>
    /// <returns>The options, or null.</returns>
    /// <exception cref="FormatException">The file cannot be read as a context, or holds a key that is not a setting; the message names the file and the key (never a secret).</exception>
    /// <exception cref="InvalidDataException">The file, or its sequence file, is not what it should be; the message names it.</exception>
    /// <exception cref="IOException">A file cannot be read.</exception>
    public OscoreOptions? Read(ParseResult parse, IPEndPoint server)
    {
        if (parse.GetValue(Context) is not { } file)
        {
            return null;
        }

        if (!file.Exists)
        {
            throw new FileNotFoundException($"--oscore: '{file.FullName}' does not exist.", file.FullName);
        }

        IConfigurationRoot json = new ConfigurationBuilder().AddJsonFile(file.FullName, optional: false, reloadOnChange: false).Build();

        // The sequence number beside the context unless the file names where: FILE.seq, or SequenceFile from FILE's folder.
        // (Set on the file's own provider: a chained configuration would read "" as absent, and "" is the empty ID.)
        json["SequenceFile"] = json["SequenceFile"] is { Length: > 0 } named ? Path.Combine(file.DirectoryName!, named) : file.FullName + ".seq";
        OscoreContextOptions options;
        try
        {
            options = OscoreConfiguration.ReadContextOptions(json);
        }
        catch (Exception e) when (e is FormatException or CoapNet.Configuration.CoapConfigurationException)
        {
            throw new FormatException($"--oscore: '{file.FullName}': {e.Message}", e);
        }

        try
        {
            return new OscoreOptions().AddClientContext(server, new OscoreContext(options));
        }
        catch (ArgumentException e)
        {
            throw new ArgumentException($"--oscore: '{file.FullName}': {e.Message}", e);
        }
    }
}
