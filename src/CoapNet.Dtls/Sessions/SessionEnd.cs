namespace CoapNet.Dtls.Sessions;

/// <summary>
/// Why an established session ended, as the <c>coap.session.close_reason</c> tag of <c>coap.sessions.closed</c>: a few
/// fixed values, so the counter's series stay few (the reason in words goes to the log and to the exchanges that fail).
/// </summary>
internal static class SessionEnd
{
    public const string IdleTimeout = "idle_timeout";
    public const string Evicted = "evicted";
    public const string Replaced = "replaced";
    public const string PeerClosed = "peer_closed";
    public const string PeerAlert = "peer_alert";
    public const string Unacknowledged = "unacknowledged";
    public const string Failed = "failed";
    public const string Shutdown = "shutdown";
}
