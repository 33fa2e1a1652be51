using System.Text;
using CoapNet.Messages;

namespace CoapNet.Tests.Server;

/// <summary>What a client under test reports about the response.</summary>
/// <param name="Code">The response code.</param>
/// <param name="Payload">The payload; for an error, the diagnostic text.</param>
/// <param name="ContentFormat">The Content-Format option, or null.</param>
/// <param name="ETag">The ETag option, or null.</param>
/// <param name="LocationPath">The Location-Path options, one per segment (empty when absent).</param>
/// <param name="Separate">True when the response came in its own CON or NON rather than piggybacked in the ACK.</param>
internal sealed record SampleReply(CoapCode Code, byte[] Payload, ushort? ContentFormat, byte[]? ETag, IReadOnlyList<string> LocationPath, bool Separate)
{
    public string Text => Encoding.UTF8.GetString(Payload);
}
