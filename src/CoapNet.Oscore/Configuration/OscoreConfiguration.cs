using System.Net;
using CoapNet.Channels;
using CoapNet.Configuration;
using CoapNet.Transports;
using Microsoft.Extensions.Configuration;

namespace CoapNet.Oscore.Configuration;

/// <summary>
/// Reads OSCORE security contexts (RFC 8613 section 3.2) from configuration: "Coap:Oscore:Contexts:{name}", one section
/// per context with its Master Secret, Master Salt, the two Sender IDs and any ID Context, as hexadecimal or base64; a
/// context with a "Peer" is a client's, used for the requests to that server, one without is a server's, for the requests
/// of the client whose kid is its Recipient ID. "SequenceFile" keeps the Sender Sequence Number across restarts
/// (<see cref="OscoreSequenceFile"/>). A key the section does not know is refused with its path and the nearest known
/// name; secrets are never put in an error message.
/// </summary>
/// <example>
/// <code>
/// "Coap": {
///   "Oscore": {
///     "Contexts": {
///       "sensor-7": { "MasterSecret": "0102030405060708090a0b0c0d0e0f10", "MasterSalt": "9e7ca92223786340", "SenderId": "01", "RecipientId": "", "SequenceFile": "/var/lib/app/sensor-7.seq" },
///       "gateway": { "MasterSecret": "AQIDBAUGBwgJCgsMDQ4PEA==", "SenderId": "", "RecipientId": "01", "Peer": "coap://192.0.2.10:5683" }
///     }
///   }
/// }
/// </code>
/// </example>
public static class OscoreConfiguration
{
    /// <summary>The section the contexts are read from.</summary>
    public const string Section = "Coap:Oscore";

    /// <summary>The name of the map of contexts below <see cref="Section"/>, one named section each.</summary>
    public const string ContextsSection = "Contexts";

    /// <summary>The keys "Coap:Oscore" may hold: "Contexts", a map of sections with <see cref="ContextKeys"/>.</summary>
    /// <returns>New keys, the caller's.</returns>
    public static CoapConfigurationKeys Keys() => new CoapConfigurationKeys().AddList(ContextsSection, ContextKeys());

    /// <summary>
    /// The keys of one context: "MasterSecret" (required), "MasterSalt", "SenderId" and "RecipientId" (required; "" for
    /// the empty ID), "IdContext" (absent for none), each hexadecimal or base64; "SendIdContext" (true or false); "Peer",
    /// the server a client's context is for ("coap://192.0.2.10:5683", "192.0.2.10:5683", an IP address and a port, 5683
    /// by default); "SequenceFile", the file that keeps the Sender Sequence Number.
    /// </summary>
    /// <returns>New keys, the caller's.</returns>
    public static CoapConfigurationKeys ContextKeys()
        => new("MasterSecret", "MasterSalt", "SenderId", "RecipientId", "IdContext", "SendIdContext", "Peer", "SequenceFile");

    /// <summary>
    /// The parameters of the context <paramref name="section"/> holds (see <see cref="ContextKeys"/>), with an
    /// <see cref="OscoreSequenceFile"/> as its store when "SequenceFile" names one. "Peer" is not read here:
    /// <see cref="ReadClientOptions"/> reads it.
    /// </summary>
    /// <param name="section">The context's section ("Coap:Oscore:Contexts:sensor-7"), or a whole file of its keys.</param>
    /// <returns>The options, ready for <see cref="OscoreContext(OscoreContextOptions)"/>.</returns>
    /// <exception cref="CoapConfigurationException">The section holds a key that is not a setting; the message names it.</exception>
    /// <exception cref="FormatException">A value is missing or cannot be read; the message names its path (never a secret).</exception>
    public static OscoreContextOptions ReadContextOptions(IConfiguration section)
    {
        ArgumentNullException.ThrowIfNull(section);
        Refuse(ContextKeys(), section);
        OscoreContextOptions options = new()
        {
            MasterSecret = Bytes(section, "MasterSecret") is { Length: > 0 } secret
                ? secret
                : throw new FormatException($"{Path(section, "MasterSecret")} is missing or empty: the Master Secret shared with the peer, in hexadecimal or base64 (RFC 8613 section 3.1)."),
            MasterSalt = Bytes(section, "MasterSalt") ?? [],
            SenderId = Bytes(section, "SenderId") ?? throw Missing(section, "SenderId", "this endpoint's Sender ID"),
            RecipientId = Bytes(section, "RecipientId") ?? throw Missing(section, "RecipientId", "the peer's Sender ID"),
            IdContext = Bytes(section, "IdContext"),
        };
        if (section["SendIdContext"] is { Length: > 0 } send)
        {
            options.SendIdContext = bool.TryParse(send, out bool value)
                ? value
                : throw new FormatException($"{Path(section, "SendIdContext")} is '{send}'; it is true or false.");
        }

        if (section["SequenceFile"] is { Length: > 0 } file)
        {
            try
            {
                options.SequenceStore = new OscoreSequenceFile(file);
            }
            catch (ArgumentException e)
            {
                throw new FormatException($"{Path(section, "SequenceFile")}: {e.Message}", e);
            }
        }

        return options;
    }

