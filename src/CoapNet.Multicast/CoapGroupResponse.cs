using System.Net;
using CoapNet.Messages;

namespace CoapNet.Multicast;

/// <summary>One member's answer to a group request: who answered, and what.</summary>
/// <param name="Responder">The responder's unicast address and port, which its response came from (RFC 7252 section 8.2).</param>
/// <param name="Response">The response.</param>
public sealed record CoapGroupResponse(IPEndPoint Responder, CoapMessage Response);
