using System.Net;

namespace CoapNet.Messaging;

/// <summary>
/// What an endpoint knows of the network path to some of its peers (<see cref="CoapEndpointOptions.Paths"/>): the largest
/// IP packet that crosses it whole, and how long the tokens of requests to those peers are. For constrained links
/// (NB-IoT, LTE-M, LoRaWAN backhauls, 6LoWPAN), where every byte of a block costs radio time and a block that is one byte
/// too large travels as two fragments, each lost on its own; no discovery is made, the values are what you configure.
/// Peers on no configured path are treated as the defaults say (the general Internet).
/// </summary>
/// <remarks>
/// <para>
/// <b>Which peers.</b> <see cref="Network"/> names them by address prefix; a peer matches the path with the longest
/// prefix that contains its address (an IPv4 peer reached over a dual-stack socket is matched as IPv4). Two paths may not
/// name the same prefix.
/// </para>
/// <para>
/// <b>Block sizes.</b> With <see cref="Mtu"/>, every block-wise message to the peer fits one IP packet: the IP header
/// (20 bytes for IPv4, 40 for IPv6), UDP's 8 and, for <c>coaps</c>, a DTLS 1.2 record header with the largest AEAD
/// expansion (13 + 8 + 16 bytes, RFC 6347 section 4.1) are counted. A server cuts a response that does not fit into
/// Block2 blocks (RFC 7959) of the largest size with which every block, its token and options included, fits; it sends
/// Size2 there only when the request asks for it (RFC 7959 section 4), so that the first block is no larger than the
/// rest. A client sends a request body that does not fit in Block1 blocks sized the same way, and asks for downloads in
/// blocks that fit (an early Block2 on a GET or FETCH, RFC 7959 section 2.4), counting its token and the Block2 option:
/// the server, which knows its own options, may answer with smaller ones. Q-Block1 and Q-Block2 transfers (RFC 9177) are
/// sized the same way, their Q-Block option, ETag, Size1 or Size2 and Request-Tag counted, since RFC 9177 section 4.4 puts
/// them in every block. Over connections (TCP, TLS) the path is not used: they carry their own segmentation.
/// </para>
/// <para>
/// <b>Tokens.</b> With <see cref="TokenLength"/> of 4 to 8 bytes, a request's token is that many random bytes, as the
/// default 8 are (RFC 7252 section 5.3.1 asks for at least 32 bits of randomness on the general Internet). From 1 to 3
/// bytes it cannot be unguessable, so it is a sequence number instead, as RFC 9175 section 4.2 suggests: one counter per
/// endpoint, shared by every peer on such a path, written in as few bytes as it takes and never fewer than
/// <see cref="TokenLength"/>. The counter never wraps: when the values of a length are used up, the next token is one
/// byte longer (after 256 requests with 1-byte tokens, after 65,536 more with 2 bytes), so no token is ever used twice
/// while the endpoint runs, and so never twice within a DTLS session (RFC 9175 section 4.2), and a response is never
/// matched to the wrong request. Use short tokens only where an off-path attacker cannot inject responses: a private
/// network (an operator's APN), or a secured one (DTLS, OSCORE).
/// </para>
/// </remarks>
public sealed class CoapPathOptions
{
    /// <summary>The IP header of an IPv4 packet without options, and UDP's header (RFC 791, RFC 768).</summary>
    internal const int UdpIpv4Framing = 20 + 8;

    /// <summary>The IPv6 header without extension headers, and UDP's header (RFC 8200, RFC 768).</summary>
    internal const int UdpIpv6Framing = 40 + 8;

    /// <summary>
    /// A DTLS 1.2 record around a CoAP message (RFC 6347 section 4.1): its 13-byte header, and the largest expansion of the
    /// AEAD suites CoapNet.Dtls negotiates, an 8-byte explicit nonce and a 16-byte tag (RFC 6655, RFC 5288).
    /// </summary>
    internal const int DtlsFraming = 13 + 8 + 16;

    /// <summary>The smallest CoAP message a path must carry whole, as <see cref="CoapEndpointOptions.MaxMessageSize"/>'s least.</summary>
    private const int MinMessageBudget = 64;

    /// <summary>
    /// The peers this path leads to: an address prefix such as "10.64.0.0/10" or "2001:db8:1::/48", or a single address
    /// ("192.0.2.7", a /32 or /128). Required.
    /// </summary>
    public string Network { get; set; } = string.Empty;

