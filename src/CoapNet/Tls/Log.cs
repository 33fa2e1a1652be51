using System.Net;
using Microsoft.Extensions.Logging;

namespace CoapNet.Tls;

// Source-generated log methods of the TLS transport: nothing is formatted unless the level is enabled. Event IDs from
// 400 keep clear of the other layers'; a failed listener and the count of lines left out are the connection layer's own.
internal static partial class Log
{
    [LoggerMessage(400, LogLevel.Debug, "TLS session with {Remote}: {Session}, ALPN '{Protocol}'")]
    public static partial void Handshaken(ILogger logger, IPEndPoint remote, string session, string protocol);

    [LoggerMessage(401, LogLevel.Warning, "Closed the connection from {Remote}: the TLS handshake failed ({Reason})")]
    public static partial void HandshakeFailed(ILogger logger, IPEndPoint remote, string reason);
}
