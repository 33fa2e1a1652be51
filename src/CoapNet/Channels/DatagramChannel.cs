using System.Net;
using CoapNet.Messages;
using CoapNet.Serialization;
using CoapNet.Transports;

namespace CoapNet.Channels;

/// <summary>
/// One path to a peer over a datagram transport: the transport's socket and the peer's address.
/// A frame is a whole datagram (RFC 7252 section 3), so encoding is one exactly sized array.
/// </summary>
internal sealed class DatagramChannel : PeerChannel
{
    private readonly IDatagramTransport _transport;
    private readonly CoapMessageSerializer _serializer;
    private readonly DatagramChannels _owner;

    public DatagramChannel(IDatagramTransport transport, CoapMessageSerializer serializer, CoapPeer peer, DatagramChannels owner)
        : base(peer, isReliable: false)
    {
        _transport = transport;
        _serializer = serializer;
        _owner = owner;
    }

    /// <summary>The channels this one belongs to.</summary>
    public DatagramChannels Owner => _owner;

    /// <summary>The message layer the channels deliver to, which answers the requests that came this way.</summary>
    public override Messaging.IMessageLayer Layer => _owner.Layer;

    /// <inheritdoc/>
    public override bool Fits(CoapMessage message, int tokenLength) => Layer.Fits(Peer, message, tokenLength);

    /// <summary>Serializes <paramref name="message"/> into a new datagram.</summary>
    /// <exception cref="ArgumentException">The message cannot be serialized or exceeds the maximum datagram size.</exception>
    public byte[] Encode(CoapMessage message) => _serializer.Serialize(message);

    /// <summary>Serializes <paramref name="message"/> with the header fields of <paramref name="header"/> in place of its own (a response: its request's token).</summary>
    /// <exception cref="ArgumentException">The message cannot be serialized or exceeds the maximum datagram size.</exception>
    public byte[] Encode(CoapMessage message, in CoapMessageSerializer.WireHeader header) => _serializer.Serialize(message, header);

    /// <summary>Like <see cref="Encode(CoapMessage, in CoapMessageSerializer.WireHeader)"/>, into a pooled array the caller returns to <see cref="System.Buffers.ArrayPool{T}.Shared"/>.</summary>
    /// <exception cref="ArgumentException">The message cannot be serialized or exceeds the maximum datagram size.</exception>
    public byte[] EncodeRented(CoapMessage message, in CoapMessageSerializer.WireHeader header, out int length) => _serializer.SerializeRented(message, header, out length);

    /// <summary>Sends one datagram to the peer.</summary>
    /// <exception cref="System.Net.Sockets.SocketException">The network refused it.</exception>
    /// <exception cref="ObjectDisposedException">The transport is closed.</exception>
    public void Send(ReadOnlySpan<byte> datagram) => _transport.Send(datagram, Peer.EndPoint, Peer.SecurityContext);

    /// <summary>Tells the transport that a confirmable message to the peer went unacknowledged after MAX_RETRANSMIT (RFC 7252 section 4.2).</summary>
    public void ReportUnacknowledged() => _transport.OnUnacknowledged(Peer.EndPoint, Peer.SecurityContext);
}

/// <summary>What the datagram channels hand received messages to: the datagram message layer.</summary>
internal interface IDatagramChannelReceiver
{
    /// <summary>A well-formed message arrived on <paramref name="channel"/>.</summary>
    void OnMessage(DatagramChannel channel, CoapMessage message);

    /// <summary>A datagram that is not a valid CoAP message arrived; <paramref name="datagram"/> is valid only during the call.</summary>
    void OnMalformed(DatagramChannel channel, ReadOnlySpan<byte> datagram, CoapFormatError error);

    /// <summary>The transport ended the session of <paramref name="peer"/> (<see cref="IDatagramReceiver.OnSessionLost"/>): nothing more comes or goes in it.</summary>
    void OnPeerLost(CoapPeer peer, Exception reason);
}

/// <summary>
/// The channels of one datagram transport: parses each received datagram with a datagram serializer
/// bounded by the endpoint's option count (the span entry point: one copy that the message slices)
/// and hands it up with the channel of its sender; finds the channel for a peer to send to.
/// </summary>
/// <remarks>
/// Channels of plain datagrams are cached by address and the cache is bounded, so a peer spraying source ports cannot grow
/// it. A secure session's channel is kept on its <see cref="CoapSecurityContext"/> instead, for as long as the session
/// lives: a fleet of more sessions than the cache holds would otherwise turn it over on every request and leave a new
/// <see cref="CoapPeer"/> each time in the deduplication table for EXCHANGE_LIFETIME (RFC 7252 section 4.8.2), an object
/// per request that lives long enough to be promoted and then dies (the garbage collector's costliest kind). Safe to call
/// from several receive threads at once, so it lets the layers above run work on the receive thread
/// (<see cref="IDatagramReceiver.SupportsInlineWork"/>).
/// </remarks>
internal sealed class DatagramChannels : IDatagramReceiver
{
    private const int CacheCapacity = 4096;
    private readonly IDatagramTransport _transport;
    private readonly string _scheme;
    private readonly CoapMessageSerializer _parser;
    private readonly CoapMessageSerializer _sendSerializer;
    private readonly Dictionary<IPEndPoint, DatagramChannel> _channels = [];
    private IDatagramChannelReceiver? _receiver;
    private Messaging.IMessageLayer? _layer;

