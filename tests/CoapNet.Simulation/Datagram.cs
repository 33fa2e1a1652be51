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
/// <param name="Dropped">True when a drop filter of the link discarded it.</param>
public sealed record Datagram(int Sequence, TimeSpan Time, IPEndPoint From, IPEndPoint To, int LinkOrdinal, byte[] Bytes, CoapMessage? Message, bool Dropped)
{
    /// <summary>The parsed message; fails the test when the bytes are malformed.</summary>
    public CoapMessage Parsed => Message ?? throw new InvalidOperationException($"Datagram {Sequence} is not a well-formed CoAP message: {Convert.ToHexString(Bytes)}");

    /// <summary>"#3 +2.5s 10.0.0.1:5683 -> 10.0.0.2:5683 CON 0.01 GET MID=..." for assertion messages.</summary>
    public override string ToString()
        => $"#{Sequence} +{Time.TotalSeconds:0.###}s {From} -> {To} {(Message is null ? Convert.ToHexString(Bytes) : Message.ToString())}{(Dropped ? " (dropped)" : string.Empty)}";
}
