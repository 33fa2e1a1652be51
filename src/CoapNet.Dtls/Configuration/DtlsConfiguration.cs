using System.Security.Cryptography;
using CoapNet.Configuration;
using Microsoft.Extensions.Configuration;

namespace CoapNet.Dtls.Configuration;

/// <summary>
/// Reads <see cref="DtlsServerOptions"/> (a coaps endpoint's "Dtls" section) and <see cref="DtlsClientOptions"/>
/// ("Coap:Client:Dtls") from configuration: the settings by the options' own names, bound by the configuration binder;
/// the credentials as text, hexadecimal or files (pre-shared keys), PEM files (raw public keys), and certificates and trust
/// roots by the keys every secure transport shares (<see cref="CoapCredentialConfiguration"/>: PEM files, an encrypted
/// key with its password, or the certificate store). A key the section does not know is refused with its path and the
/// nearest known name; keys are never put in an error message.
/// </summary>
/// <example>
/// <code>
/// "Coap": {
///   "Endpoints": {
///     "secure": {
///       "Url": "coaps://[::]:5684",
///       "Dtls": {
///         "PskKeys": [ { "Identity": "device-1", "KeyFile": "/run/secrets/device-1.key" }, { "Identity": "lab", "Key": "secretPSK" } ],
///         "CertificateFile": "server.pem", "CertificateKeyFile": "server-key.pem", "TrustedRootsFile": "ca.pem",
///         "RawPublicKeyFile": "rpk.pem", "TrustedRawPublicKeyFiles": [ "device-7.pub.pem" ],
///         "MaxSessions": 150000, "SessionIdleTimeout": "00:30:00", "UseConnectionId": true
///       }
///     }
///   },
///   "Client": { "Dtls": { "PskIdentity": "device-1", "PskKeyFile": "/run/secrets/device-1.key" } }
/// }
/// </code>
/// </example>
public static class DtlsConfiguration
{
    /// <summary>The name of a coaps endpoint's DTLS section, below the endpoint ("Coap:Endpoints:{name}:Dtls").</summary>
    public const string EndpointSection = "Dtls";

    /// <summary>The section a client's DTLS credentials are read from.</summary>
    public const string ClientSection = "Coap:Client:Dtls";

    // The file of a fleet's keys (DtlsPskFile's format), beside the list of PskKeys.
    private const string PskFileKey = "PskFile";

    /// <summary>
    /// The keys an endpoint's "Dtls" section may hold: "PskKeys" (a list of "Identity" with "Key", "KeyHex" or
    /// "KeyFile") or "PskFile" (a fleet's keys in one file, read again when it changes: <see cref="DtlsPskFile"/>), "PskIdentityHint", "CookieSecretLifetime", and what <see cref="ClientKeys"/> shares with it
    /// (the bounds, "UseConnectionId", "RawPublicKeyFile", "TrustedRawPublicKeyFiles", and the certificate and trust
    /// keys of <see cref="CoapCredentialConfiguration"/>).
    /// </summary>
    /// <returns>New keys, the caller's.</returns>
    public static CoapConfigurationKeys ServerKeys()
        => CredentialKeys(CoapConfigurationKeys.Of<DtlsServerOptions>())
            .AddList(nameof(DtlsServerOptions.PskKeys), new CoapConfigurationKeys("Identity", "Key", "KeyHex", "KeyFile"))
            .Add(PskFileKey);

    /// <summary>
    /// The keys "Coap:Client:Dtls" may hold: "PskIdentity" with "PskKey" (text), "PskKeyHex" or "PskKeyFile", and what
    /// it shares with <see cref="ServerKeys"/>.
    /// </summary>
    /// <returns>New keys, the caller's.</returns>
    public static CoapConfigurationKeys ClientKeys()
        => CredentialKeys(CoapConfigurationKeys.Of<DtlsClientOptions>()).Add("PskKey", "PskKeyHex", "PskKeyFile");

