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

    /// <summary>
    /// Called by a secure transport for each datagram it received and authenticated in the session
    /// <paramref name="securityContext"/> (its plaintext), on the transport's receive loop.
    /// </summary>
    /// <param name="datagram">The plaintext; valid only during the call.</param>
    /// <param name="remote">Who sent it: the session's current address (RFC 9146 lets it change).</param>
    /// <param name="securityContext">The session it came in; null on an unsecured transport, as in <see cref="OnDatagram(ReadOnlySpan{byte}, IPEndPoint)"/>.</param>
    /// <remarks>The message's <see cref="Channels.CoapPeer"/> carries the context, so its answers go back in the same session (RFC 7252 section 9.1.1).</remarks>
    void OnDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote, Channels.CoapSecurityContext? securityContext) => OnDatagram(datagram, remote);
}
