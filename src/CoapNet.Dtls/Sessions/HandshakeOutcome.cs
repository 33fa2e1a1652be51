using Org.BouncyCastle.Tls;

namespace CoapNet.Dtls.Sessions;

/// <summary>
/// How a DTLS handshake ended, as the <c>coap.handshake.outcome</c> tag of <c>coap.dtls.handshakes</c> and the log line
/// an operator reads: what happened, in words, and the alert that told the peer (or that the peer sent).
/// </summary>
internal static class HandshakeOutcome
{
    public const string Established = "established";
    public const string Failed = "failed";
    public const string TimedOut = "timed_out";
    public const string Stalled = "stalled";
    public const string Evicted = "evicted";
    public const string Refused = "refused";

    /// <summary>The outcome of the handshake of <paramref name="session"/> that ended with <paramref name="error"/>, the alert's name (the metric's error.type) and the reason in words.</summary>
    public static (string Outcome, string? Alert, string Reason) Of(Exception error, DtlsSession session, string peerName)
    {
        if (session.EndedAs is { } ended)
        {
            return (ended, null, session.CloseReason ?? error.Message);
        }

        return Cause(error) switch
        {
            TlsFatalAlertReceived received => (Failed, Name(received.AlertDescription), $"{peerName} refused it"),
            TlsFatalAlert raised => (Failed, Name(session.CorrectAlert(raised.AlertDescription)), Reason(session.CorrectAlert(raised.AlertDescription), raised, peerName)),
            TlsTimeoutException => (TimedOut, null, "it did not complete within HandshakeTimeout"),
            _ => (Failed, null, error.Message),
        };
    }

    /// <summary>
    /// The alert the handshake ended with, for the log: BouncyCastle answers a failure it raises with that alert, and any
    /// other end of a handshake under way (a timeout, our own close) with internal_error (RFC 5246 section 7.2.2); an
    /// alert the peer sent is named as received.
    /// </summary>
    public static string DescribeAlert(Exception error, DtlsSession session) => Cause(error) switch
    {
        TlsFatalAlertReceived received => $"alert {AlertDescription.GetText(received.AlertDescription)} received",
        TlsFatalAlert raised => $"alert {AlertDescription.GetText(session.CorrectAlert(raised.AlertDescription))} sent",
        _ => $"alert {AlertDescription.GetText(AlertDescription.internal_error)} sent",
    };

    private static string Name(short alert) => AlertDescription.GetName(alert);

    /// <summary>BouncyCastle's own exception, when a client's engine wrapped it in one that explains it to its caller.</summary>
    private static Exception Cause(Exception error)
    {
        for (Exception? e = error; e is not null; e = e.InnerException)
        {
            if (e is TlsException or TlsTimeoutException)
            {
                return e;
            }
        }

        return error;
    }

    private static string Reason(short description, TlsFatalAlert alert, string peerName) => description switch
    {
        AlertDescription.bad_record_mac => $"{peerName}'s Finished did not authenticate: its key differs from ours (a wrong pre-shared key?)",
        AlertDescription.unknown_psk_identity => $"{peerName} named a PSK identity we do not know",
        AlertDescription.decrypt_error => $"{peerName}'s Finished or signature did not verify (a wrong key, or a handshake altered on the way)",
        AlertDescription.handshake_failure => $"{peerName} and we have no cipher suite or credential in common",
        AlertDescription.bad_certificate or AlertDescription.unsupported_certificate or AlertDescription.certificate_unknown
            or AlertDescription.unknown_ca or AlertDescription.access_denied => $"{peerName}'s certificate or raw public key was not accepted",
        AlertDescription.protocol_version => $"{peerName} does not speak DTLS 1.2",
        _ => alert.Message,
    };
}