    /// <summary>The options of one coaps endpoint from its "Dtls" section (see <see cref="ServerKeys"/>); its address is the endpoint's.</summary>
    /// <param name="section">The section ("Coap:Endpoints:secure:Dtls").</param>
    /// <returns>The options.</returns>
    /// <exception cref="CoapConfigurationException">The section holds a key that is not a setting; the message names it.</exception>
    /// <exception cref="FormatException">A credential cannot be read; the message names its path (never a key).</exception>
    /// <exception cref="InvalidOperationException">A setting's value is not of its type; the message names its path.</exception>
    /// <exception cref="IOException">A file cannot be read; the message names it.</exception>
    public static DtlsServerOptions ReadServerOptions(IConfiguration section)
    {
        ArgumentNullException.ThrowIfNull(section);
        Refuse(ServerKeys(), section);
        DtlsServerOptions options = new();
        WithoutPskKeys(section).Bind(options);
        ReadCredentials(options, section);
        Dictionary<string, byte[]> keys = new(StringComparer.Ordinal);
        foreach (IConfigurationSection entry in section.GetSection(nameof(DtlsServerOptions.PskKeys)).GetChildren())
        {
            string identity = entry["Identity"] is { Length: > 0 } name ? name : throw new FormatException($"{entry.Path}:Identity must name the PSK identity.");
            keys[identity] = Key(entry, "Key", "KeyHex", "KeyFile") ?? throw new FormatException($"{entry.Path} needs Key, KeyHex or KeyFile for identity '{identity}'.");
        }

        if (keys.Count > 0)
        {
            options.PskKeys = DtlsServerOptions.PskTable(keys);
        }

        if (section[PskFileKey] is { Length: > 0 } pskFile)
        {
            if (keys.Count > 0)
            {
                throw new FormatException($"{Path(section, PskFileKey)} and {Path(section, nameof(DtlsServerOptions.PskKeys))} are both set: keep the keys in one place.");
            }

            try
            {
                options.PskKeys = new DtlsPskFile(pskFile);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                throw new IOException($"{Path(section, PskFileKey)} names '{pskFile}', which cannot be read: {e.Message}", e);
            }
        }

        return options;
    }

