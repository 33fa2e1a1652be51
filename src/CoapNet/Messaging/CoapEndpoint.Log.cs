using System.Net;
using CoapNet.Messages;
using CoapNet.Serialization;
using Microsoft.Extensions.Logging;

namespace CoapNet.Messaging;

// Source-generated log methods: nothing is formatted unless the level is enabled.
public sealed partial class CoapEndpoint
{
    private static partial class Log
    {
        [LoggerMessage(1, LogLevel.Debug, "<- {Remote} {Message}")]
        public static partial void Received(ILogger logger, IPEndPoint remote, CoapMessage message);

        [LoggerMessage(2, LogLevel.Debug, "-> {Remote} {Message}")]
        public static partial void Sent(ILogger logger, IPEndPoint remote, CoapMessage message);

        [LoggerMessage(3, LogLevel.Debug, "-> {Remote} retransmission {Attempt}/{Max} of MID {MessageId}")]
        public static partial void Retransmitted(ILogger logger, IPEndPoint remote, int attempt, int max, ushort messageId);

        [LoggerMessage(4, LogLevel.Warning, "Dropped a malformed datagram of {Length} bytes from {Remote}: {Error}; answered with {Reaction}")]
        public static partial void Malformed(ILogger logger, int length, IPEndPoint remote, CoapFormatError error, string reaction);

        [LoggerMessage(5, LogLevel.Debug, "-> {Remote} replayed the reply to duplicate MID {MessageId}")]
        public static partial void Duplicate(ILogger logger, IPEndPoint remote, ushort messageId);

        [LoggerMessage(6, LogLevel.Debug, "Ignored {Message} from {Remote}: {Why}")]
        public static partial void Ignored(ILogger logger, CoapMessage message, IPEndPoint remote, string why);

        [LoggerMessage(7, LogLevel.Error, "The request handler failed for {Message} from {Remote}")]
        public static partial void HandlerFailed(ILogger logger, Exception exception, CoapMessage message, IPEndPoint remote);

        [LoggerMessage(8, LogLevel.Warning, "Sending to {Remote} failed")]
        public static partial void SendFailed(ILogger logger, Exception exception, IPEndPoint remote);

        [LoggerMessage(9, LogLevel.Information, "Gave up on MID {MessageId} to {Remote} after {Count} retransmissions")]
        public static partial void GaveUp(ILogger logger, ushort messageId, IPEndPoint remote, int count);
    }
}
