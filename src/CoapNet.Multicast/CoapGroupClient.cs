using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Observe;
using CoapNet.Serialization;
using CoapNet.Transports;

namespace CoapNet.Multicast;

/// <summary>
/// Sends one request to a group and gathers every member's response as it arrives, with the member's address, over a
/// time window (RFC 7252 section 8.2; draft-ietf-core-groupcomm-bis section 3.1), or observes a resource on every member
/// at once with one group GET (RFC 7641 on a group: each member that answers is an observation of its own). The request
/// is NON with a fresh token, and the token stays matched for the whole window or observation: every response that
/// carries it is a member's answer.
/// </summary>
/// <remarks>
/// Each group request has a UDP socket of its own, made and sent from when <see cref="SendAsync(CoapMessage, Uri, TimeSpan, CancellationToken)"/>
/// or <see cref="ObserveAsync(CoapMessage, Uri, CancellationToken)"/> is called (on the caller's thread, so in the
/// caller's network namespace) and closed when the window or the observation ends. A member that answers with a CON is
/// acknowledged; a member's retransmission is reported once. A larger body than one response (Block2) is the caller's to
/// fetch from that member by unicast (RFC 7959 section 2.8).
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
        if (window <= TimeSpan.Zero)
        {
            throw new ArgumentException("The window must be positive.", nameof(window));
        }

        Socket socket = Start(request, group, out _);
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

    /// <summary>Observes <paramref name="uri"/> on every member of its group: a GET with Observe 0 (see <see cref="ObserveAsync(CoapMessage, Uri, CancellationToken)"/>).</summary>
    /// <param name="uri">The group's URI and the resource: coap://224.0.1.187/temperature, coap://[ff02::fd%eth0]/temperature.</param>
    /// <param name="cancellationToken">Ends the observation: every member is deregistered, then an <see cref="OperationCanceledException"/>.</param>
    /// <returns>Each member's first response and notifications as they arrive.</returns>
    /// <exception cref="ArgumentException">The URI is not a coap:// URI of a multicast address.</exception>
    public IAsyncEnumerable<CoapGroupResponse> ObserveAsync(Uri uri, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(uri);
        return ObserveAsync(CoapMessage.CreateRequest(CoapCode.Get, uri, CoapMessageType.NonConfirmable), uri, cancellationToken);
    }

    /// <summary>
    /// Sends <paramref name="request"/> (a GET or FETCH, given Observe 0) to the group of <paramref name="group"/> now, and
    /// yields each member's response and then its notifications as they arrive, each with the member's address: every
    /// member that answers with Observe observes the resource for this client until the observation ends (RFC 7641 on a
    /// group, draft-ietf-core-groupcomm-bis). Per member, a retransmission is reported once and a notification older than
    /// the last one reported is dropped (RFC 7641 section 3.4). A response without Observe ends that member's observation
    /// (the resource is not observable there, or the notification is an error, section 4.2).
    /// </summary>
    /// <remarks>
    /// The observation lasts until <paramref name="cancellationToken"/> is canceled or the enumeration stops (a
    /// <c>break</c>); then each member still observing is sent a GET with Observe 1 and the registration's token from the
    /// same socket (RFC 7641 section 3.6), a notification still on its way is answered with a Reset, and the enumeration
    /// ends once every member answered or <see cref="CoapGroupClientOptions.DeregistrationTimeout"/> passed. Members
    /// answer after their leisure (RFC 7252 section 8.2), so the first responses come spread over it; notifications come
    /// as each member's resource changes. A member's notifications come from its unicast address, and it may re-register
    /// by unicast with the same token (RFC 7641 section 3.3.1) as any observer may.
    /// </remarks>
    /// <param name="request">The request: a GET or FETCH with its path and query options (<see cref="CoapMessage.CreateRequest"/>).</param>
    /// <param name="group">Where it goes: coap://, a multicast address, a port (5683 when none), an IPv6 zone for a link-local group.</param>
    /// <param name="cancellationToken">Ends the observation: every member is deregistered, then an <see cref="OperationCanceledException"/>.</param>
    /// <returns>Each member's responses as they arrive. Enumerate it: its end deregisters the members and closes the socket.</returns>
    /// <exception cref="ArgumentException">The request is not a GET or FETCH, the URI is not a coap:// URI of a multicast address, or <see cref="CoapGroupClientOptions.DeregistrationTimeout"/> is negative.</exception>
    public IAsyncEnumerable<CoapGroupResponse> ObserveAsync(CoapMessage request, Uri group, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(request);
        ArgumentNullException.ThrowIfNull(group);
        if (request.Code != CoapCode.Get && request.Code != CoapCode.Fetch)
        {
            throw new ArgumentException($"Observe registers with a GET or a FETCH (RFC 7641 section 2, RFC 8132 section 2), not {request.Code}.", nameof(request));
        }

        if (_options.DeregistrationTimeout < TimeSpan.Zero)
        {
            throw new ArgumentException("CoapGroupClientOptions.DeregistrationTimeout must not be negative.", nameof(request));
        }

        request.Observe = 0;
        Socket socket = Start(request, group, out byte[] registration);
        return ObserveMembersAsync(socket, registration, request.Token, cancellationToken);
    }

    /// <summary>
    /// Observes as <see cref="ObserveAsync(CoapMessage, Uri, CancellationToken)"/> does, and calls
    /// <paramref name="onNotification"/> with each member's response and notifications, one at a time, until
    /// <paramref name="cancellationToken"/> is canceled.
    /// </summary>
    /// <param name="request">The request: a GET or FETCH.</param>
    /// <param name="group">Where it goes.</param>
    /// <param name="onNotification">Called with each response, one at a time.</param>
    /// <param name="cancellationToken">Ends the observation.</param>
    /// <returns>A task that ends, once every member was deregistered, with an <see cref="OperationCanceledException"/> when <paramref name="cancellationToken"/> is canceled, or with what <paramref name="onNotification"/> threw.</returns>
    /// <exception cref="ArgumentException">As for the other form.</exception>
    public async Task ObserveAsync(CoapMessage request, Uri group, Action<CoapGroupResponse> onNotification, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(onNotification);
        await foreach (CoapGroupResponse notification in ObserveAsync(request, group, cancellationToken).ConfigureAwait(false))
        {
            onNotification(notification);
        }
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

    /// <summary>
    /// Checks the request, makes it NON with a fresh Message ID and token, and sends it to the group from a socket of its
    /// own, made now; <paramref name="datagram"/> is what was sent.
    /// </summary>
    private Socket Start(CoapMessage request, Uri group, out byte[] datagram)
    {
        if (request.Code.Class != 0 || request.Code == CoapCode.Empty)
        {
            throw new ArgumentException($"A group request needs a method code, not {request.Code}.", nameof(request));
        }

        IPEndPoint destination = Destination(group);
        request.Type = CoapMessageType.NonConfirmable;
        request.MessageId = NewMessageId();
        request.Token = RandomNumberGenerator.GetBytes(CoapMessage.MaxTokenLength);
        datagram = CoapMessageSerializer.Udp.Serialize(request);

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

        return socket;
    }

    private static ushort NewMessageId() => (ushort)RandomNumberGenerator.GetInt32(ushort.MaxValue + 1);

    private async IAsyncEnumerable<CoapGroupResponse> GatherAsync(Socket socket, ReadOnlyMemory<byte> token, TimeSpan window, [EnumeratorCancellation] CancellationToken cancellationToken)
    {
        using Socket owned = socket;
        using CancellationTokenSource until = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        until.CancelAfter(window);
        byte[] buffer = NewBuffer();
        HashSet<(IPEndPoint, ushort)> seen = [];
        while (true)
        {
            CoapGroupResponse? response;
            try
            {
                response = await ReceiveAsync(socket, buffer, token, rejectNotifications: false, until.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                yield break;
            }

            if (response is not null && seen.Add((response.Responder, response.Response.MessageId)))
            {
                yield return response;
            }
        }
    }

    private async IAsyncEnumerable<CoapGroupResponse> ObserveMembersAsync(Socket socket, byte[] registration, ReadOnlyMemory<byte> token, [EnumeratorCancellation] CancellationToken cancellationToken)
    {
        using Socket owned = socket;
        byte[] buffer = NewBuffer();
        Dictionary<IPEndPoint, Member> members = [];
        try
        {
            while (true)
            {
                CoapGroupResponse? response = await ReceiveAsync(socket, buffer, token, rejectNotifications: false, cancellationToken).ConfigureAwait(false);
                if (response is not null && Accept(members, response))
                {
                    yield return response;
                }
            }
        }
        finally
        {
            // Canceled, or the caller stopped enumerating: the members are told before the socket closes.
            await DeregisterAsync(socket, buffer, registration, token, members).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// True when <paramref name="answer"/> is news from its member, which is then recorded: not a retransmission of the
    /// member's last message (RFC 7252 section 4.5) and, for a notification, newer than the last one reported (RFC 7641
    /// section 3.4: an older one arriving late is not the current state).
    /// </summary>
    private static bool Accept(Dictionary<IPEndPoint, Member> members, CoapGroupResponse answer)
    {
        CoapMessage response = answer.Response;
        long now = TimeProvider.System.GetTimestamp();
        if (!members.TryGetValue(answer.Responder, out Member? member))
        {
            members.Add(answer.Responder, new Member { MessageId = response.MessageId, Observe = response.Observe, At = now });
            return true;
        }

        if (response.MessageId == member.MessageId
            || (response.Observe is uint value && member.Observe is uint last
                && !ObserveSequence.IsNewer(last, value, TimeProvider.System.GetElapsedTime(member.At, now))))
        {
            return false;
        }

        member.MessageId = response.MessageId;
        member.Observe = response.Observe;
        member.At = now;
        return true;
    }

    /// <summary>
    /// Ends the observation at each member that still observes (RFC 7641 section 3.6): a GET with Observe 1 and the
    /// registration's token, from the socket the observation is keyed by, then a Reset for any notification still on its
    /// way, until each member answered or <see cref="CoapGroupClientOptions.DeregistrationTimeout"/> passed.
    /// </summary>
    private async Task DeregisterAsync(Socket socket, byte[] buffer, byte[] registration, ReadOnlyMemory<byte> token, Dictionary<IPEndPoint, Member> members)
    {
        List<IPEndPoint> observing = [];
        foreach (KeyValuePair<IPEndPoint, Member> member in members)
        {
            if (member.Value.Observe is not null)
            {
                observing.Add(member.Key);
            }
        }

        if (observing.Count == 0 || !CoapMessageSerializer.Udp.TryDeserialize(registration, out CoapMessage? deregistration, out _))
        {
            return;
        }

        deregistration.Observe = 1;
        foreach (IPEndPoint member in observing)
        {
            deregistration.MessageId = NewMessageId();
            TrySend(socket, deregistration, member);
        }

        using CancellationTokenSource wait = new(_options.DeregistrationTimeout);
        while (observing.Count > 0)
        {
            CoapGroupResponse? answer;
            try
            {
                answer = await ReceiveAsync(socket, buffer, token, rejectNotifications: true, wait.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                return;
            }

            if (answer is not null)
            {
                // Its answer to the deregistration (no Observe), or a notification just rejected with a Reset: either ends it.
                observing.Remove(answer.Responder);
            }
        }
    }

    private byte[] NewBuffer() => new byte[Math.Max(_options.MaxMessageSize, 64)];

    /// <summary>
    /// The next datagram from a member that answers <paramref name="token"/>: a response (2.xx to 5.xx, not a Reset) that
    /// carries it, or null for anything else (another's, malformed, an ICMP error for an earlier send). A CON one is
    /// acknowledged (RFC 7252 section 4.2), to the member that sent it; a notification is rejected with a Reset instead
    /// when <paramref name="rejectNotifications"/> (RFC 7641 section 3.6).
    /// </summary>
    private static async ValueTask<CoapGroupResponse?> ReceiveAsync(Socket socket, byte[] buffer, ReadOnlyMemory<byte> token, bool rejectNotifications, CancellationToken cancellationToken)
    {
        IPEndPoint any = new(socket.AddressFamily == AddressFamily.InterNetwork ? IPAddress.Any : IPAddress.IPv6Any, 0);
        SocketReceiveFromResult received;
        try
        {
            received = await socket.ReceiveFromAsync(buffer, SocketFlags.None, any, cancellationToken).ConfigureAwait(false);
        }
        catch (SocketException)
        {
            // An ICMP error for the request (no member at some address): the others may still answer.
            return null;
        }

        IPEndPoint responder = (IPEndPoint)received.RemoteEndPoint;
        if (!CoapMessageSerializer.Udp.TryDeserialize(buffer.AsSpan(0, received.ReceivedBytes), out CoapMessage? response, out _)
            || response.Code.Class is < 2 or > 5
            || !response.Token.Span.SequenceEqual(token.Span)
            || response.Type == CoapMessageType.Reset)
        {
            return null;
        }

        if (rejectNotifications && response.Observe is not null)
        {
            TrySend(socket, CoapMessage.CreateEmpty(CoapMessageType.Reset, response.MessageId), responder);
        }
        else if (response.Type == CoapMessageType.Confirmable)
        {
            TrySend(socket, CoapMessage.CreateEmpty(CoapMessageType.Acknowledgement, response.MessageId), responder);
        }

        return new CoapGroupResponse(responder, response);
    }

    /// <summary>
    /// Sends <paramref name="message"/> to one member; a datagram that cannot go (no route, or an ICMP error for an earlier
    /// send that Linux reports on this one) is lost as the network would lose it, and the member's own timers take over.
    /// </summary>
    private static void TrySend(Socket socket, CoapMessage message, IPEndPoint member)
    {
        try
        {
            socket.SendTo(CoapMessageSerializer.Udp.Serialize(message), member);
        }
        catch (SocketException)
        {
            // Lost: a CON answer is asked for again; a deregistration's member stops at its next confirmable notification.
        }
    }

    /// <summary>What the client knows of one member's observation: its last message, and the last notification reported.</summary>
    private sealed class Member
    {
        public ushort MessageId;
        public uint? Observe;
        public long At;
    }
}
