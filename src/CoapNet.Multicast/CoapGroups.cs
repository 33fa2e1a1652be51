using System.Net;
using System.Net.Sockets;

namespace CoapNet.Multicast;

/// <summary>The groups RFC 7252 section 12.8 registers for CoAP ("All CoAP Nodes"), and what makes an address a group.</summary>
public static class CoapGroups
{
    /// <summary>224.0.1.187: All CoAP Nodes, IPv4 (RFC 7252 section 12.8).</summary>
    public static IPAddress AllCoapNodesIPv4 { get; } = IPAddress.Parse("224.0.1.187");

    /// <summary>ff02::fd: All CoAP Nodes, IPv6 link-local scope (RFC 7252 section 12.8); a sender names the link with a zone.</summary>
    public static IPAddress AllCoapNodesLinkLocal { get; } = IPAddress.Parse("ff02::fd");

    /// <summary>ff05::fd: All CoAP Nodes, IPv6 site-local scope (RFC 7252 section 12.8).</summary>
    public static IPAddress AllCoapNodesSiteLocal { get; } = IPAddress.Parse("ff05::fd");

    /// <summary>True when <paramref name="address"/> is a multicast address: 224.0.0.0/4 or ff00::/8.</summary>
    /// <param name="address">The address.</param>
    /// <returns>True for a group address.</returns>
    public static bool IsGroup(IPAddress address)
    {
        ArgumentNullException.ThrowIfNull(address);
        if (address.AddressFamily == AddressFamily.InterNetworkV6)
        {
            return address.IsIPv6Multicast;
        }

        Span<byte> bytes = stackalloc byte[4];
        return address.TryWriteBytes(bytes, out _) && (bytes[0] & 0xF0) == 0xE0;
    }
}