    public DatagramChannels(IDatagramTransport transport, int maxMessageSize, int maxOptionCount)
    {
        _transport = transport;
        _scheme = transport.Scheme;
        _parser = maxOptionCount == CoapSerializerOptions.DefaultMaxOptionCount
            ? CoapMessageSerializer.Udp
            : new CoapMessageSerializer(CoapFraming.Datagram, new CoapSerializerOptions { MaxOptionCount = maxOptionCount });
        _sendSerializer = new CoapMessageSerializer(CoapFraming.Datagram, new CoapSerializerOptions { MaxMessageSize = maxMessageSize });
    }

    /// <summary>The transport's local endpoint.</summary>
    public IPEndPoint LocalEndPoint => _transport.LocalEndPoint;

    /// <inheritdoc/>
    public bool SupportsInlineWork => true;

    /// <summary>The transport, owned by this object.</summary>
    public IDatagramTransport Transport => _transport;

    /// <summary>The transport's URI scheme, which every peer heard from on it carries.</summary>
    public string Scheme => _scheme;

    /// <summary>Throws <see cref="ArgumentException"/> when <paramref name="message"/>, with a token of <paramref name="tokenLength"/> bytes, cannot be sent as one datagram.</summary>
    public void CheckSendable(CoapMessage message, int tokenLength) => _sendSerializer.GetSerializedLength(message, tokenLength);

    /// <summary>The message layer that receives from these channels; set by <see cref="Start"/>.</summary>
    /// <exception cref="InvalidOperationException">Receiving has not started.</exception>
    public Messaging.IMessageLayer Layer => _layer ?? throw new InvalidOperationException("The channels are not started.");

    /// <summary>Starts receiving into <paramref name="receiver"/>, the message layer above.</summary>
    public void Start<TReceiver>(TReceiver receiver)
        where TReceiver : IDatagramChannelReceiver, Messaging.IMessageLayer
    {
        _receiver = receiver;
        _layer = receiver;
        _transport.Start(this);
    }

    /// <summary>The channel to <paramref name="peer"/>.</summary>
    public DatagramChannel Get(CoapPeer peer)
    {
        if (peer.SecurityContext is { } context)
        {
            return OfSession(context, peer.EndPoint, peer);
        }

        lock (_channels)
        {
            if (_channels.TryGetValue(peer.EndPoint, out DatagramChannel? channel) && channel.Peer.Equals(peer))
            {
                return channel;
            }

            return Add(peer);
        }
    }

    void IDatagramReceiver.OnDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote) => Receive(datagram, remote, null);

    void IDatagramReceiver.OnDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote, CoapSecurityContext? securityContext) => Receive(datagram, remote, securityContext);

    void IDatagramReceiver.OnSessionLost(IPEndPoint remote, CoapSecurityContext securityContext, Exception reason)
    {
        // A session's channel lives on its context, never in the address cache (OfSession), so there is nothing to evict.
        CoapPeer peer;
        if (securityContext.Channel is DatagramChannel kept && ReferenceEquals(kept.Owner, this))
        {
            securityContext.Channel = null;
            peer = kept.Peer;
        }
        else
        {
            peer = new CoapPeer(_scheme, remote, securityContext);
        }

        _receiver?.OnPeerLost(peer, reason);
    }

    private void Receive(ReadOnlySpan<byte> datagram, IPEndPoint remote, CoapSecurityContext? securityContext)
    {
        DatagramChannel channel;
        if (securityContext is not null)
        {
            // A datagram of a new session is a new peer (RFC 7252 section 9.1.1), even from a known address: its
            // requests are answered in that session and the old session's exchanges do not match its responses.
            channel = OfSession(securityContext, remote, null);
        }
        else
        {
            lock (_channels)
            {
                if (!_channels.TryGetValue(remote, out channel!))
                {
                    channel = Add(new CoapPeer(_scheme, remote, null));
                }
            }
        }

        if (_parser.TryDeserialize(datagram, out CoapMessage? message, out CoapFormatError error))
        {
            _receiver!.OnMessage(channel, message);
        }
        else
        {
            _receiver!.OnMalformed(channel, datagram, error);
        }
    }

    /// <summary>
    /// The channel of the session <paramref name="context"/> at <paramref name="remote"/>, kept on the context; a session
    /// that moved (its Connection ID from a new address, RFC 9146 section 6) gets a new one, as it would by address.
    /// </summary>
    private DatagramChannel OfSession(CoapSecurityContext context, IPEndPoint remote, CoapPeer? peer)
    {
        // Two receive threads may make one each at once: either is right (their peers are equal), the last one stays.
        if (context.Channel is DatagramChannel kept && ReferenceEquals(kept.Owner, this) && kept.Peer.EndPoint.Equals(remote))
        {
            return kept;
        }

        DatagramChannel channel = new(_transport, _sendSerializer, peer ?? new CoapPeer(_scheme, remote, context), this);
        context.Channel = channel;
        return channel;
    }

    // Caller holds the lock.
    private DatagramChannel Add(CoapPeer peer)
    {
        if (_channels.Count >= CacheCapacity)
        {
            _channels.Clear();
        }

        DatagramChannel channel = new(_transport, _sendSerializer, peer, this);
        _channels[peer.EndPoint] = channel;
        return channel;
    }
}
