using CoapNet.Channels;
using CoapNet.Messaging.Retransmission;

namespace CoapNet.Messaging.Datagram;

/// <summary>Who cares about the fate of a confirmable message we sent.</summary>
internal interface ITransmissionOwner
{
    /// <summary>The matching ACK arrived (empty, or carrying a piggybacked response).</summary>
    void OnAcknowledged(Messages.CoapMessage acknowledgement);

    /// <summary>The peer answered with RST.</summary>
    void OnReset();

    /// <summary>No ACK or RST after MAX_RETRANSMIT retransmissions and the last timeout.</summary>
    void OnGaveUp(int retransmissions);

    /// <summary>The transport ended the peer's session (DTLS): no ACK can come any more; the transmission has ended.</summary>
    void OnPeerLost(Exception reason);
}

/// <summary>Identifies a message by its peer and Message ID (RFC 7252 section 4.4).</summary>
internal readonly record struct MessageKey(CoapPeer Remote, ushort MessageId) : IPeerScopedKey
{
    /// <inheritdoc/>
    CoapPeer IPeerScopedKey.Peer => Remote;

    /// <inheritdoc/>
    (ulong Value, int Length) IPeerScopedKey.Local => (MessageId, 0);
}

/// <summary>
/// A confirmable message in flight: retransmitted with exponential back-off until the matching
/// ACK or RST arrives or MAX_RETRANSMIT is reached (RFC 7252 section 4.2). Kept by <see cref="RetransmissionQueue"/>, under the message layer's lock.
/// </summary>
internal sealed class Transmission(DatagramMessageLayer layer, MessageKey key, DatagramChannel channel, byte[] datagram, ITransmissionOwner owner, CoapPeerRetransmission retransmission, TimeSpan initialTimeout, long firstSentAt)
{
    /// <summary>The layer that retransmits it: the state its timer hands back, so the timer needs no other object.</summary>
    public DatagramMessageLayer Layer { get; } = layer;

    public MessageKey Key { get; } = key;

    /// <summary>Where the datagram goes, and goes again.</summary>
    public DatagramChannel Channel { get; } = channel;

    public byte[] Datagram { get; } = datagram;

    public ITransmissionOwner Owner { get; } = owner;

    /// <summary>The peer's retransmission policy state: it chose the timeouts and hears the round trip.</summary>
    public CoapPeerRetransmission Retransmission { get; } = retransmission;

    /// <summary>When the datagram was first sent (TimeProvider timestamp), for the round-trip sample.</summary>
    public long FirstSentAt { get; } = firstSentAt;

    /// <summary>The first timeout, which the policy's back-off may depend on (CoCoA's variable back-off factor).</summary>
    public TimeSpan InitialTimeout { get; } = initialTimeout;

    /// <summary>The current timeout; backed off at each retransmission (doubled by default).</summary>
    public TimeSpan Timeout { get; set; } = initialTimeout;

    /// <summary>Retransmissions so far.</summary>
    public int Retransmissions { get; set; }

    public ITimer? Timer { get; set; }

    /// <summary>Set once the transmission ended (ACK, RST, give-up or cancel); late timer ticks then do nothing.</summary>
    public bool Done { get; set; }
}
