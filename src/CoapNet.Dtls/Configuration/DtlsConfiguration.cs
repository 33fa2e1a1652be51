using System.Globalization;
using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Microsoft.Extensions.Configuration;

namespace CoapNet.Dtls.Configuration;

/// <summary>
/// Reads <see cref="DtlsServerOptions"/> and <see cref="DtlsClientOptions"/> from a configuration section whose names
/// are the options' own, with the credentials as text or files: pre-shared keys as text, hexadecimal or a file, raw
/// public keys and certificates as PEM files (a certificate also from the certificate store by thumbprint), trust roots
/// as a PEM bundle. Keys are never put in an error message.
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
    /// "CertificateKeyFile" (or "CertificateThumbprint" in the certificate store, "CertificateStoreName" and
    /// "CertificateStoreLocation"), "TrustedRootsFile"; and the bounds by their option names.
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

        if (File(section, "RawPublicKeyFile") is { } rawKeyFile)
        {
            options.RawPublicKeyPair = Pem(rawKeyFile, Path(section, "RawPublicKeyFile"));
        }

        List<byte[]> trusted = [];
        foreach (IConfigurationSection entry in section.GetSection("TrustedRawPublicKeyFiles").GetChildren())
        {
            using ECDsa key = Pem(entry.Value ?? string.Empty, entry.Path);
            trusted.Add(key.ExportSubjectPublicKeyInfo());
        }

        if (trusted.Count > 0)
        {
            options.TrustedRawPublicKeys = DtlsOptions.RawPublicKeyTable(trusted);
        }

        if (File(section, "CertificateFile") is { } certificateFile)
        {
            string keyFile = File(section, "CertificateKeyFile") ?? certificateFile;
            try
            {
                options.Certificate = X509Certificate2.CreateFromPemFile(certificateFile, keyFile);
            }
            catch (CryptographicException e)
            {
                throw new FormatException($"{Path(section, "CertificateFile")} ('{certificateFile}') with its key ('{keyFile}') is not a PEM certificate and private key: {e.Message}", e);
            }
        }

        if (section["CertificateThumbprint"] is { Length: > 0 } thumbprint)
        {
            options.Certificate = FromStore(section, thumbprint);
        }

        if (File(section, "TrustedRootsFile") is { } rootsFile)
        {
            X509Certificate2Collection roots = [];
            try
            {
                roots.ImportFromPemFile(rootsFile);
            }
            catch (CryptographicException e)
            {
                throw new FormatException($"{Path(section, "TrustedRootsFile")} ('{rootsFile}') is not a PEM certificate bundle: {e.Message}", e);
            }

            options.TrustedRoots = roots;
        }
    }

    // The certificate store: "CertificateThumbprint" in "CertificateStoreName" (default My) of
    // "CertificateStoreLocation" (default CurrentUser), with its private key.
    private static X509Certificate2 FromStore(IConfiguration section, string thumbprint)
    {
        string path = Path(section, "CertificateThumbprint");
        StoreName name = Enum.TryParse(section["CertificateStoreName"] ?? nameof(StoreName.My), ignoreCase: true, out StoreName parsedName)
            ? parsedName
            : throw new FormatException($"{Path(section, "CertificateStoreName")} is '{section["CertificateStoreName"]}', which is not a store name such as My or Root.");
        StoreLocation location = Enum.TryParse(section["CertificateStoreLocation"] ?? nameof(StoreLocation.CurrentUser), ignoreCase: true, out StoreLocation parsedLocation)
            ? parsedLocation
            : throw new FormatException($"{Path(section, "CertificateStoreLocation")} is '{section["CertificateStoreLocation"]}', which is neither CurrentUser nor LocalMachine.");
        using X509Store store = new(name, location);
        store.Open(OpenFlags.ReadOnly | OpenFlags.OpenExistingOnly);
        X509Certificate2Collection found = store.Certificates.Find(X509FindType.FindByThumbprint, thumbprint, validOnly: false);
        try
        {
            foreach (X509Certificate2 certificate in found)
            {
                if (certificate.HasPrivateKey)
                {
                    return new X509Certificate2(certificate);
                }
            }
        }
        finally
        {
            foreach (X509Certificate2 certificate in found)
            {
                certificate.Dispose();
            }
        }

        throw new FormatException($"{path} is '{thumbprint}': no certificate with that thumbprint and its private key is in {location}\\{name}.");
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

        return File(section, file) is { } path ? System.Text.Encoding.UTF8.GetBytes(ReadText(path, Path(section, file)).TrimEnd('\r', '\n')) : null;
    }

    // An EC key from a PEM file: a private key (PKCS#8 or SEC 1, as libcoap's -M takes) or a public key alone.
    private static ECDsa Pem(string file, string path)
    {
        string text = ReadText(file, path);
        ECDsa key = ECDsa.Create();
        try
        {
            key.ImportFromPem(text);
            return key;
        }
        catch (Exception e) when (e is ArgumentException or CryptographicException)
        {
            key.Dispose();
            throw new FormatException($"{path} names '{file}', which holds no PEM EC key: {e.Message}", e);
        }
    }

    private static string? File(IConfiguration section, string name) => section[name] is { Length: > 0 } path ? path : null;

    private static string ReadText(string file, string path)
    {
        try
        {
            return System.IO.File.ReadAllText(file);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or ArgumentException)
        {
            throw new IOException($"{path} names '{file}', which cannot be read: {e.Message}", e);
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
