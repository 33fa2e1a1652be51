using System.Net;

namespace CoapNet.Transports;

/// <summary>What a datagram transport delivers received datagrams to (the channel layer).</summary>
public interface IDatagramReceiver
{
    /// <summary>
    /// True when this receiver lets the work of a datagram run on the thread that delivers it, and may be called from
    /// several threads at once; false (the default) when each call must only take the datagram in and return.
    /// </summary>
    /// <remarks>
    /// <para>
    /// The endpoint's datagram channels say true: a server then routes a request, and runs a handler that has shown it
    /// returns quickly, on the UDP socket's receive thread while its pipeline is idle, so a request costs no hand-off
    /// to another thread (docs/ARCHITECTURE.md, steps 1 and 5). CoapNet's UDP transport reads this once, when a receive
    /// thread starts, and only for a receiver that says true does it mark that thread as one the work may run on; it
    /// then also keeps the socket served when a call does not return, handing the socket to a new receive thread while
    /// the old one finishes its call, which is why such a receiver may be called concurrently.
    /// </para>
    /// <para>
    /// A transport that sits between a socket and the channels and hands each datagram up on the thread that gave it
    /// (CoapNet.Dtls's engine, which decrypts on the UDP receive thread) says what the receiver above it says, and must
    /// itself be safe to call concurrently (per-thread buffers, per-session locks) when it does. Nothing else changes
    /// with it: the receive thread is marked by the transport that owns it, never by a layer above.
    /// </para>
    /// </remarks>
    bool SupportsInlineWork => false;

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

    /// <summary>
    /// Called by a secure transport when the session <paramref name="securityContext"/> with <paramref name="remote"/>
    /// has ended (the peer's close_notify or fatal alert, ageing, our own close): nothing more is received or sent in it,
    /// so what waits for an answer in it never gets one, and an observation registered in it is gone (RFC 7252 section
    /// 9.1.1: a response matches only in the session of its request). The layer above fails those with
    /// <paramref name="reason"/>; a client makes a new session on its next request.
    /// </summary>
    /// <param name="remote">The peer's address, as its datagrams were delivered.</param>
    /// <param name="securityContext">The session that ended.</param>
    /// <param name="reason">Why, for the exchanges it fails: a <see cref="Messaging.CoapConnectionException"/> that names the cause (the alert), never a key.</param>
    /// <remarks>Called once per session, on whichever thread ended it; return quickly. An unsecured transport never calls it.</remarks>
    void OnSessionLost(IPEndPoint remote, Channels.CoapSecurityContext securityContext, Exception reason)
    {
    }
}