    /// <summary>
    /// Fills <paramref name="options"/> from <paramref name="section"/> (see <see cref="ClientKeys"/>); settings the
    /// section does not name are left as they are.
    /// </summary>
    /// <param name="options">The options to fill.</param>
    /// <param name="section">The section ("Coap:Client:Dtls").</param>
    /// <exception cref="CoapConfigurationException">The section holds a key that is not a setting; the message names it.</exception>
    /// <exception cref="FormatException">A credential cannot be read; the message names its path (never a key).</exception>
    /// <exception cref="InvalidOperationException">A setting's value is not of its type; the message names its path.</exception>
    /// <exception cref="IOException">A file cannot be read; the message names it.</exception>
    public static void ReadClientOptions(DtlsClientOptions options, IConfiguration section)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(section);
        Refuse(ClientKeys(), section);
        section.Bind(options);
        ReadCredentials(options, section);
        options.PskKey = Key(section, "PskKey", "PskKeyHex", "PskKeyFile") ?? options.PskKey;
    }

    // The settings both sides bind by name (the options' own), and the credentials, which are objects, by the keys that
    // name their files.
    private static CoapConfigurationKeys CredentialKeys(CoapConfigurationKeys settings)
        => settings.Add([.. CoapCredentialConfiguration.Keys().Names, "RawPublicKeyFile"]).AddList("TrustedRawPublicKeyFiles");

    // Checked before anything binds: the binder would set the defaults for a misspelled key without a word, and a key named
    // like an object-valued property ("Certificate") must point to the keys that name its files instead.
    private static void Refuse(CoapConfigurationKeys keys, IConfiguration section)
    {
        List<string> problems = [];
        keys.Check(section, problems);
        if (problems.Count > 0)
        {
            throw new CoapConfigurationException(problems);
        }
    }

    // The binder would try to make a DtlsPskStore, an abstract class, out of the "PskKeys" list (read below, as a table):
    // it binds a copy of the section without it, under the same paths, so its errors still name the setting's own path.
    private static IConfiguration WithoutPskKeys(IConfiguration section)
    {
        if (section is not IConfigurationSection { Path: var path } || !section.GetSection(nameof(DtlsServerOptions.PskKeys)).Exists())
        {
            return section;
        }

        string list = path + ":" + nameof(DtlsServerOptions.PskKeys);
        Dictionary<string, string?> settings = new(StringComparer.OrdinalIgnoreCase);
        foreach (KeyValuePair<string, string?> setting in section.AsEnumerable())
        {
            if (!setting.Key.Equals(list, StringComparison.OrdinalIgnoreCase) && !setting.Key.StartsWith(list + ":", StringComparison.OrdinalIgnoreCase))
            {
                settings[setting.Key] = setting.Value;
            }
        }

        return new ConfigurationBuilder().AddInMemoryCollection(settings).Build().GetSection(path);
    }

    private static void ReadCredentials(DtlsOptions options, IConfiguration section)
    {
        if (section["RawPublicKeyFile"] is { Length: > 0 })
        {
            options.RawPublicKeyPair = Pem(section, "RawPublicKeyFile");
        }

        List<byte[]> trusted = [];
        IConfigurationSection trustedFiles = section.GetSection("TrustedRawPublicKeyFiles");
        foreach (IConfigurationSection entry in trustedFiles.GetChildren())
        {
            using ECDsa key = Pem(trustedFiles, entry.Key);
            trusted.Add(key.ExportSubjectPublicKeyInfo());
        }

        if (trusted.Count > 0)
        {
            options.TrustedRawPublicKeys = DtlsOptions.RawPublicKeyTable(trusted);
        }

        // Certificates and trust roots by the keys every secure transport shares (coaps+tcp's are read the same way).
        options.Certificate = CoapCredentialConfiguration.ReadCertificate(section) ?? options.Certificate;
        options.TrustedRoots = CoapCredentialConfiguration.ReadTrustedRoots(section) ?? options.TrustedRoots;
    }

    // A key as UTF-8 text (libcoap's -k), hexadecimal, or a file whose text is the key (a final newline is not part of it).
    private static byte[]? Key(IConfiguration section, string text, string hex, string file)
    {
        if (section[text] is { Length: > 0 } value)
        {
            return System.Text.Encoding.UTF8.GetBytes(value);
        }

        if (section[hex] is { Length: > 0 } digits)
        {
            try
            {
                return Convert.FromHexString(digits);
            }
            catch (FormatException)
            {
                throw new FormatException($"{Path(section, hex)} is not hexadecimal.");
            }
        }

        return CoapCredentialConfiguration.ReadFileText(section, file) is { } key ? System.Text.Encoding.UTF8.GetBytes(key.TrimEnd('\r', '\n')) : null;
    }

    // An EC key from the PEM file the key names: a private key (PKCS#8 or SEC 1, as libcoap's -M takes) or a public key alone.
    private static ECDsa Pem(IConfiguration section, string name)
    {
        string text = CoapCredentialConfiguration.ReadFileText(section, name) ?? throw new FormatException($"{Path(section, name)} must name a PEM file.");
        ECDsa key = ECDsa.Create();
        try
        {
            key.ImportFromPem(text);
            return key;
        }
        catch (Exception e) when (e is ArgumentException or CryptographicException)
        {
            key.Dispose();
            throw new FormatException($"{Path(section, name)} names '{section[name]}', which holds no PEM EC key: {e.Message}", e);
        }
    }

    private static string Path(IConfiguration section, string name) => section is IConfigurationSection s ? s.Path + ":" + name : name;
}
