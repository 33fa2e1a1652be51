using CoapNet.Channels;
using CoapNet.Messages;
using Microsoft.Extensions.Logging;

namespace CoapNet.Messaging.Connections;

// Source-generated log methods of the connection layer: nothing is formatted unless the level is enabled.
// Event IDs from 100 keep clear of CoapEndpoint's.
internal static partial class Log
{
    [LoggerMessage(100, LogLevel.Debug, "Accepted a connection from {Peer}")]
    public static partial void Accepted(ILogger logger, CoapPeer peer);

    [LoggerMessage(101, LogLevel.Warning, "Refused a connection from {Peer}: the endpoint already holds {Max} connections, none idle")]
    public static partial void Refused(ILogger logger, CoapPeer peer, int max);

    [LoggerMessage(102, LogLevel.Debug, "Connecting to {Peer}")]
    public static partial void Connecting(ILogger logger, CoapPeer peer);

    [LoggerMessage(103, LogLevel.Warning, "Could not connect to {Peer}: {Reason}")]
    public static partial void ConnectFailed(ILogger logger, CoapPeer peer, string reason);

    [LoggerMessage(104, LogLevel.Warning, "Aborted the connection to {Peer}: {Reason}")]
    public static partial void Aborted(ILogger logger, CoapPeer peer, string reason);

    [LoggerMessage(105, LogLevel.Warning, "{Peer} aborted the connection: {Reason}")]
    public static partial void PeerAborted(ILogger logger, CoapPeer peer, string reason);

    [LoggerMessage(106, LogLevel.Debug, "Closing the connection to {Peer}: {Reason}")]
    public static partial void Closed(ILogger logger, CoapPeer peer, string reason);

    [LoggerMessage(107, LogLevel.Debug, "<- {Peer} {Message}")]
    public static partial void Received(ILogger logger, CoapPeer peer, CoapMessage message);

    [LoggerMessage(108, LogLevel.Debug, "-> {Peer} {Message}")]
    public static partial void Sent(ILogger logger, CoapPeer peer, CoapMessage message);

    [LoggerMessage(109, LogLevel.Debug, "Ignored {Message} from {Peer}: {Why}")]
    public static partial void Ignored(ILogger logger, CoapMessage message, CoapPeer peer, string why);

    [LoggerMessage(110, LogLevel.Information, "Answered a request from {Peer} with 5.03: {Max} requests are already in flight on its connection")]
    public static partial void Overloaded(ILogger logger, CoapPeer peer, int max);

    [LoggerMessage(111, LogLevel.Error, "The connection listener failed; no more connections will be accepted")]
    public static partial void AcceptFailed(ILogger logger, Exception exception);

    [LoggerMessage(113, LogLevel.Warning, "{Count} more connections were aborted or refused without a line each (the warning is rate-limited)")]
    public static partial void AbortsSuppressed(ILogger logger, long count);

    [LoggerMessage(114, LogLevel.Warning, "Refused a connection from {Peer}: its address ({Address}) already holds {Max} connections, none idle")]
    public static partial void RefusedForAddress(ILogger logger, CoapPeer peer, string address, int max);

    [LoggerMessage(115, LogLevel.Warning, "Released the connection from {Peer}, idle for {Idle:0.#} s, to admit one from {Newcomer} ({Bound} reached)")]
    public static partial void Evicted(ILogger logger, CoapPeer peer, double idle, CoapPeer newcomer, string bound);

    [LoggerMessage(112, LogLevel.Debug, "CSM from {Peer}: Max-Message-Size {MaxMessageSize}")]
    public static partial void CsmReceived(ILogger logger, CoapPeer peer, uint maxMessageSize);

    [LoggerMessage(116, LogLevel.Information, "The handling of a frame from {Peer} has not returned for a watchdog interval; a new read loop serves the connection meanwhile")]
    public static partial void ReadLoopStalled(ILogger logger, CoapPeer peer);
}
