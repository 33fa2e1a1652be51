using System.Net;

namespace CoapNet.Transports;

/// <summary>What a datagram transport delivers received datagrams to (the channel layer).</summary>
public interface IDatagramReceiver
{
    /// <summary>Called for each received datagram, on the transport's receive loop.</summary>
    /// <param name="datagram">The datagram; valid only during the call (the transport reuses the buffer).</param>
    /// <param name="remote">Who sent it. IPv4 peers of a dual-stack socket are reported as IPv4 endpoints.</param>
    /// <remarks>Return quickly: the transport receives the next datagram only after this returns.</remarks>
    void OnDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote);
}
