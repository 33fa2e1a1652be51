using CoapNet.Messaging;

namespace CoapNet.Hosting;

/// <summary>
/// The limits of CoAP-over-TCP connections (RFC 8323) as configuration binds them (a "Connections"
/// section); each value left out keeps the default of <see cref="CoapConnectionOptions"/>.
/// </summary>
public sealed class CoapConnectionSettings
{
    /// <summary>How many connections at once.</summary>
    public int? MaxConnections { get; set; }

    /// <summary>How long an idle connection stays open, such as "00:05:00"; "-00:00:00.001" (infinite) keeps it.</summary>
    public TimeSpan? IdleTimeout { get; set; }

    /// <summary>The largest message accepted, in bytes (at least 1152).</summary>
    public int? MaxMessageSize { get; set; }

    /// <summary>How many requests on one connection may be unanswered at once.</summary>
    public int? MaxRequestsInFlight { get; set; }

    /// <summary>How long a new connection waits for the peer's CSM.</summary>
    public TimeSpan? CsmTimeout { get; set; }

    /// <summary>How long a write may wait for a peer that stops reading.</summary>
    public TimeSpan? SendTimeout { get; set; }

    /// <summary>How long a client waits to open a connection.</summary>
    public TimeSpan? ConnectTimeout { get; set; }

    /// <summary>The options with every value set here replacing the default's.</summary>
    /// <returns>The options.</returns>
    public CoapConnectionOptions ToOptions()
    {
        CoapConnectionOptions defaults = new();
        return new CoapConnectionOptions
        {
            MaxConnections = MaxConnections ?? defaults.MaxConnections,
            IdleTimeout = IdleTimeout ?? defaults.IdleTimeout,
            MaxMessageSize = MaxMessageSize ?? defaults.MaxMessageSize,
            MaxRequestsInFlight = MaxRequestsInFlight ?? defaults.MaxRequestsInFlight,
            CsmTimeout = CsmTimeout ?? defaults.CsmTimeout,
            SendTimeout = SendTimeout ?? defaults.SendTimeout,
            ConnectTimeout = ConnectTimeout ?? defaults.ConnectTimeout,
        };
    }
}
