using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Microsoft.Extensions.Configuration;

namespace CoapNet.Configuration;

/// <summary>
/// Reads the credentials a configuration section names, by the same keys for every secure transport: coaps+tcp (an
/// endpoint's "Tls" section, "Coap:Endpoints:{name}:Tls", and the client's "Coap:Client:Tls", read by CoapNet.Hosting)
/// and coaps (an endpoint's "Dtls" section and "Coap:Client:Dtls", read by CoapNet.Dtls). In the library itself, as
/// Kestrel keeps its certificate loader in the server's core, so both packages read credentials one way and neither
/// needs the other. A value that cannot be used is refused with its configuration path; key material and passwords are
/// never put in a message.
/// </summary>
/// <remarks>
/// The keys: "CertificateFile" (PEM: the certificate first, then any intermediates), "CertificateKeyFile" (its PEM
/// private key, PKCS#8 or the algorithm's own; default the certificate's file), "CertificateKeyPassword" (when that
/// key is encrypted PKCS#8); or "CertificateThumbprint" in "CertificateStoreName" (default My) of
/// "CertificateStoreLocation" (default CurrentUser). Trust roots: "TrustedRootsFile" (a PEM bundle) and
/// "TrustedRootsStoreName" in "TrustedRootsStoreLocation" (default CurrentUser); all the certificates they hold.
/// </remarks>
public static class CoapCredentialConfiguration
{
    /// <summary>
    /// The keys this class reads, for a section that names credentials: "CertificateFile", "CertificateKeyFile",
    /// "CertificateKeyPassword", "CertificateThumbprint", "CertificateStoreName", "CertificateStoreLocation",
    /// "TrustedRootsFile", "TrustedRootsStoreName" and "TrustedRootsStoreLocation".
    /// </summary>
    /// <returns>New keys, the caller's to add to.</returns>
    public static CoapConfigurationKeys Keys()
        => new(
            "CertificateFile", "CertificateKeyFile", "CertificateKeyPassword", "CertificateThumbprint", "CertificateStoreName", "CertificateStoreLocation",
            "TrustedRootsFile", "TrustedRootsStoreName", "TrustedRootsStoreLocation");

    /// <summary>
    /// The certificate with its private key that <paramref name="section"/> names: from "CertificateFile" and
    /// "CertificateKeyFile" (with "CertificateKeyPassword"), or by "CertificateThumbprint" from the certificate store.
    /// </summary>
    /// <param name="section">The section ("Coap:Endpoints:secure:Tls", "Coap:Client:Tls", "Coap:Endpoints:secure:Dtls").</param>
    /// <returns>The certificate, or null when the section names none.</returns>
    /// <exception cref="FormatException">
    /// The files hold no PEM certificate or no private key for it (or the password does not open the key), the store
    /// holds no such certificate with its key, or both sources are named; the message names the path, never the key.
    /// </exception>
    /// <exception cref="IOException">A file cannot be read; the message names its path and the file.</exception>
    public static X509Certificate2? ReadCertificate(IConfiguration section)
    {
        X509Certificate2? certificate = ReadCertificate(section, out X509Certificate2Collection? chain);
        foreach (X509Certificate2 intermediate in chain ?? [])
        {
            intermediate.Dispose();
        }

        return certificate;
    }

    /// <summary>
    /// As <see cref="ReadCertificate(IConfiguration)"/>, with the certificates that follow the first in "CertificateFile": the
    /// intermediates a TLS server sends with its own so that clients can build its chain.
    /// </summary>
    /// <param name="section">The section.</param>
    /// <param name="chain">The intermediates, the caller's to dispose; null when there are none.</param>
    /// <returns>The certificate, or null when the section names none.</returns>
    /// <exception cref="FormatException">As for <see cref="ReadCertificate(IConfiguration)"/>.</exception>
    /// <exception cref="IOException">A file cannot be read; the message names its path and the file.</exception>
    public static X509Certificate2? ReadCertificate(IConfiguration section, out X509Certificate2Collection? chain)
    {
        ArgumentNullException.ThrowIfNull(section);
        (X509Certificate2 Certificate, X509Certificate2Collection? Chain)? read = ReadCertificateWithChain(section);
        chain = read?.Chain;
        return read?.Certificate;
    }