    /// <summary>
    /// The largest IP packet, in bytes, that crosses the path without being fragmented (its MTU), or null when it is not
    /// known (block sizes then follow <see cref="Blockwise.BlockwiseOptions.BlockSize"/> and the message size alone). At
    /// least what leaves 64 bytes for the CoAP message: 92 on an IPv4 path, 112 on an IPv6 one. Below IPv6's minimum of
    /// 1280 (RFC 8200 section 5) it is the MTU of a link that fragments below IP (6LoWPAN), which blocks then avoid.
    /// </summary>
    public int? Mtu { get; set; }

    /// <summary>
    /// The length in bytes of the tokens of requests to these peers, 1 to 8, or null for the endpoint's
    /// (<see cref="CoapEndpointOptions.TokenLength"/>). 4 to 8: random tokens of that length; 1 to 3: a counter that never
    /// wraps and grows a byte when a length is used up (see the remarks). A server ignores it: tokens are the client's.
    /// </summary>
    public int? TokenLength { get; set; }

    /// <summary>Checks the path and returns its prefix.</summary>
    /// <exception cref="ArgumentException">A setting is missing or out of range; the message names it.</exception>
    internal IPNetwork Validate()
    {
        IPNetwork network = ParseNetwork(Network);
        if (Mtu is null && TokenLength is null)
        {
            throw new ArgumentException($"The path to {Network} sets neither Mtu nor TokenLength: it would change nothing.", nameof(Mtu));
        }

        int framing = network.BaseAddress.AddressFamily == System.Net.Sockets.AddressFamily.InterNetworkV6 ? UdpIpv6Framing : UdpIpv4Framing;
        if (Mtu is int mtu && (mtu - framing < MinMessageBudget || mtu > ushort.MaxValue))
        {
            throw new ArgumentException(
                $"The path to {Network} has an Mtu of {mtu}: it must leave at least {MinMessageBudget} bytes for a CoAP message after {framing} bytes of IP and UDP headers ({MinMessageBudget + framing}), and be at most 65535.",
                nameof(Mtu));
        }

        if (TokenLength is < 1 or > 8)
        {
            throw new ArgumentException($"The path to {Network} has a TokenLength of {TokenLength}: tokens are 1 to 8 bytes (RFC 7252 section 5.3.1).", nameof(TokenLength));
        }

        return network;
    }

    private static IPNetwork ParseNetwork(string? text)
    {
        if (string.IsNullOrWhiteSpace(text))
        {
            throw new ArgumentException("A path's Network is required: an address prefix such as \"10.64.0.0/10\", or an address.", nameof(Network));
        }

        int slash = text.IndexOf('/', StringComparison.Ordinal);
        if (IPNetwork.TryParse(text, out IPNetwork network)
            && IPAddress.TryParse(text.AsSpan(0, slash < 0 ? text.Length : slash), out IPAddress? written)
            && written.Equals(network.BaseAddress))
        {
            // Some runtimes clear bits past the prefix silently ("10.0.0.1/8" as 10.0.0.0/8): such a prefix is a typo, refused below.
            return Normalize(network);
        }

        if (IPAddress.TryParse(text, out IPAddress? address))
        {
            address = Unmapped(address);
            return new IPNetwork(address, address.AddressFamily == System.Net.Sockets.AddressFamily.InterNetworkV6 ? 128 : 32);
        }

        throw new ArgumentException(
            $"A path's Network '{text}' is neither an address prefix (such as \"10.64.0.0/10\" or \"2001:db8::/32\", with no bits set past the prefix) nor an address.",
            nameof(Network));
    }

    /// <summary>An IPv4-mapped IPv6 prefix (::ffff:a.b.c.d/n, n at least 96) as the IPv4 prefix it stands for.</summary>
    private static IPNetwork Normalize(IPNetwork network)
        => network.BaseAddress.IsIPv4MappedToIPv6 && network.PrefixLength >= 96
            ? new IPNetwork(network.BaseAddress.MapToIPv4(), network.PrefixLength - 96)
            : network;

    /// <summary>An IPv4 address reached over a dual-stack socket (::ffff:a.b.c.d) as the IPv4 address it is.</summary>
    internal static IPAddress Unmapped(IPAddress address) => address.IsIPv4MappedToIPv6 ? address.MapToIPv4() : address;
}
