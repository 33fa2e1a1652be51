using System.Text;
using CoapNet.Blockwise;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.QBlock;

/// <summary>
/// Q-Block1 and Q-Block2 (RFC 9177), as one stage above block-wise on both sides. Q-Block2 (downloads): on a server, a
/// response too large for one datagram, to a request that offered Q-Block2, goes out MAX_PAYLOADS blocks at a time, the
/// first as the response and the rest as further responses under the request's token, then the next set after
/// NON_TIMEOUT_RANDOM or at once when the client asks to continue; the client joins them, asks to continue after each
/// whole set and asks only for the blocks missing after NON_RECEIVE_TIMEOUT (QBlockStage.Transmission.cs,
/// QBlockStage.Download.cs). Q-Block1 (uploads): the client sends a body's blocks a set at a time without waiting for
/// an answer to each; the server joins them, answers 2.31 Continue for each whole set and 4.08 with the missing block
/// numbers after NON_RECEIVE_TIMEOUT (QBlockStage.Reassembly.cs, QBlockStage.Upload.cs).
/// </summary>
/// <remarks>
/// Used only when both sides support it (RFC 9177 section 4.1): a server when a request carries a Q-Block option (and
/// with the stage absent, as by default, such a request gets 4.02 Bad Option from the server's check of critical
/// options); a client offers the options until a peer refuses them with 4.02, then falls back to Block1/Block2 for it.
/// A request whose support is not yet known goes as CON, so a refusal comes back reliably. Over reliable transports
/// the stage steps aside. What a server keeps (bodies sent, uploads being joined) is bounded by the
/// <see cref="BlockwiseOptions"/> limits and expires after <see cref="QBlockOptions.NonPartialTimeout"/>.
/// </remarks>
internal sealed partial class QBlockStage : CoapStage
{
    // A client remembers at most this many peers' support; past it the table starts over (they are asked again).
    private const int MaxKnownPeers = 1024;

    private readonly QBlockOptions _options;
    private readonly BlockwiseOptions _bounds;
    private readonly TimeProvider _time;
    private readonly TimeSpan _responseTimeout;
    private readonly Random _random;
    private readonly int _sizeExponent;
    private readonly object _gate = new();
    private readonly Dictionary<CoapPeer, bool> _support = [];
    private readonly BodyStore<Transmission> _transmissions;
    private readonly Func<CoapMessage, CoapMessage?>? _uploadCheck;
    private readonly CoapPaths _paths;

    /// <param name="options">MAX_PAYLOADS and the timers of RFC 9177 section 7.2.</param>
    /// <param name="bounds">The block size and the bounds on stored bodies and uploads.</param>
    /// <param name="time">The endpoint's clock.</param>
    /// <param name="responseTimeout">How long a client waits for the first response to a request.</param>
    /// <param name="random">Draws NON_TIMEOUT_RANDOM.</param>
    /// <param name="uploadCheck">A server's check of an upload's first block, as block-wise has it; null on a client.</param>
    /// <param name="paths">The endpoint's paths: blocks to a peer on one with an MTU fit one packet (<see cref="CoapPathOptions"/>).</param>
    public QBlockStage(QBlockOptions options, BlockwiseOptions bounds, TimeProvider time, TimeSpan responseTimeout, Random random, Func<CoapMessage, CoapMessage?>? uploadCheck = null, CoapPaths? paths = null)
    {
        _paths = paths ?? CoapPaths.None;
        _uploadCheck = uploadCheck;
        _options = options;
        _bounds = bounds;
        _time = time;
        _responseTimeout = responseTimeout;
        _random = random;
        _sizeExponent = CoapBlock.GetSizeExponent(bounds.BlockSize);

        // The bodies sent, for the clients' requests for more of them: bounded as block-wise's stored bodies are.
        _transmissions = new BodyStore<Transmission>(bounds.MaxStoredBodies, bounds.MaxStoredBytes, time, static transmission => transmission.Close());
    }

    /// <inheritdoc/>
    public override bool Processes(CoapOptionNumber number) => number is CoapOptionNumber.QBlock1 or CoapOptionNumber.QBlock2;

