using System.Net;

namespace CoapNet.Tests.Interop;

/// <summary>
/// A UDP relay on loopback between one client and one server that drops a given share of the
/// datagrams in each direction, chosen by a seeded random generator, so a lossy path is repeatable.
/// </summary>
public sealed class LossyUdpRelay : IAsyncDisposable
{
    private readonly double _dropShare;
    private readonly Random _random;
    private readonly object _gate = new();
    private readonly List<RelayedDatagram>? _log;
    private readonly UdpRelay _relay;

    public LossyUdpRelay(IPEndPoint server, double dropShare, int seed, bool record = false)
    {
        _dropShare = dropShare;
        _random = new Random(seed);
        _log = record ? [] : null;
        _relay = new UdpRelay(server, Pass);
    }

    /// <summary>Where the client sends instead of the server.</summary>
    public IPEndPoint EndPoint => _relay.EndPoint;

    public int DroppedToServer { get; private set; }

    public int DroppedToClient { get; private set; }

    public int ForwardedToServer { get; private set; }

    public int ForwardedToClient { get; private set; }

    /// <summary>Every datagram the relay saw, in order, when made to record them (forwarded or dropped).</summary>
    public IReadOnlyList<RelayedDatagram> Relayed
    {
        get
        {
            lock (_gate)
            {
                return _log is null ? throw new InvalidOperationException("The relay was not made to record.") : [.. _log];
            }
        }
    }

    public ValueTask DisposeAsync() => _relay.DisposeAsync();

    // The relay calls this for one datagram at a time per direction; the lock orders both directions' log and random draws.
    private IReadOnlyList<byte[]> Pass(bool toServer, byte[] datagram)
    {
        lock (_gate)
        {
            bool drop = _random.NextDouble() < _dropShare;
            _log?.Add(new RelayedDatagram(toServer, datagram, drop));
            if (drop)
            {
                _ = toServer ? DroppedToServer++ : DroppedToClient++;
                return [];
            }

            _ = toServer ? ForwardedToServer++ : ForwardedToClient++;
            return [datagram];
        }
    }
}

/// <summary>One datagram a <see cref="LossyUdpRelay"/> saw.</summary>
/// <param name="ToServer">True from the client to the server.</param>
/// <param name="Bytes">Its bytes.</param>
/// <param name="Dropped">True when the relay dropped it.</param>
public sealed record RelayedDatagram(bool ToServer, byte[] Bytes, bool Dropped)
{
    /// <summary>The bytes as a CoAP message; fails the test when they are not one.</summary>
    public CoapNet.Messages.CoapMessage Message => CoapNet.Serialization.CoapMessageSerializer.Udp.Deserialize((ReadOnlyMemory<byte>)Bytes);
}
