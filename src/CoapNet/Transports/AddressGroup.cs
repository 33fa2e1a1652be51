using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;

namespace CoapNet.Transports;

/// <summary>
/// The source a per-address bound counts by: an IPv4 address (also when it arrives mapped into IPv6 on a dual-stack
/// socket), or the /64 prefix of an IPv6 address. One host on IPv6 commonly holds a whole /64 (RFC 4291 section 2.5.1:
/// interface identifiers are 64 bits; SLAAC and privacy addresses pick any of them), so counting by the full address
/// would let it take a new place per address. Public so that a transport in a package of its own bounds its peers the
/// same way (see <see cref="AdmissionTable{T}"/>).
/// </summary>
public readonly struct AddressGroup : IEquatable<AddressGroup>
{
    private readonly ulong _prefix;
    private readonly bool _isIPv6;

    private AddressGroup(ulong prefix, bool isIPv6)
    {
        _prefix = prefix;
        _isIPv6 = isIPv6;
    }

    /// <summary>Whether two groups are the same source.</summary>
    public static bool operator ==(AddressGroup left, AddressGroup right) => left.Equals(right);

    /// <summary>Whether two groups are different sources.</summary>
    public static bool operator !=(AddressGroup left, AddressGroup right) => !left.Equals(right);

    /// <summary>The group of <paramref name="address"/>.</summary>
    /// <param name="address">An IPv4 or IPv6 address.</param>
    /// <returns>Its IPv4 address, or its IPv6 /64.</returns>
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
            ? new AddressGroup(BinaryPrimitives.ReadUInt64BigEndian(bytes), isIPv6: true)
            : new AddressGroup(BinaryPrimitives.ReadUInt32BigEndian(bytes), isIPv6: false);
    }

    /// <inheritdoc/>
    public bool Equals(AddressGroup other) => _prefix == other._prefix && _isIPv6 == other._isIPv6;

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is AddressGroup other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => HashCode.Combine(_prefix, _isIPv6);

    /// <summary>"192.0.2.7" or "2001:db8:1:2::/64", for log lines.</summary>
    public override string ToString()
    {
        Span<byte> bytes = stackalloc byte[16];
        bytes.Clear();
        if (!_isIPv6)
        {
            BinaryPrimitives.WriteUInt32BigEndian(bytes, (uint)_prefix);
            return new IPAddress(bytes[..4]).ToString();
        }

        BinaryPrimitives.WriteUInt64BigEndian(bytes, _prefix);
        return new IPAddress(bytes).ToString() + "/64";
    }
}
