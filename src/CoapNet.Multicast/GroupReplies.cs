using System.Net;

namespace CoapNet.Multicast;

/// <summary>
/// Which group endpoint an ACK or a Reset that arrived at the unicast address answers. A group endpoint sends from the
/// unicast address (RFC 7252 section 8.2), so a client's answer to one of its messages comes back there: the ACK of a
/// confirmable notification (RFC 7641 section 4.5), the Reset that rejects a notification or a response (section 3.6).
/// The unicast endpoint did not send that message and would ignore the answer (RFC 7252 section 4.2), leaving the group
/// endpoint to retransmit and give up; so each CON and NON a group endpoint sends is remembered by its destination and
/// Message ID, and the first ACK or Reset that matches goes to that endpoint instead.
/// </summary>
/// <remarks>
/// Bounded: past <c>capacity</c> messages the oldest is forgotten, and an answer to it then goes to the unicast endpoint,
/// which ignores it, as if it were lost (a CON is retransmitted, and its new ACK matches while it is remembered). A
/// message a peer never answers (most NON ones) costs its place until pushed out. Thread-safe: group endpoints send from
/// any thread, and the IPv4 and IPv6 sockets each receive on a thread of their own.
/// </remarks>
/// <param name="capacity">How many sent messages are remembered.</param>
internal sealed class GroupReplies(int capacity)
{
    private readonly object _gate = new();
    private readonly Dictionary<(IPEndPoint Remote, ushort MessageId), Sent> _sent = [];
    private readonly Queue<((IPEndPoint Remote, ushort MessageId) Key, long Serial)> _order = new();
    private long _serial;

    /// <summary>Remembers <paramref name="datagram"/>, sent by <paramref name="endpoint"/> to <paramref name="remote"/>, when a peer may answer it (a CON or a NON).</summary>
    public void Record(MulticastEndpointTransport endpoint, ReadOnlySpan<byte> datagram, IPEndPoint remote)
    {
        if (!GroupDatagrams.IsAnswerable(datagram))
        {
            return;
        }

        (IPEndPoint, ushort) key = (Normalized(remote), GroupDatagrams.MessageId(datagram));
        lock (_gate)
        {
            long serial = ++_serial;
            _sent[key] = new Sent(endpoint, serial);
            _order.Enqueue((key, serial));
            while (_order.Count > capacity)
            {
                // The oldest goes, unless the same destination and Message ID was sent again since (a newer serial).
                ((IPEndPoint, ushort) oldest, long at) = _order.Dequeue();
                if (_sent.TryGetValue(oldest, out Sent? entry) && entry.Serial == at)
                {
                    _sent.Remove(oldest);
                }
            }
        }
    }

    /// <summary>The group endpoint whose message <paramref name="datagram"/> (an ACK or a Reset from <paramref name="remote"/>) answers, forgotten now; null for the unicast endpoint's.</summary>
    public MulticastEndpointTransport? Take(ReadOnlySpan<byte> datagram, IPEndPoint remote)
    {
        if (!GroupDatagrams.IsAnswer(datagram))
        {
            return null;
        }

        (IPEndPoint, ushort) key = (Normalized(remote), GroupDatagrams.MessageId(datagram));
        lock (_gate)
        {
            // Its place in the order stays until pushed out; a later Record of the same key is told apart by its serial.
            return _sent.Remove(key, out Sent? entry) ? entry.Endpoint : null;
        }
    }

    /// <summary>An IPv4 address as itself, also when it comes mapped into IPv6, as the sockets send to it.</summary>
    private static IPEndPoint Normalized(IPEndPoint remote)
        => remote.Address.IsIPv4MappedToIPv6 ? new IPEndPoint(remote.Address.MapToIPv4(), remote.Port) : remote;

    private sealed record Sent(MulticastEndpointTransport Endpoint, long Serial);
}
