namespace CoapNet.Observe;

/// <summary>Settings of a server's observations (RFC 7641): how many it keeps and how notifications travel.</summary>
public sealed class ObserveOptions
{
    /// <summary>
    /// The most observations the server keeps at once, across every peer and transport (default 10,000).
    /// A registration past it gets the plain response without Observe, which the client reads as "not
    /// observed" (RFC 7641 section 4.1).
    /// </summary>
    public int MaxObservations { get; set; } = 10_000;

    /// <summary>The most observations one peer (address, port and transport) may hold (default 100); past it, a plain response.</summary>
    public int MaxObservationsPerPeer { get; set; } = 100;

    /// <summary>
    /// The most observations one device may hold across all its sessions and transports (default <see cref="int.MaxValue"/>:
    /// no bound but the others). A device is the identity its secure transport authenticated
    /// (<see cref="Channels.CoapPeer.Identity"/>: a device that reconnects is a new peer, but the same identity), or for an
    /// unsecured peer its source address (an IPv4 address, an IPv6 /64), so every client behind one address shares it; past
    /// it, a plain response (RFC 7641 section 4.1). For a fleet: <see cref="MaxObservationsPerPeer"/> bounds a session,
    /// this bounds the device.
    /// </summary>
    public int MaxObservationsPerIdentity { get; set; } = int.MaxValue;

    /// <summary>
    /// Over UDP, a notification goes as CON when the last proof that the observer is alive (its
    /// registration request, or the ACK of a CON notification) is older than this (default 24 hours,
    /// RFC 7641 section 4.5), and as NON otherwise.
    /// </summary>
    public TimeSpan ConfirmableInterval { get; set; } = TimeSpan.FromHours(24);

    /// <summary>
    /// Over UDP, a notification also goes as CON after this many NON ones without an acknowledged CON
    /// (default 100; 0 turns the count off), so an observer that went away without deregistering is
    /// found (its CON goes unacknowledged) long before <see cref="ConfirmableInterval"/> passes.
    /// </summary>
    public int ConfirmableEvery { get; set; } = 100;

    /// <summary>Over UDP, send every notification as CON (default false: NON, with a CON per <see cref="ConfirmableInterval"/>).</summary>
    public bool ConfirmableNotifications { get; set; }

    internal void Validate()
    {
        if (MaxObservations < 0 || MaxObservationsPerPeer < 0 || MaxObservationsPerIdentity < 0 || ConfirmableEvery < 0)
        {
            throw new ArgumentException("MaxObservations, MaxObservationsPerPeer, MaxObservationsPerIdentity and ConfirmableEvery must not be negative.", nameof(MaxObservations));
        }

        if (ConfirmableInterval <= TimeSpan.Zero)
        {
            throw new ArgumentException("ConfirmableInterval must be positive.", nameof(ConfirmableInterval));
        }
    }
}
