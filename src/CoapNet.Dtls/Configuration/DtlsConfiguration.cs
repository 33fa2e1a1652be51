using System.Globalization;
using System.Net;
using System.Security.Cryptography;
using CoapNet.Hosting;
using Microsoft.Extensions.Configuration;

namespace CoapNet.Dtls.Configuration;

/// <summary>
/// Reads <see cref="DtlsServerOptions"/> and <see cref="DtlsClientOptions"/> from a configuration section whose names
/// are the options' own, with the credentials as text or files: pre-shared keys as text, hexadecimal or a file, raw
/// public keys as PEM files; certificates and trust roots by the keys every secure transport shares, read by
/// <see cref="CoapCredentialConfiguration"/> (PEM files, an encrypted key with its password, or the certificate store).
/// Keys are never put in an error message.
/// </summary>
/// <example>
/// <code>
/// "Coap": {
///   "Dtls": {
///     "Endpoints": [ "[::]:5684" ],
///     "PskKeys": [ { "Identity": "device-1", "KeyFile": "/run/secrets/device-1.key" }, { "Identity": "lab", "Key": "secretPSK" } ],
///     "CertificateFile": "server.pem", "CertificateKeyFile": "server-key.pem", "TrustedRootsFile": "ca.pem",
///     "RawPublicKeyFile": "rpk.pem", "TrustedRawPublicKeyFiles": [ "device-7.pub.pem" ],
///     "MaxSessions": 150000, "SessionIdleTimeout": "00:30:00", "UseConnectionId": true
///   },
///   "Client": { "Dtls": { "PskIdentity": "device-1", "PskKeyFile": "/run/secrets/device-1.key" } }
/// }
/// </code>
/// </example>
public static class DtlsConfiguration
{
    /// <summary>The section a server's coaps endpoints are read from.</summary>
    public const string ServerSection = "Coap:Dtls";

    /// <summary>The section a client's DTLS credentials are read from.</summary>
    public const string ClientSection = "Coap:Client:Dtls";

    /// <summary>
    /// One <see cref="DtlsServerOptions"/> per endpoint of <paramref name="section"/>: "Endpoints" lists
    /// "ADDRESS:PORT" ("[::]:5684", "0.0.0.0:5684"); without it, one endpoint at "Address" and "Port" (default
    /// [::]:5684). Credentials: "PskKeys" (a list of "Identity" with "Key", "KeyHex" or "KeyFile"),
    /// "PskIdentityHint", "RawPublicKeyFile", "TrustedRawPublicKeyFiles", "CertificateFile" with
    /// "CertificateKeyFile" and "CertificateKeyPassword" (or "CertificateThumbprint" in the certificate store,
    /// "CertificateStoreName" and "CertificateStoreLocation"), "TrustedRootsFile" or "TrustedRootsStoreName" (see
    /// <see cref="CoapCredentialConfiguration"/>); and the bounds by their option names.
    /// </summary>
    /// <param name="section">The section ("Coap:Dtls").</param>
    /// <returns>The options, one per endpoint; none when the section is empty.</returns>
    /// <exception cref="FormatException">A value cannot be read; the message names its path (never a key).</exception>
    /// <exception cref="IOException">A file cannot be read; the message names it.</exception>
    public static IReadOnlyList<DtlsServerOptions> ReadServerOptions(IConfiguration section)
    {
        ArgumentNullException.ThrowIfNull(section);
        List<DtlsServerOptions> endpoints = [];
        if (!section.GetChildren().Any())
        {
            return endpoints;
        }

        List<IPEndPoint> addresses = [];
        foreach (IConfigurationSection entry in section.GetSection("Endpoints").GetChildren())
        {
            addresses.Add(IPEndPoint.TryParse(entry.Value ?? string.Empty, out IPEndPoint? endpoint)
                ? endpoint
                : throw new FormatException($"{entry.Path} is '{entry.Value}', which is not ADDRESS:PORT such as [::]:5684 or 0.0.0.0:5684."));
        }

        if (addresses.Count == 0)
        {
            IPAddress address = section["Address"] is { } text
                ? IPAddress.TryParse(text, out IPAddress? parsed) ? parsed : throw new FormatException($"{Path(section, "Address")} is '{text}', which is not an IP address.")
                : IPAddress.IPv6Any;
            addresses.Add(new IPEndPoint(address, Int(section, "Port") ?? DtlsServerOptions.DefaultPort));
        }

        foreach (IPEndPoint address in addresses)
        {
            DtlsServerOptions options = new() { Address = address.Address, Port = address.Port };
            ReadShared(options, section);
            options.PskIdentityHint = section["PskIdentityHint"] ?? options.PskIdentityHint;
            if (TimeSpanValue(section, "CookieSecretLifetime") is { } lifetime)
            {
                options.CookieSecretLifetime = lifetime;
            }

            options.HandshakeStallTimeout = TimeSpanValue(section, nameof(DtlsServerOptions.HandshakeStallTimeout)) ?? options.HandshakeStallTimeout;
            options.MaxConcurrentHandshakesPerAddress = Int(section, nameof(DtlsServerOptions.MaxConcurrentHandshakesPerAddress)) ?? options.MaxConcurrentHandshakesPerAddress;
            options.SessionEvictionThreshold = TimeSpanValue(section, nameof(DtlsServerOptions.SessionEvictionThreshold)) ?? options.SessionEvictionThreshold;

            Dictionary<string, byte[]> keys = new(StringComparer.Ordinal);
            foreach (IConfigurationSection entry in section.GetSection("PskKeys").GetChildren())
            {
                string identity = entry["Identity"] is { Length: > 0 } name ? name : throw new FormatException($"{entry.Path}:Identity must name the PSK identity.");
                keys[identity] = Key(entry, "Key", "KeyHex", "KeyFile") ?? throw new FormatException($"{entry.Path} needs Key, KeyHex or KeyFile for identity '{identity}'.");
            }

            if (keys.Count > 0)
            {
                options.PskKeys = DtlsServerOptions.PskTable(keys);
            }

            endpoints.Add(options);
        }

        return endpoints;
    }

