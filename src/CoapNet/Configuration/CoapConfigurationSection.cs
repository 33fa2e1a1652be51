namespace CoapNet.Configuration;

/// <summary>
/// A section of the "Coap" configuration that a package owns, with its keys: CoapNet.Dtls's "Client:Dtls", OSCORE's
/// "Oscore", WebSockets' "WebSockets". Registered as a service (<c>services.AddSingleton(new CoapConfigurationSection(...))</c>)
/// by the package's own registration, so CoapNet.Hosting, which refuses every key under "Coap" it does not know, knows
/// the package's once the package is added.
/// </summary>
public sealed class CoapConfigurationSection
{
    /// <summary>A section at <paramref name="path"/> under "Coap" with <paramref name="keys"/>.</summary>
    /// <param name="path">The path below "Coap", such as "Oscore" or "Client:Dtls" (its parent must be a section the host knows).</param>
    /// <param name="keys">The keys the section may hold.</param>
    public CoapConfigurationSection(string path, CoapConfigurationKeys keys)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        ArgumentNullException.ThrowIfNull(keys);
        Path = path;
        Keys = keys;
    }

    /// <summary>The path below "Coap".</summary>
    public string Path { get; }

    /// <summary>The keys the section may hold.</summary>
    public CoapConfigurationKeys Keys { get; }
}
