using CoapNet.Channels;
using CoapNet.Messages;
using Microsoft.Extensions.Logging;

namespace CoapNet.Cli;

/// <summary>
/// The logger behind <c>-v</c>: the library logs every message in and out at Debug level with the
/// <see cref="CoapMessage"/> itself in the state ("Message") and the peer beside it ("Remote" over UDP,
/// "Peer" over TCP); this provider picks those records out and prints each message libcoap-style,
/// so the dump needs no API of its own. Each retransmission is a line too ("-&gt; retransmission 1/4 of i:7d34", the
/// Message ID as the dump writes it), and warnings (a malformed datagram dropped) are printed as they are.
/// </summary>
internal sealed class WireLoggerProvider : ILoggerProvider
{
    private readonly Terminal _terminal;
    private readonly bool _showPeer;

    /// <summary>Creates the provider.</summary>
    /// <param name="terminal">Where the lines go (standard error).</param>
    /// <param name="showPeer">True to name the peer on each line (a server talks to many).</param>
    public WireLoggerProvider(Terminal terminal, bool showPeer)
    {
        _terminal = terminal;
        _showPeer = showPeer;
    }

    /// <summary>Creates a logger factory that sends everything from Debug up to a new provider.</summary>
    /// <param name="terminal">Where the lines go.</param>
    /// <param name="showPeer">True to name the peer on each line.</param>
    /// <returns>The factory.</returns>
    public static ILoggerFactory CreateFactory(Terminal terminal, bool showPeer)
        => LoggerFactory.Create(builder => builder.SetMinimumLevel(LogLevel.Debug).AddProvider(new WireLoggerProvider(terminal, showPeer)));

    /// <inheritdoc/>
    public ILogger CreateLogger(string categoryName) => new WireLogger(this);

    /// <inheritdoc/>
    public void Dispose()
    {
    }

    /// <summary>Finds a sent or received message in a log record's state: its direction, message and peer.</summary>
    /// <param name="state">The state of a source-generated log record.</param>
    /// <param name="outgoing">True for "-&gt; ...", false for "&lt;- ...".</param>
    /// <param name="message">The message.</param>
    /// <param name="peer">The peer, when the record names one.</param>
    /// <returns>True when the record is one message in or out.</returns>
    internal static bool TryGetWireMessage<TState>(TState state, out bool outgoing, out CoapMessage? message, out CoapPeer? peer)
    {
        outgoing = false;
        message = null;
        peer = null;
        if (state is not IReadOnlyList<KeyValuePair<string, object?>> values)
        {
            return false;
        }

        string? template = null;
        foreach (KeyValuePair<string, object?> pair in values)
        {
            switch (pair.Key)
            {
                case "{OriginalFormat}":
                    template = pair.Value as string;
                    break;
                case "Message":
                    message = pair.Value as CoapMessage;
                    break;
                case "Remote" or "Peer":
                    peer = pair.Value as CoapPeer;
                    break;
            }
        }

        // The direction is the template's arrow; "Ignored {Message} ..." also carries a message but is no traffic.
        if (message is null || template is null || !(template.StartsWith("<- ", StringComparison.Ordinal) || template.StartsWith("-> ", StringComparison.Ordinal)))
        {
            return false;
        }

        outgoing = template[0] == '-';
        return true;
    }

    /// <summary>Finds a retransmission in a log record's state: which one of how many, of which Message ID, to which peer.</summary>
    /// <param name="state">The state of a source-generated log record.</param>
    /// <param name="line">"retransmission 1/4 of i:7d34".</param>
    /// <param name="peer">The peer, when the record names one.</param>
    /// <returns>True when the record is a retransmission.</returns>
    internal static bool TryGetRetransmission<TState>(TState state, out string line, out CoapPeer? peer)
    {
        line = string.Empty;
        peer = null;
        if (state is not IReadOnlyList<KeyValuePair<string, object?>> values)
        {
            return false;
        }

        object? attempt = null, max = null, messageId = null;
        bool retransmission = false;
        foreach (KeyValuePair<string, object?> pair in values)
        {
            switch (pair.Key)
            {
                case "{OriginalFormat}":
                    retransmission = pair.Value is string template && template.Contains(" retransmission {Attempt}", StringComparison.Ordinal);
                    break;
                case "Attempt":
                    attempt = pair.Value;
                    break;
                case "Max":
                    max = pair.Value;
                    break;
                case "MessageId":
                    messageId = pair.Value;
                    break;
                case "Peer":
                    peer = pair.Value as CoapPeer;
                    break;
            }
        }

        if (!retransmission || messageId is not ushort id)
        {
            return false;
        }

        line = string.Create(System.Globalization.CultureInfo.InvariantCulture, $"retransmission {attempt}/{max} of i:{id:x4}");
        return true;
    }

    private sealed class WireLogger(WireLoggerProvider provider) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel >= LogLevel.Debug;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (TryGetWireMessage(state, out bool outgoing, out CoapMessage? message, out CoapPeer? peer))
            {
                string arrow = outgoing ? "->" : "<-";
                string who = provider._showPeer && peer is not null ? " " + peer : string.Empty;
                provider._terminal.WriteWire(arrow + who, WireFormat.Format(message!, peer?.Scheme.EndsWith("+tcp", StringComparison.Ordinal) ?? false));
            }
            else if (TryGetRetransmission(state, out string line, out CoapPeer? to))
            {
                provider._terminal.WriteWire("->" + (provider._showPeer && to is not null ? " " + to : string.Empty), line);
            }
            else if (logLevel >= LogLevel.Warning)
            {
                provider._terminal.WriteWarning(formatter(state, exception) + (exception is null ? string.Empty : ": " + exception.Message));
            }
        }
    }
}