    /// <summary>
    /// Fills <paramref name="options"/> from <paramref name="section"/>: "PskIdentity" with "PskKey", "PskKeyHex" or
    /// "PskKeyFile"; "LocalEndPoint"; the raw public key, certificate and trust settings and the bounds as for a server.
    /// Settings the section does not name are left as they are.
    /// </summary>
    /// <param name="options">The options to fill.</param>
    /// <param name="section">The section ("Coap:Client:Dtls").</param>
    /// <exception cref="FormatException">A value cannot be read; the message names its path (never a key).</exception>
    /// <exception cref="IOException">A file cannot be read; the message names it.</exception>
    public static void ReadClientOptions(DtlsClientOptions options, IConfiguration section)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(section);
        ReadShared(options, section);
        options.PskIdentity = section["PskIdentity"] ?? options.PskIdentity;
        options.PskKey = Key(section, "PskKey", "PskKeyHex", "PskKeyFile") ?? options.PskKey;
        if (section["LocalEndPoint"] is { } local)
        {
            options.LocalEndPoint = IPEndPoint.TryParse(local, out IPEndPoint? endpoint)
                ? endpoint
                : throw new FormatException($"{Path(section, "LocalEndPoint")} is '{local}', which is not ADDRESS:PORT.");
        }
    }

    private static void ReadShared(DtlsOptions options, IConfiguration section)
    {
        options.MaxSessions = Int(section, nameof(DtlsOptions.MaxSessions)) ?? options.MaxSessions;
        options.MaxConcurrentHandshakes = Int(section, nameof(DtlsOptions.MaxConcurrentHandshakes)) ?? options.MaxConcurrentHandshakes;
        options.MaxDatagramSize = Int(section, nameof(DtlsOptions.MaxDatagramSize)) ?? options.MaxDatagramSize;
        options.SessionIdleTimeout = TimeSpanValue(section, nameof(DtlsOptions.SessionIdleTimeout)) ?? options.SessionIdleTimeout;
        options.HandshakeTimeout = TimeSpanValue(section, nameof(DtlsOptions.HandshakeTimeout)) ?? options.HandshakeTimeout;
        if (section[nameof(DtlsOptions.UseConnectionId)] is { } cid)
        {
            options.UseConnectionId = bool.TryParse(cid, out bool use) ? use : throw new FormatException($"{Path(section, nameof(DtlsOptions.UseConnectionId))} is '{cid}', which is neither true nor false.");
        }

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

        // Certificates and trust roots by the keys every secure transport shares (CoapNet.Hosting reads them for coaps+tcp too).
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

    private static int? Int(IConfiguration section, string name)
        => section[name] is { } text
            ? int.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out int value) ? value : throw new FormatException($"{Path(section, name)} is '{text}', which is not a whole number.")
            : null;

    private static TimeSpan? TimeSpanValue(IConfiguration section, string name)
        => section[name] is { } text
            ? TimeSpan.TryParse(text, CultureInfo.InvariantCulture, out TimeSpan value) ? value : throw new FormatException($"{Path(section, name)} is '{text}', which is not a time span such as 00:30:00.")
            : null;

    private static string Path(IConfiguration section, string name) => section is IConfigurationSection s ? s.Path + ":" + name : name;
}