    /// <summary>
    /// A server's contexts: each section of "Contexts" without a "Peer" (<see cref="OscoreOptions.AddServerContext"/>).
    /// Each context's store is loaded now.
    /// </summary>
    /// <param name="section">The "Coap:Oscore" section.</param>
    /// <returns>The options, or null when no context is a server's.</returns>
    /// <exception cref="CoapConfigurationException">A key is not a setting; the message names it.</exception>
    /// <exception cref="FormatException">A value is missing, cannot be read or cannot make a context; the message names its path (never a secret).</exception>
    /// <exception cref="InvalidDataException">A sequence file is corrupt; the message names it.</exception>
    /// <exception cref="IOException">A sequence file cannot be read; the message names it.</exception>
    public static OscoreOptions? ReadServerOptions(IConfiguration section) => Read(section, client: false);

    /// <summary>
    /// A client's contexts: each section of "Contexts" with a "Peer", used for every request to that server
    /// (<see cref="OscoreOptions.AddClientContext"/>). Each context's store is loaded now.
    /// </summary>
    /// <param name="section">The "Coap:Oscore" section.</param>
    /// <returns>The options, or null when no context is a client's.</returns>
    /// <exception cref="CoapConfigurationException">A key is not a setting; the message names it.</exception>
    /// <exception cref="FormatException">A value is missing, cannot be read or cannot make a context; the message names its path (never a secret).</exception>
    /// <exception cref="InvalidDataException">A sequence file is corrupt; the message names it.</exception>
    /// <exception cref="IOException">A sequence file cannot be read; the message names it.</exception>
    public static OscoreOptions? ReadClientOptions(IConfiguration section) => Read(section, client: true);

    private static OscoreOptions? Read(IConfiguration section, bool client)
    {
        ArgumentNullException.ThrowIfNull(section);
        Refuse(Keys(), section);
        OscoreOptions? oscore = null;
        foreach (IConfigurationSection entry in section.GetSection(ContextsSection).GetChildren())
        {
            IPEndPoint? peer = ReadPeer(entry);
            if ((peer is not null) != client)
            {
                continue;
            }

            OscoreContextOptions options = ReadContextOptions(entry);
            OscoreContext context;
            try
            {
                context = new OscoreContext(options);
            }
            catch (ArgumentException e)
            {
                throw new FormatException($"{entry.Path}: {e.Message}", e);
            }

            oscore ??= new OscoreOptions();
            try
            {
                _ = peer is null ? oscore.AddServerContext(context) : oscore.AddClientContext(peer, context);
            }
            catch (ArgumentException e)
            {
                throw new FormatException($"{entry.Path}: {e.Message}", e);
            }
        }

        return oscore;
    }

    // Checked before anything is read: a misspelled key would otherwise leave its setting unset without a word.
    private static void Refuse(CoapConfigurationKeys keys, IConfiguration section)
    {
        List<string> problems = [];
        keys.Check(section, problems);
        if (problems.Count > 0)
        {
            throw new CoapConfigurationException(problems);
        }
    }

    // "coap://192.0.2.10:5683", or an address and a port as an endpoint's Url writes them without the scheme; by the one
    // endpoint parser, so IPv6 literals and the default port read as everywhere else.
    private static IPEndPoint? ReadPeer(IConfigurationSection entry)
    {
        if (entry["Peer"] is not { Length: > 0 } text)
        {
            return null;
        }

        string url = text.Contains("://", StringComparison.Ordinal) ? text : $"{CoapPeer.UdpScheme}://{text}";
        return CoapAddress.TryParse(url, null, out CoapAddress? address, out _) && address.IPAddress is not null && address.Port != 0
            ? address.ToEndPoint()
            : throw new FormatException($"{entry.Path}:Peer is '{text}', which is not a server's IP address with an optional port, such as coap://192.0.2.10:5683 or [2001:db8::1]:5683.");
    }

    // Hexadecimal when the text is nothing else (an even number of hex digits, as the RFC writes IDs and secrets), base64
    // otherwise; "" is empty, an absent key null. The value is never quoted: it may be a secret.
    private static byte[]? Bytes(IConfiguration section, string name)
    {
        if (section[name] is not { } text)
        {
            return null;
        }

        text = text.Trim();
        if (text.Length % 2 == 0 && IsHex(text))
        {
            return Convert.FromHexString(text);
        }

        try
        {
            return Convert.FromBase64String(text);
        }
        catch (FormatException)
        {
            throw new FormatException($"{Path(section, name)} is neither hexadecimal nor base64.");
        }
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

    private static FormatException Missing(IConfiguration section, string name, string what)
        => new($"{Path(section, name)} is missing: {what}, in hexadecimal (\"\" for the empty ID).");

    private static string Path(IConfiguration section, string name) => section is IConfigurationSection s && s.Path.Length > 0 ? s.Path + ":" + name : name;
}