    /// <inheritdoc/>
    public override void ReceiveRequest(CoapExchange exchange, Action<CoapExchange> next)
    {
        CoapMessage request = exchange.RequestAt(this);
        if (exchange.IsReliable || !request.HasOptions)
        {
            next(exchange);
            return;
        }

        if (ReadBlocks(request, CoapOptionNumber.QBlock1, out CoapBlock[]? upload))
        {
            if (upload.Length != 1)
            {
                // Q-Block1 is not repeatable (RFC 9177 section 4.2); an unparsable value is a malformed option.
                exchange.RespondFrom(this, Diagnostic(CoapCode.BadOption, "A request carries one Q-Block1 option of up to 3 bytes (RFC 9177 section 4.2)."));
                return;
            }

            ReceiveBlock(exchange, upload[0], next);
            return;
        }

        // An observation's notifications in Q-Block2 (RFC 9177 section 4.4) are not served: its Q-Block2 option reaches
        // the server's check of critical options and gets 4.02, so the client falls back to Block2 (RFC 7959 section 2.6).
        if (request.Observe is null && ReadBlocks(request, CoapOptionNumber.QBlock2, out CoapBlock[]? asked))
        {
            if (asked.Length == 0)
            {
                exchange.RespondFrom(this, Diagnostic(CoapCode.BadOption, "A Q-Block2 option holds up to 3 bytes (RFC 9177 section 4.2)."));
                return;
            }

            ReceiveBlockRequest(exchange, asked, next);
            return;
        }

        next(exchange);
    }

    /// <summary>
    /// Reads every <paramref name="number"/> option of <paramref name="message"/>: false when there is none; otherwise
    /// true, with <paramref name="blocks"/> empty when a value is malformed (over 3 bytes, or SZX 7, which is BERT and
    /// only for reliable transports).
    /// </summary>
    internal static bool ReadBlocks(CoapMessage message, CoapOptionNumber number, [System.Diagnostics.CodeAnalysis.NotNullWhen(true)] out CoapBlock[]? blocks)
    {
        blocks = null;
        if (!message.HasOptions)
        {
            return false;
        }

        List<CoapBlock>? found = null;
        bool malformed = false;
        foreach (CoapOptionEntry option in message.ReadOptions())
        {
            if (option.Number == number)
            {
                found ??= [];
                if (option.HasValidLength && option.TryGetUInt(out uint value) && (value & 7) != 7)
                {
                    found.Add(CoapBlock.FromEncoded(value));
                }
                else
                {
                    malformed = true;
                }
            }
            else if (option.Number > number)
            {
                break;
            }
        }

        if (found is null)
        {
            return false;
        }

        blocks = malformed ? [] : [.. found];
        return true;
    }

    /// <summary>True when <paramref name="message"/> carries a Block1, Block2, Q-Block1 or Q-Block2 option.</summary>
    private static bool HasBlockOption(CoapMessage message)
    {
        if (!message.HasOptions)
        {
            return false;
        }

        foreach (CoapOptionEntry option in message.ReadOptions())
        {
            if (option.Number is CoapOptionNumber.QBlock1 or CoapOptionNumber.Block2 or CoapOptionNumber.Block1 or CoapOptionNumber.QBlock2)
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>What this client knows of <paramref name="peer"/>: true when it answered a Q-Block request, false when it refused one, null when it was never asked.</summary>
    private bool? Supports(CoapPeer peer)
    {
        lock (_gate)
        {
            return _support.TryGetValue(peer, out bool supports) ? supports : null;
        }
    }

    private void NoteSupport(CoapPeer peer, bool supports)
    {
        lock (_gate)
        {
            if (_support.Count >= MaxKnownPeers && !_support.ContainsKey(peer))
            {
                _support.Clear();
            }

            _support[peer] = supports;
        }
    }

    /// <summary>NON_TIMEOUT_RANDOM (RFC 9177 section 7.2): between NON_TIMEOUT and 1.5 times it, drawn once per body.</summary>
    private TimeSpan NonTimeoutRandom()
    {
        double fraction;
        lock (_random)
        {
            fraction = _random.NextDouble();
        }

        return _options.NonTimeout * (1 + (0.5 * fraction));
    }

    /// <summary>NON_RECEIVE_TIMEOUT doubled for each repeated request for the same missing blocks (RFC 9177 section 7.2).</summary>
    private TimeSpan ReceiveTimeout(int repeats) => _options.NonReceiveTimeout * (1L << Math.Min(repeats, 16));

    /// <summary>The Q-Block option <paramref name="number"/> set to <paramref name="block"/> on <paramref name="message"/> (one occurrence).</summary>
    private static void SetBlock(CoapMessage message, CoapOptionNumber number, CoapBlock block)
    {
        message.Options.RemoveAll(number);
        message.Options.Add(number, block.Encoded);
    }

    private static CoapMessage Diagnostic(CoapCode code, string text) => new() { Code = code, Payload = Encoding.UTF8.GetBytes(text) };

    /// <summary>A body a server sent or is joining is told apart by peer, method, URI and Accept (and an upload by its Request-Tag).</summary>
    private string Key(CoapExchange exchange)
    {
        CoapMessage request = exchange.RequestAt(this);
        return $"{exchange.Peer}|{request.Code.Value}|{request.UriPath}?{request.UriQuery}|{request.Accept}";
    }

    /// <summary>Stops and forgets a timer, when there is one.</summary>
    private static void Stop(ref ITimer? timer)
    {
        timer?.Dispose();
        timer = null;
    }
}
