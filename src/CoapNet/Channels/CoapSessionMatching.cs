namespace CoapNet.Channels;

/// <summary>
/// Which security session an answer may arrive in and still match what it answers, over a secured transport (DTLS,
/// TLS): a response or Observe notification matching its request by token, an ACK or RST matching the confirmable
/// message (a request, a separate response, a notification) or the non-confirmable notification it answers by
/// Message ID. Set on <see cref="Messaging.CoapEndpointOptions.SessionMatching"/>, so a client and a server follow the
/// same policy; configuration names it ("Coap:Endpoint:SessionMatching", "Coap:Client:Endpoint:SessionMatching").
/// </summary>
/// <remarks>
/// <para>
/// Only <see cref="Strict"/>, the default, conforms to RFC 7252 section 9.1.2: with DTLS a response is matched to a
/// request only within the same session and epoch. The others are opt-ins for deployments that need them and accept
/// what they give up: an answer in another session is taken on the word of its identity alone, so whoever holds that
/// identity's credentials (a device sharing a PSK identity with others, a replaced device whose key was not revoked)
/// can answer what another session asked.
/// </para>
/// <para>
/// The policy decides matching only. What a peer sends is still sent in the session it came from, a duplicate is still
/// detected within its session, and what was pending in a session that ends still ends with it; an observer registers
/// again in its new session (RFC 7641 section 3.3.1, as this library's client does). Messages on an unsecured transport
/// match by address under every policy.
/// </para>
/// </remarks>
public enum CoapSessionMatching
{
    /// <summary>
    /// An answer matches only in the session it answers (RFC 7252 section 9.1.2), whatever address that session
    /// has moved to by its Connection ID (RFC 9146). The default; the only policy the RFC allows.
    /// </summary>
    Strict,

    /// <summary>
    /// Also in another session with the same peer identity (the same PSK identity, raw public key or certificate) from
    /// the same address: for peers that handshake again while exchanges are under way, such as clients that renew
    /// their session on a timer or after losing it. Does not conform to RFC 7252 section 9.1.2.
    /// </summary>
    Relaxed,

    /// <summary>
    /// Also in another session with the same peer identity from any address: for a cluster behind a load balancer and
    /// for peers that reach this endpoint over several paths at once, each with a session of its own, or whose address
    /// changes without a Connection ID. Needs an identity per device (no PSK identity shared between devices). Does
    /// not conform to RFC 7252 section 9.1.2.
    /// </summary>
    Principal,
}
