using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;

namespace CoapNet.Transports;

/// <summary>
/// The source a per-address bound counts by: an IPv4 address (also when it arrives mapped into IPv6 on a dual-stack
/// socket), or the /64 prefix of an IPv6 address. One host on IPv6 commonly holds a whole /64 (RFC 4291 section 2.5.1:
/// interface identifiers are 64 bits; SLAAC and privacy addresses pick any of them), so counting by the full address
/// would let it take a new place per address.
/// </summary>
internal readonly record struct AddressGroup(ulong Prefix, bool IsIPv6)
{
    /// <summary>The group of <paramref name="address"/>.</summary>
    public static AddressGroup Of(IPAddress address)
    {
        ArgumentNullException.ThrowIfNull(address);
        if (address.IsIPv4MappedToIPv6)
        {
            address = address.MapToIPv4();
        }

        Span<byte> bytes = stackalloc byte[16];
        address.TryWriteBytes(bytes, out int written);
        return address.AddressFamily == AddressFamily.InterNetworkV6 && written == 16
            ? new AddressGroup(BinaryPrimitives.ReadUInt64BigEndian(bytes), IsIPv6: true)
            : new AddressGroup(BinaryPrimitives.ReadUInt32BigEndian(bytes), IsIPv6: false);
    }

    /// <summary>"192.0.2.7" or "2001:db8:1:2::/64", for log lines.</summary>
    public override string ToString()
    {
        Span<byte> bytes = stackalloc byte[16];
        bytes.Clear();
        if (!IsIPv6)
        {
            BinaryPrimitives.WriteUInt32BigEndian(bytes, (uint)Prefix);
            return new IPAddress(bytes[..4]).ToString();
        }

        BinaryPrimitives.WriteUInt64BigEndian(bytes, Prefix);
        return new IPAddress(bytes).ToString() + "/64";
    }
}