    private static (X509Certificate2 Certificate, X509Certificate2Collection? Chain)? ReadCertificateWithChain(IConfiguration section)
    {
        string? thumbprint = Value(section, "CertificateThumbprint");
        if (ReadFileText(section, "CertificateFile") is not { } certificatePem)
        {
            return thumbprint is null ? null : (FromStore(section, thumbprint), null);
        }

        if (thumbprint is not null)
        {
            throw new FormatException($"{Path(section, "CertificateFile")} and {Path(section, "CertificateThumbprint")} are both set; name the certificate one way.");
        }

        string? keyPem = ReadFileText(section, "CertificateKeyFile");
        string? password = Value(section, "CertificateKeyPassword");

        // The certificates before the key, so that a file that holds none is told apart from a key that does not fit.
        X509Certificate2Collection chain = CertificatesIn(certificatePem, section, "CertificateFile");
        chain[0].Dispose();
        chain.RemoveAt(0);
        try
        {
            X509Certificate2 certificate = password is null
                ? X509Certificate2.CreateFromPem(certificatePem, keyPem ?? certificatePem)
                : X509Certificate2.CreateFromEncryptedPem(certificatePem, keyPem ?? certificatePem, password);
            return (certificate, chain.Count > 0 ? chain : null);
        }
        catch (Exception e) when (e is CryptographicException or ArgumentException)
        {
            foreach (X509Certificate2 intermediate in chain)
            {
                intermediate.Dispose();
            }

            throw KeyError(section, keyPem ?? certificatePem, keyPem is not null, password is not null, e);
        }
    }

    /// <summary>
    /// The trust roots <paramref name="section"/> names: every certificate of the PEM bundle "TrustedRootsFile" and of
    /// the store "TrustedRootsStoreName" (in "TrustedRootsStoreLocation"). A peer's certificate must chain to one of them.
    /// </summary>
    /// <param name="section">The section.</param>
    /// <returns>The roots, or null when the section names none (the transport's default: the system's store over TLS).</returns>
    /// <exception cref="FormatException">The file or the store holds no certificate, or the store cannot be opened; the message names the path.</exception>
    /// <exception cref="IOException">The file cannot be read; the message names its path and the file.</exception>
    public static X509Certificate2Collection? ReadTrustedRoots(IConfiguration section)
    {
        ArgumentNullException.ThrowIfNull(section);
        X509Certificate2Collection? roots = null;
        if (ReadFileText(section, "TrustedRootsFile") is { } pem)
        {
            roots = CertificatesIn(pem, section, "TrustedRootsFile");
        }

        if (Value(section, "TrustedRootsStoreName") is not null)
        {
            using X509Store store = OpenStore(section, "TrustedRootsStoreName", "TrustedRootsStoreLocation", "TrustedRootsStoreName");
            X509Certificate2Collection stored = store.Certificates;
            if (stored.Count == 0)
            {
                throw new FormatException($"{Path(section, "TrustedRootsStoreName")} names the store {store.Location}\\{store.Name}, which holds no certificate: trusting none would refuse every peer.");
            }

            roots ??= [];
            roots.AddRange(stored);
        }

        return roots;
    }

    /// <summary>The text of the file that the key <paramref name="name"/> of <paramref name="section"/> names.</summary>
    /// <param name="section">The section.</param>
    /// <param name="name">The key, such as "CertificateKeyFile" or a list entry's index.</param>
    /// <returns>The file's text, or null when the key is absent or empty.</returns>
    /// <exception cref="IOException">The file cannot be read; the message names the path and the file, not what it holds.</exception>
    public static string? ReadFileText(IConfiguration section, string name)
    {
        ArgumentNullException.ThrowIfNull(section);
        ArgumentException.ThrowIfNullOrEmpty(name);
        if (Value(section, name) is not { } file)
        {
            return null;
        }

        try
        {
            return File.ReadAllText(file);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or ArgumentException or NotSupportedException)
        {
            throw new IOException($"{Path(section, name)} names '{file}', which cannot be read: {e.Message}", e);
        }
    }

