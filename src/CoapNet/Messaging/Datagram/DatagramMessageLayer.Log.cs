using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Serialization;
using Microsoft.Extensions.Logging;

namespace CoapNet.Messaging.Datagram;

// Source-generated log methods: nothing is formatted unless the level is enabled.
internal sealed partial class DatagramMessageLayer
{
    private static partial class Log
    {
        [LoggerMessage(1, LogLevel.Debug, "<- {Peer} {Message}")]
        public static partial void Received(ILogger logger, CoapPeer peer, CoapMessage message);

        [LoggerMessage(2, LogLevel.Debug, "-> {Peer} {Message}")]
        public static partial void Sent(ILogger logger, CoapPeer peer, CoapMessage message);

        [LoggerMessage(3, LogLevel.Debug, "-> {Peer} retransmission {Attempt}/{Max} of MID 0x{MessageId:x4}")]
        public static partial void Retransmitted(ILogger logger, CoapPeer peer, int attempt, int max, ushort messageId);

        [LoggerMessage(4, LogLevel.Warning, "Dropped a malformed datagram of {Length} bytes from {Peer}: {Error}; answered with {Reaction}")]
        public static partial void Malformed(ILogger logger, int length, CoapPeer peer, CoapFormatError error, string reaction);

        [LoggerMessage(5, LogLevel.Debug, "-> {Peer} replayed the reply to duplicate MID 0x{MessageId:x4}")]
        public static partial void Duplicate(ILogger logger, CoapPeer peer, ushort messageId);

        [LoggerMessage(6, LogLevel.Debug, "Ignored {Message} from {Peer}: {Why}")]
        public static partial void Ignored(ILogger logger, CoapMessage message, CoapPeer peer, string why);

        [LoggerMessage(7, LogLevel.Error, "Processing a datagram from {Peer} failed")]
        public static partial void ProcessingFailed(ILogger logger, Exception exception, CoapPeer peer);

        [LoggerMessage(8, LogLevel.Warning, "Sending to {Peer} failed")]
        public static partial void SendFailed(ILogger logger, Exception exception, CoapPeer peer);

        [LoggerMessage(10, LogLevel.Warning, "{Count} more malformed datagrams were dropped or reset without a line each (the warning is rate-limited)")]
        public static partial void MalformedSuppressed(ILogger logger, long count);

        [LoggerMessage(9, LogLevel.Information, "Gave up on MID 0x{MessageId:x4} to {Peer} after {Count} retransmissions")]
        public static partial void GaveUp(ILogger logger, ushort messageId, CoapPeer peer, int count);
    }
}
