using System.Net;
using CoapNet.Messages;

namespace CoapNet.Simulation;

/// <summary>One datagram an <see cref="InMemoryNetwork"/> carried (or dropped).</summary>
/// <param name="Sequence">The network-wide send order, from 1.</param>
/// <param name="Time">The virtual time of the send, since the network was created.</param>
/// <param name="From">The sender.</param>
/// <param name="To">The destination.</param>
/// <param name="LinkOrdinal">The send order on the From-to-To link, from 1.</param>
/// <param name="Bytes">The bytes sent.</param>
/// <param name="Message">The bytes parsed as a CoAP datagram, or null when they are malformed.</param>
/// <param name="Dropped">True when it never arrived: a drop filter of the link discarded it, or a simulated link dropped or lost it (see <paramref name="Drop"/>).</param>
/// <param name="ArrivesAt">On a simulated link, when it arrives (since the network was created); null when it is dropped or the link is not simulated.</param>
/// <param name="Drop">Why it did not arrive.</param>
public sealed record Datagram(int Sequence, TimeSpan Time, IPEndPoint From, IPEndPoint To, int LinkOrdinal, byte[] Bytes, CoapMessage? Message, bool Dropped, TimeSpan? ArrivesAt = null, LinkDrop Drop = LinkDrop.None)
{
    /// <summary>The parsed message; fails the test when the bytes are malformed.</summary>
    public CoapMessage Parsed => Message ?? throw new InvalidOperationException($"Datagram {Sequence} is not a well-formed CoAP message: {Convert.ToHexString(Bytes)}");

    /// <summary>"#3 +2.5s 10.0.0.1:5683 -> 10.0.0.2:5683 CON 0.01 GET MID=..." for assertion messages.</summary>
    public override string ToString()
        => $"#{Sequence} +{Time.TotalSeconds:0.###}s {From} -> {To} {(Message is null ? Convert.ToHexString(Bytes) : Message.ToString())}{(Dropped ? Drop switch { LinkDrop.Buffer => " (dropped: buffer full)", LinkDrop.Loss => " (lost)", _ => " (dropped)" } : ArrivesAt is { } at ? $" (arrives +{at.TotalSeconds:0.###}s)" : string.Empty)}";
}
