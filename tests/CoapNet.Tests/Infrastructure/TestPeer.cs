using System.Net;
using CoapNet.Messages;
using CoapNet.Serialization;
using CoapNet.Transports;

namespace CoapNet.Tests.Infrastructure;

/// <summary>
/// A scripted CoAP party on an <see cref="InMemoryNetwork"/>: it records what it receives and sends
/// exactly what the test tells it to, byte for byte, so the test plays the other side of an endpoint.
/// </summary>
public sealed class TestPeer : IDatagramReceiver, IDisposable
{
    private readonly object _gate = new();
    private readonly List<ReceivedDatagram> _received = [];
    private readonly InMemoryTransport _transport;
    private int _inProgress;

    /// <summary>Binds a peer to <paramref name="address"/> on <paramref name="network"/>.</summary>
    /// <param name="network">The network.</param>
    /// <param name="address">"10.0.0.9" or "10.0.0.9:5683".</param>
    public TestPeer(InMemoryNetwork network, string address)
    {
        ArgumentNullException.ThrowIfNull(network);
        _transport = network.CreateTransport(address);
        _transport.Start(this);
    }

    /// <summary>The peer's address.</summary>
    public IPEndPoint EndPoint => _transport.LocalEndPoint;

    /// <summary>A snapshot of everything received, in order.</summary>
    public IReadOnlyList<ReceivedDatagram> Received
    {
        get
        {
            lock (_gate)
            {
                return [.. _received];
            }
        }
    }

    /// <summary>The last datagram received; fails when none was.</summary>
    public ReceivedDatagram Last
    {
        get
        {
            lock (_gate)
            {
                return _received.Count > 0 ? _received[^1] : throw new InvalidOperationException($"{EndPoint} has received nothing.");
            }
        }
    }

    /// <summary>Called for each received datagram, after it is recorded: an automatic responder.</summary>
    public Action<TestPeer, ReceivedDatagram>? OnReceived { get; set; }

    /// <summary>
    /// How many received datagrams are recorded but not yet through <see cref="OnReceived"/>. A datagram shows in
    /// <see cref="Received"/> before its responder runs, so a test that acts on the clock once it sees one waits
    /// for this to be 0 first, or its action races the responder's answer.
    /// </summary>
    public int InProgressCount => Volatile.Read(ref _inProgress);

    /// <summary>Forgets what was received.</summary>
    public void ClearReceived()
    {
        lock (_gate)
        {
            _received.Clear();
        }
    }

    /// <summary>Sends <paramref name="message"/> as it is (type, Message ID, token included).</summary>
    /// <param name="message">The message.</param>
    /// <param name="to">The destination.</param>
    /// <returns>The bytes sent.</returns>
    public byte[] Send(CoapMessage message, IPEndPoint to)
    {
        byte[] bytes = CoapMessageSerializer.Udp.Serialize(message);
        _transport.Send(bytes, to);
        return bytes;
    }

    /// <summary>Sends raw bytes.</summary>
    /// <param name="bytes">The datagram.</param>
    /// <param name="to">The destination.</param>
    public void SendBytes(byte[] bytes, IPEndPoint to) => _transport.Send(bytes, to);

    /// <summary>Sends an empty ACK for <paramref name="messageId"/>.</summary>
    /// <param name="messageId">The Message ID to acknowledge.</param>
    /// <param name="to">The destination.</param>
    public void SendAck(ushort messageId, IPEndPoint to) => Send(CoapMessage.CreateEmpty(CoapMessageType.Acknowledgement, messageId), to);

    /// <summary>Sends a RST for <paramref name="messageId"/>.</summary>
    /// <param name="messageId">The Message ID to reject.</param>
    /// <param name="to">The destination.</param>
    public void SendReset(ushort messageId, IPEndPoint to) => Send(CoapMessage.CreateEmpty(CoapMessageType.Reset, messageId), to);

    /// <summary>Answers <paramref name="request"/> with a piggybacked response: an ACK with its Message ID and token.</summary>
    /// <param name="request">The request received from <paramref name="to"/>.</param>
    /// <param name="to">The requester.</param>
    /// <param name="code">The response code.</param>
    /// <param name="payload">The payload text.</param>
    public void SendPiggybacked(CoapMessage request, IPEndPoint to, CoapCode code, string payload = "")
    {
        ArgumentNullException.ThrowIfNull(request);
        CoapMessage response = new() { Type = CoapMessageType.Acknowledgement, Code = code, MessageId = request.MessageId, Token = request.Token };
        response.SetPayload(payload);
        Send(response, to);
    }

    /// <summary>Sends a separate response (RFC 7252 section 5.2.2) with its own Message ID and the given token.</summary>
    /// <param name="token">The token of the request answered.</param>
    /// <param name="messageId">The response's Message ID.</param>
    /// <param name="to">The requester.</param>
    /// <param name="code">The response code.</param>
    /// <param name="payload">The payload text.</param>
    /// <param name="type">CON (the default) or NON.</param>
    /// <returns>The bytes sent.</returns>
    public byte[] SendSeparate(ReadOnlyMemory<byte> token, ushort messageId, IPEndPoint to, CoapCode code, string payload = "", CoapMessageType type = CoapMessageType.Confirmable)
    {
        CoapMessage response = new() { Type = type, Code = code, MessageId = messageId, Token = token };
        response.SetPayload(payload);
        return Send(response, to);
    }

    /// <summary>Closes the peer's transport.</summary>
    public void Dispose() => _transport.Dispose();

    void IDatagramReceiver.OnDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote)
    {
        Interlocked.Increment(ref _inProgress);
        byte[] bytes = datagram.ToArray();
        ReceivedDatagram received = new(remote, bytes, CoapMessageSerializer.Udp.TryDeserialize(bytes.AsSpan(), out CoapMessage? message, out _) ? message : null);
        lock (_gate)
        {
            _received.Add(received);
        }

        try
        {
            OnReceived?.Invoke(this, received);
        }
        finally
        {
            Interlocked.Decrement(ref _inProgress);
        }
    }
}
