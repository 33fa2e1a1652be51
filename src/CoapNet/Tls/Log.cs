using System.Net;
using Microsoft.Extensions.Logging;

namespace CoapNet.Tls;

// Source-generated log methods of the TLS transport: nothing is formatted unless the level is enabled.
// Event IDs from 400 keep clear of the other layers'.
internal static partial class Log
{
    [LoggerMessage(400, LogLevel.Debug, "TLS session with {Remote}: {Session}, ALPN '{Protocol}'")]
    public static partial void Handshaken(ILogger logger, IPEndPoint remote, string session, string protocol);

    [LoggerMessage(401, LogLevel.Warning, "Closed the connection from {Remote}: the TLS handshake failed ({Reason})")]
    public static partial void HandshakeFailed(ILogger logger, IPEndPoint remote, string reason);

    [LoggerMessage(402, LogLevel.Warning, "{Count} more TLS handshake failures were not logged")]
    public static partial void FailuresSuppressed(ILogger logger, long count);

    [LoggerMessage(403, LogLevel.Error, "The listener below the TLS listener failed; no more connections are accepted")]
    public static partial void AcceptFailed(ILogger logger, Exception exception);
}