    // What is wrong with the key, by the key that names its file. The exception's own message says which (no key, a key
    // of another certificate, a password that does not open it) and quotes nothing of the key; an encrypted key read
    // without a password is told by its PEM label alone.
    private static FormatException KeyError(IConfiguration section, string keyPem, bool ownFile, bool hasPassword, Exception e)
    {
        string file = ownFile ? "CertificateKeyFile" : "CertificateFile";
        string opened = hasPassword ? $" that {Path(section, "CertificateKeyPassword")} opens"
            : keyPem.Contains("-----BEGIN ENCRYPTED PRIVATE KEY-----", StringComparison.Ordinal) ? $" usable without a password (it is encrypted: set {Path(section, "CertificateKeyPassword")})"
            : string.Empty;
        string source = ownFile ? $"for the certificate of {Path(section, "CertificateFile")}" : $"and {Path(section, "CertificateKeyFile")} names no key file";
        return new FormatException($"{Path(section, file)} ('{section[file]}') holds no PEM private key{opened} {source}: {e.Message}", e);
    }

    // Every certificate of a PEM text, at least one (an empty trust list would trust nobody, an empty certificate file
    // is a mistake); other PEM blocks (a key beside the certificate) are passed over.
    private static X509Certificate2Collection CertificatesIn(string pem, IConfiguration section, string name)
    {
        X509Certificate2Collection certificates = [];
        try
        {
            certificates.ImportFromPem(pem);
        }
        catch (CryptographicException e)
        {
            throw new FormatException($"{Path(section, name)} ('{section[name]}') holds a certificate that cannot be read: {e.Message}", e);
        }

        return certificates.Count > 0 ? certificates : throw new FormatException($"{Path(section, name)} ('{section[name]}') holds no PEM certificate (-----BEGIN CERTIFICATE-----).");
    }

    // The certificate with that thumbprint and its private key, copied out of the store so that closing it keeps it.
    private static X509Certificate2 FromStore(IConfiguration section, string thumbprint)
    {
        using X509Store store = OpenStore(section, "CertificateStoreName", "CertificateStoreLocation", "CertificateThumbprint");
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

        string what = found.Count == 0 ? "no certificate with that thumbprint" : "the certificate with that thumbprint, but not its private key";
        throw new FormatException($"{Path(section, "CertificateThumbprint")} is '{thumbprint}': {store.Location}\\{store.Name} holds {what}.");
    }

    // A store by name (My, Root, or one of the application's own) and location (CurrentUser or LocalMachine), read-only;
    // one that does not exist is an error, named by the key that looks in it, rather than an empty store.
    private static X509Store OpenStore(IConfiguration section, string nameKey, string locationKey, string forKey)
    {
        string name = Value(section, nameKey) ?? nameof(StoreName.My);
        StoreLocation location = Value(section, locationKey) is not { } text ? StoreLocation.CurrentUser
            : Enum.TryParse(text, ignoreCase: true, out StoreLocation parsed) && Enum.IsDefined(parsed) ? parsed
            : throw new FormatException($"{Path(section, locationKey)} is '{text}', which is neither CurrentUser nor LocalMachine.");

        // StoreName's members are the names of the system's stores, except CertificateAuthority, whose store is "CA".
        X509Store store = Enum.TryParse(name, ignoreCase: true, out StoreName known) && Enum.IsDefined(known) ? new(known, location) : new(name, location);
        try
        {
            store.Open(OpenFlags.ReadOnly | OpenFlags.OpenExistingOnly);
            return store;
        }
        catch (CryptographicException e)
        {
            store.Dispose();
            throw new FormatException($"{Path(section, forKey)}: the certificate store {location}\\{name} ({Path(section, nameKey)}, {Path(section, locationKey)}) cannot be opened: {e.Message}", e);
        }
    }

    private static string? Value(IConfiguration section, string name) => section[name] is { Length: > 0 } value ? value : null;

    private static string Path(IConfiguration section, string name) => section is IConfigurationSection s ? s.Path + ":" + name : name;
}
