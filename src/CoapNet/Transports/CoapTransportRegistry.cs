using CoapNet.Channels;

namespace CoapNet.Transports;

/// <summary>
/// The transports a server or a client knows, by URI scheme: an endpoint's address and a request's URI find theirs here.
/// <see cref="CreateDefault"/> has coap (UDP), coaps (UDP, for DTLS to secure: CoapNet.Dtls's <c>UseDtls</c>), coap+tcp
/// (TCP) and coaps+tcp (TCP, for TLS to secure: <c>UseTls</c> on a server's endpoint; a client's is TLS already); a
/// package adds its own (coap+ws, say) with <see cref="Add"/>, and an application may replace a built-in one the same way.
/// </summary>
/// <remarks>
/// <see cref="Server.CoapServerOptions.Transports"/> and <see cref="Client.CoapClientOptions.Transports"/> each start as
/// the default set; change them before the server or client is made. Scheme names compare without regard to case.
/// </remarks>
public sealed class CoapTransportRegistry
{
    private readonly Dictionary<string, CoapTransportFactory> _factories = new(StringComparer.OrdinalIgnoreCase);
    private readonly List<string> _schemes = [];

    // Made by CreateDefault or CreateEmpty only: the configuration binder's generator, which sees the registries of the options
    // types, would otherwise write code that makes one and assigns it to their read-only properties.
    private CoapTransportRegistry()
    {
    }

    /// <summary>The schemes registered, in the order they were first added.</summary>
    public IReadOnlyList<string> Schemes => _schemes;

    /// <summary>A registry with the four schemes of CoAP over UDP, DTLS, TCP and TLS (RFC 7252 section 6, RFC 8323 section 8).</summary>
    /// <returns>A new registry, the caller's to change.</returns>
    public static CoapTransportRegistry CreateDefault()
    {
        CoapTransportRegistry registry = new();
        registry.Add(new UdpTransportFactory(CoapPeer.UdpScheme, UdpTransportOptions.DefaultPort, secured: false));
        registry.Add(new UdpTransportFactory(CoapPeer.DtlsScheme, 5684, secured: true));
        registry.Add(new TcpTransportFactory(CoapPeer.TcpScheme, TcpConnectionListener.DefaultPort, secured: false));
        registry.Add(new TcpTransportFactory(CoapPeer.TlsScheme, Tls.TlsServerOptions.DefaultPort, secured: true));
        return registry;
    }

    /// <summary>A registry with no scheme, for a server or client that knows only the transports given to it.</summary>
    /// <returns>A new registry.</returns>
    public static CoapTransportRegistry CreateEmpty() => new();

    /// <summary>Registers <paramref name="factory"/> for its scheme, in place of any factory that had the scheme.</summary>
    /// <param name="factory">The factory.</param>
    public void Add(CoapTransportFactory factory)
    {
        ArgumentNullException.ThrowIfNull(factory);
        if (!_factories.ContainsKey(factory.Scheme))
        {
            _schemes.Add(factory.Scheme);
        }

        _factories[factory.Scheme] = factory;
    }

    /// <summary>Removes the factory of <paramref name="scheme"/>, if there is one.</summary>
    /// <param name="scheme">The scheme.</param>
    /// <returns>True when one was removed.</returns>
    public bool Remove(string scheme)
    {
        ArgumentNullException.ThrowIfNull(scheme);
        if (!_factories.Remove(scheme))
        {
            return false;
        }

        _schemes.RemoveAll(s => string.Equals(s, scheme, StringComparison.OrdinalIgnoreCase));
        return true;
    }

    /// <summary>The factory of <paramref name="scheme"/>, or null when none is registered.</summary>
    /// <param name="scheme">The scheme, in any case.</param>
    /// <returns>The factory, or null.</returns>
    public CoapTransportFactory? Find(string scheme)
    {
        ArgumentNullException.ThrowIfNull(scheme);
        return _factories.GetValueOrDefault(scheme);
    }

    /// <summary>The schemes as a list for a message: "coap, coaps, coap+tcp, coaps+tcp".</summary>
    internal string Describe() => _schemes.Count == 0 ? "none" : string.Join(", ", _schemes);
}
