using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Serialization;
using CoapNet.Transports;

namespace CoapNet.Multicast;

/// <summary>
/// Sends one request to a group and gathers every member's response as it arrives, with the member's address, over a
/// time window (RFC 7252 section 8.2; draft-ietf-core-groupcomm-bis section 3.1). The request is NON with a fresh token,
/// and the token stays matched for the whole window: every response that carries it is a member's answer.
/// </summary>
/// <remarks>
/// Each group request has a UDP socket of its own, made and sent from when <see cref="SendAsync(CoapMessage, Uri, TimeSpan, CancellationToken)"/>
/// is called (on the caller's thread, so in the caller's network namespace) and closed when the window ends. A member
/// that answers with a CON is acknowledged; a member's retransmission is reported once. A larger body than one
/// response (Block2) is the caller's to fetch from that member by unicast (RFC 7959 section 2.8).
/// </remarks>
/// <param name="options">The hop limit and the interface; null for the defaults (hop limit 1, the OS's route).</param>
public sealed class CoapGroupClient(CoapGroupClientOptions? options = null)
{
    private readonly CoapGroupClientOptions _options = options ?? new();

    /// <summary>Sends a GET for <paramref name="uri"/> to its group (coap://224.0.1.187/.well-known/core, coap://[ff02::fd%eth0]/...).</summary>
    /// <param name="uri">The group's URI: a multicast address as its host.</param>
    /// <param name="window">How long responses are gathered.</param>
    /// <param name="cancellationToken">Ends the gathering early, with an <see cref="OperationCanceledException"/>.</param>
    /// <returns>Each response as it arrives; the sequence ends with the window.</returns>
    /// <exception cref="ArgumentException">The URI is not a coap:// URI of a multicast address, or the window is not positive.</exception>
    public IAsyncEnumerable<CoapGroupResponse> GetAsync(Uri uri, TimeSpan window, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(uri);
        return SendAsync(CoapMessage.CreateRequest(CoapCode.Get, uri, CoapMessageType.NonConfirmable), uri, window, cancellationToken);
    }

    /// <summary>
    /// Sends <paramref name="request"/> to the group of <paramref name="group"/> now, and yields each response as it arrives.
    /// The client sets the request's type (NON: RFC 7252 section 8.1), Message ID and token.
    /// </summary>
    /// <param name="request">The request, with its path and query options (<see cref="CoapMessage.CreateRequest"/>).</param>
    /// <param name="group">Where it goes: coap://, a multicast address, a port (5683 when none), an IPv6 zone for a link-local group.</param>
    /// <param name="window">How long responses are gathered.</param>
    /// <param name="cancellationToken">Ends the gathering early, with an <see cref="OperationCanceledException"/>.</param>
    /// <returns>Each response as it arrives; the sequence ends with the window. Enumerate it: its end closes the socket.</returns>
    /// <exception cref="ArgumentException">The request is not a request, the URI is not a coap:// URI of a multicast address, or the window is not positive.</exception>
    public IAsyncEnumerable<CoapGroupResponse> SendAsync(CoapMessage request, Uri group, TimeSpan window, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(request);
        ArgumentNullException.ThrowIfNull(group);
        if (request.Code.Class != 0 || request.Code == CoapCode.Empty)
        {
            throw new ArgumentException($"A group request needs a method code, not {request.Code}.", nameof(request));
        }

        if (window <= TimeSpan.Zero)
        {
            throw new ArgumentException("The window must be positive.", nameof(window));
        }

        IPEndPoint destination = Destination(group);
        request.Type = CoapMessageType.NonConfirmable;
        request.MessageId = (ushort)RandomNumberGenerator.GetInt32(ushort.MaxValue + 1);
        request.Token = RandomNumberGenerator.GetBytes(CoapMessage.MaxTokenLength);
        byte[] datagram = CoapMessageSerializer.Udp.Serialize(request);

        Socket socket = Open(destination);
        try
        {
            socket.SendTo(datagram, destination);
        }
        catch
        {
            socket.Dispose();
            throw;
        }

        return GatherAsync(socket, request.Token, window, cancellationToken);
    }

    /// <summary>
    /// Sends <paramref name="request"/> to the group of <paramref name="group"/>, as
    /// <see cref="SendAsync(CoapMessage, Uri, TimeSpan, CancellationToken)"/>, and calls <paramref name="onResponse"/> with each
    /// response as it arrives, until the window ends.
    /// </summary>
    /// <param name="request">The request.</param>
    /// <param name="group">Where it goes.</param>
    /// <param name="window">How long responses are gathered.</param>
    /// <param name="onResponse">Called with each response, one at a time.</param>
    /// <param name="cancellationToken">Ends the gathering early, with an <see cref="OperationCanceledException"/>.</param>
    /// <returns>How many responses there were.</returns>
    /// <exception cref="ArgumentException">As for the other form.</exception>
    public async Task<int> SendAsync(CoapMessage request, Uri group, TimeSpan window, Action<CoapGroupResponse> onResponse, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(onResponse);
        int count = 0;
        await foreach (CoapGroupResponse response in SendAsync(request, group, window, cancellationToken).ConfigureAwait(false))
        {
            onResponse(response);
            count++;
        }

        return count;
    }

