using System.Net;
using CoapNet.Messages;

namespace CoapNet.Tests.Infrastructure;

/// <summary>A datagram a <see cref="TestPeer"/> received.</summary>
/// <param name="From">The sender.</param>
/// <param name="Bytes">A copy of the bytes.</param>
/// <param name="Message">The bytes parsed as a CoAP datagram, or null when they are malformed.</param>
public sealed record ReceivedDatagram(IPEndPoint From, byte[] Bytes, CoapMessage? Message)
{
    /// <summary>The parsed message; fails the test when the bytes are malformed.</summary>
    public CoapMessage Parsed => Message ?? throw new InvalidOperationException($"Received bytes are not a well-formed CoAP message: {Convert.ToHexString(Bytes)}");

    /// <inheritdoc/>
    public override string ToString() => $"from {From}: {(Message is null ? Convert.ToHexString(Bytes) : Message.ToString())}";
}