    /// <summary>The group's address and port, with the zone the URI names (RFC 6874: %25 or a bare % before it).</summary>
    private static IPEndPoint Destination(Uri group)
    {
        if (!string.Equals(group.Scheme, CoapPeer.UdpScheme, StringComparison.OrdinalIgnoreCase))
        {
            throw new ArgumentException($"A group is reached over coap:// only, not {group.Scheme}:// (DTLS secures one peer, not a group).", nameof(group));
        }

        string host = group.DnsSafeHost.Replace("%25", "%", StringComparison.Ordinal);
        if (!IPAddress.TryParse(host, out IPAddress? address) || !CoapGroups.IsGroup(address))
        {
            throw new ArgumentException($"{group} does not name a multicast address (such as 224.0.1.187 or [ff02::fd%eth0]).", nameof(group));
        }

        return new IPEndPoint(address, group.Port < 0 ? UdpTransportOptions.DefaultPort : group.Port);
    }

    private Socket Open(IPEndPoint destination)
    {
        bool v4 = destination.AddressFamily == AddressFamily.InterNetwork;
        int? index = _options.Interface is { } name ? MulticastSockets.InterfaceIndexes([name])[0] : null;
        Socket socket = new(destination.AddressFamily, SocketType.Dgram, ProtocolType.Udp);
        try
        {
            SocketOptionLevel level = v4 ? SocketOptionLevel.IP : SocketOptionLevel.IPv6;
            socket.SetSocketOption(level, SocketOptionName.MulticastTimeToLive, _options.HopLimit);
            if (index is int i)
            {
                // IP_MULTICAST_IF takes the index in network order when it is not an address; IPV6_MULTICAST_IF the index.
                socket.SetSocketOption(level, SocketOptionName.MulticastInterface, v4 ? IPAddress.HostToNetworkOrder(i) : i);
                if (!v4 && destination.Address.ScopeId == 0 && IsLinkLocalGroup(destination.Address))
                {
                    destination.Address.ScopeId = i;
                }
            }

            socket.Bind(new IPEndPoint(v4 ? IPAddress.Any : IPAddress.IPv6Any, 0));
            return socket;
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    /// <summary>ff02::/16 and ff01::/16 (scopes 1 and 2): a zone says which link.</summary>
    private static bool IsLinkLocalGroup(IPAddress address)
    {
        Span<byte> bytes = stackalloc byte[16];
        return address.TryWriteBytes(bytes, out _) && bytes[0] == 0xFF && (bytes[1] & 0x0F) is 1 or 2;
    }

    private async IAsyncEnumerable<CoapGroupResponse> GatherAsync(Socket socket, ReadOnlyMemory<byte> token, TimeSpan window, [EnumeratorCancellation] CancellationToken cancellationToken)
    {
        using Socket owned = socket;
        using CancellationTokenSource until = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        until.CancelAfter(window);
        byte[] buffer = new byte[Math.Max(_options.MaxMessageSize, 64)];
        IPEndPoint any = new(socket.AddressFamily == AddressFamily.InterNetwork ? IPAddress.Any : IPAddress.IPv6Any, 0);
        HashSet<(IPEndPoint, ushort)> seen = [];
        while (true)
        {
            SocketReceiveFromResult received;
            try
            {
                received = await socket.ReceiveFromAsync(buffer, SocketFlags.None, any, until.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                yield break;
            }
            catch (SocketException)
            {
                // An ICMP error for the request (no member at some address): the others may still answer.
                continue;
            }

            IPEndPoint responder = (IPEndPoint)received.RemoteEndPoint;
            if (CoapMessageSerializer.Udp.TryDeserialize(buffer.AsSpan(0, received.ReceivedBytes), out CoapMessage? response, out _)
                && response.Code.Class is >= 2 and <= 5
                && response.Token.Span.SequenceEqual(token.Span)
                && response.Type != CoapMessageType.Reset)
            {
                if (response.Type == CoapMessageType.Confirmable)
                {
                    // RFC 7252 section 4.2: a CON response is acknowledged, to the member that sent it.
                    socket.SendTo(CoapMessageSerializer.Udp.Serialize(CoapMessage.CreateEmpty(CoapMessageType.Acknowledgement, response.MessageId)), responder);
                }

                if (seen.Add((responder, response.MessageId)))
                {
                    yield return new CoapGroupResponse(responder, response);
                }
            }
        }
    }
}
