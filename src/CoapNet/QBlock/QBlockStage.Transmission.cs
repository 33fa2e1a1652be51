using CoapNet.Blockwise;
using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.QBlock;

// The server side of Q-Block2 (RFC 9177 sections 4.4 and 7.2): a large response to a client that offered Q-Block2 goes
// out a MAX_PAYLOADS_SET at a time, without a request per block, and later requests ask to continue or for what is missing.
internal sealed partial class QBlockStage
{
    /// <summary>
    /// A request with Q-Block2 options: answered from the body it asks more of when that is kept; otherwise (the first
    /// request, or a body no longer kept) passed to the handler without them, noting what it asked for the response.
    /// </summary>
    private void ReceiveBlockRequest(CoapExchange exchange, CoapBlock[] asked, Action<CoapExchange> next)
    {
        // RFC 9177 section 4.4: NUM 0 with M set asks for the whole body; anything else asks for blocks of one.
        bool whole = asked.Length == 1 && asked[0].Number == 0 && asked[0].More;
        if (!whole && _transmissions.TryGet(Key(exchange), out Transmission? kept, renew: _options.NonPartialTimeout))
        {
            kept.Answer(exchange, asked, null);
            return;
        }

        exchange.ReplaceRequest(this, exchange.RequestAt(this).CopyWithout(CoapOptionNumber.QBlock2));
        exchange.Features.Set(new Offer(asked));
        next(exchange);
    }

    /// <inheritdoc/>
    public override void SendResponse(CoapExchange exchange, CoapMessage response, Action<CoapExchange, CoapMessage> next)
    {
        // A further response's exchange (a notification, a block after the first) has features of its own: no offer.
        if (exchange.Features.Get<Offer>() is not { } offer || !response.Code.IsSuccess)
        {
            next(exchange, response);
            return;
        }

        int exponent = Math.Min(offer.Asked[0].SizeExponent, _sizeExponent);
        int bytes = 1 << (exponent + 4);
        Stream? stream = exchange.Features.Get<ResponseBody>()?.Stream;
        bool whole = offer.Asked.Length == 1 && offer.Asked[0].Number == 0 && offer.Asked[0].More;
        int? budget = _paths.MessageBudget(exchange.Peer);
        if (whole && (stream is null
            ? (budget is not null ? exchange.FitsOneMessage(response) && BlockwiseStage.FitsBudget(response, exchange.RequestAt(this).Token.Length, budget)
                : response.Payload.Length <= bytes || exchange.FitsOneMessage(response))
            : stream.Length - stream.Position <= bytes))
        {
            // One message carries it: no Q-Block2 at all (block-wise below sends a small stream body whole).
            next(exchange, response);
            return;
        }

        if (stream is not null)
        {
            // This stage reads the stream from here on: block-wise below must not read it again for the first block.
            exchange.Features.Set<ResponseBody>(null);
        }

        BlockSource source = stream is null ? new MemoryBlockSource(response.Payload.ToArray()) : new StreamBlockSource(stream);
        long length = source.Length!.Value;
        CoapMessage head = response.CopyWithout(CoapOptionNumber.QBlock2, CoapOptionNumber.Block2);
        head.Payload = default;

        // RFC 9177 section 4.4: every block of one body carries the same ETag, and no other body that one.
        head.ETag ??= stream is null ? BlockwiseStage.ComputeETag(response.Payload.Span, _bounds.ETagLength) : BlockwiseStage.LengthETag(length);
        head.Size2 = (uint)Math.Min(length, uint.MaxValue);
        if (budget is int packet)
        {
            // Every block, its ETag, Size2 and Q-Block2 option included, fits one packet of the path (RFC 9177 section 4.4
            // puts them in each); the first response fixes the size for the body.
            int tokenLength = exchange.RequestAt(this).Token.Length;
            exponent = BlockwiseStage.FitExponent(exponent, packet, e => BlockwiseStage.BlockMessageLength(head, CoapOptionNumber.QBlock2, new CoapBlock(BlockwiseStage.LastNumber(length, e), true, e), length, tokenLength));
            bytes = 1 << (exponent + 4);
        }
        int count = (int)Math.Max(1, (length + bytes - 1) / bytes);
        if (count - 1 > CoapBlock.MaxNumber)
        {
            stream?.Dispose();
            next(exchange, Diagnostic(CoapCode.InternalServerError, $"A body of {length} bytes needs more than {CoapBlock.MaxNumber + 1} blocks of {bytes} bytes (RFC 7959 section 2.2)."));
            return;
        }

        Transmission transmission = new(this, Key(exchange), head, source, length, exponent, count, stream);
        bool kept = _transmissions.Add(transmission.Key, transmission, stream is null ? length : 0, _options.NonPartialTimeout);
        transmission.Answer(exchange, offer.Asked, next);
        if (!kept)
        {
            // Past the bounds the body is not kept: this set goes, and the client's next request runs the handler again.
            transmission.Close();
        }
    }

    /// <summary>What the request that reached the handler offered: the Q-Block2 options it carried.</summary>
    private sealed record Offer(CoapBlock[] Asked);

    /// <summary>
    /// One body a server sends in Q-Block2 blocks: the blocks asked for and not yet sent, where the next set begins,
    /// and the request the next set answers (the latest one for this body, RFC 9177 section 4.4). A set goes out at
    /// once when asked for, and otherwise NON_TIMEOUT_RANDOM after the previous one (section 7.2).
    /// </summary>
    private sealed class Transmission(QBlockStage stage, string key, CoapMessage head, BlockSource source, long length, int exponent, int count, IDisposable? owner) : ICoapDeliveryListener
    {
        private readonly TimeSpan _pause = stage.NonTimeoutRandom();
        private readonly SortedSet<int> _asked = [];
        private CoapExchange? _latest;
        private int _nextSet;
        private ITimer? _timer;
        private bool _closed;

        public string Key { get; } = key;

        private int BlockBytes => 1 << (exponent + 4);

        /// <summary>
        /// Answers <paramref name="exchange"/>, a request for blocks of this body: the first block as its response (through
        /// <paramref name="first"/> when given, the rest of the stages below when not), the rest of at most one set as
        /// further responses; what else it asked for follows set by set.
        /// </summary>
        public void Answer(CoapExchange exchange, CoapBlock[] asked, Action<CoapExchange, CoapMessage>? first)
        {
            int maxPayloads = stage._options.MaxPayloads;
            List<int> burst;
            bool beyondEnd = false;
            lock (this)
            {
                _latest = exchange;
                foreach (CoapBlock block in asked)
                {
                    int number = block.Number;
                    beyondEnd |= number >= count;
                    if (!block.More)
                    {
                        // RFC 9177 section 4.4: M unset asks for that block alone.
                        Ask(number, number + 1);
                    }
                    else if (number % maxPayloads == 0)
                    {
                        // The whole body (NUM 0), or "Continue": the set from NUM on, and the sets after it in their turn.
                        if (number >= _nextSet || number == 0)
                        {
                            Ask(number, number + maxPayloads);
                            _nextSet = Math.Max(_nextSet, number + maxPayloads);
                        }
                    }
                    else
                    {
                        // That block and the rest of its set.
                        Ask(number, ((number / maxPayloads) + 1) * maxPayloads);
                    }
                }

                burst = TakeBurst();
                Schedule();
            }

            if (burst.Count == 0)
            {
                if (first is not null || beyondEnd)
                {
                    CoapMessage refusal = Diagnostic(CoapCode.BadOption, $"The blocks asked for are beyond the end of the {length}-byte body (RFC 7959 section 2.2).");
                    if (first is not null)
                    {
                        first(exchange, refusal);
                    }
                    else
                    {
                        exchange.RespondFrom(stage, refusal);
                    }

                    return;
                }

                // An old "Continue" for a set already on its way: nothing more to send, and no answer is due (NON), or
                // an empty ACK (CON).
                exchange.EndWithoutResponse();
                return;
            }

            Send(exchange, burst, first, answered: false);
        }

        /// <summary>Stops sending, forgets the body and closes its stream. Idempotent.</summary>
        public void Close()
        {
            lock (this)
            {
                if (_closed)
                {
                    return;
                }

                _closed = true;
                Stop(ref _timer);
                _latest = null;
            }

            stage._transmissions.Remove(Key, this);
            owner?.Dispose();
        }

        /// <inheritdoc/>
        public void OnDelivered()
        {
            // A NON block is sent and forgotten: a lost one is asked for again by the client (RFC 9177 section 4.4).
        }

        /// <inheritdoc/>
        public void OnDropped()
        {
            // A stage below kept a block back: the client asks for it again as for a lost one.
        }

        /// <inheritdoc/>
        public void OnRejected() => Close();

        /// <inheritdoc/>
        public void OnFailed(Exception reason) => Close();

        // Caller holds the lock.
        private void Ask(int from, int to)
        {
            for (int number = from; number < Math.Min(to, count); number++)
            {
                _asked.Add(number);
            }
        }

        // Caller holds the lock. At most MAX_PAYLOADS blocks at once, lowest first (RFC 9177 section 7.2): what was asked for,
        // else the next set of the body.
        private List<int> TakeBurst()
        {
            List<int> burst = [];
            if (_closed)
            {
                return burst;
            }

            int maxPayloads = stage._options.MaxPayloads;
            while (burst.Count < maxPayloads && _asked.Count > 0)
            {
                int number = _asked.Min;
                _asked.Remove(number);
                burst.Add(number);
            }

            return burst;
        }

        // Caller holds the lock: the next set after the pause when more is due, and then nothing.
        private void Schedule()
        {
            Stop(ref _timer);
            if (_closed || (_asked.Count == 0 && (_nextSet == 0 || _nextSet >= count)))
            {
                return;
            }

            _timer = stage._time.CreateTimer(static state => ((Transmission)state!).OnPause(), this, _pause, Timeout.InfiniteTimeSpan);
        }

        private void OnPause()
        {
            CoapExchange? latest;
            List<int> burst;
            lock (this)
            {
                if (_closed || _latest is null)
                {
                    return;
                }

                if (_asked.Count == 0 && _nextSet > 0 && _nextSet < count)
                {
                    // RFC 9177 section 7.2: no "Continue" came within NON_TIMEOUT_RANDOM; the next set goes anyway.
                    Ask(_nextSet, _nextSet + stage._options.MaxPayloads);
                    _nextSet += stage._options.MaxPayloads;
                }

                latest = _latest;
                burst = TakeBurst();
                Schedule();
            }

            if (burst.Count > 0)
            {
                Send(latest, burst, null, answered: true);
            }
        }

        /// <summary>Sends <paramref name="burst"/> in answer to <paramref name="exchange"/>: the first block as its response unless it was answered, every other as a further NON response.</summary>
        private void Send(CoapExchange exchange, List<int> burst, Action<CoapExchange, CoapMessage>? first, bool answered)
        {
            try
            {
                for (int i = 0; i < burst.Count; i++)
                {
                    CoapMessage block = Block(burst[i]);
                    if (i == 0 && !answered)
                    {
                        if (first is not null)
                        {
                            first(exchange, block);
                        }
                        else
                        {
                            exchange.RespondFrom(stage, block);
                        }

                        continue;
                    }

                    block.Type = CoapMessageType.NonConfirmable;
                    exchange.ForFurtherResponse(this).RespondFrom(stage, block);
                }
            }
            catch (ObjectDisposedException)
            {
                // The endpoint is stopping: what is left of the body goes with it.
                Close();
            }
        }

        private CoapMessage Block(int number)
        {
            CoapMessage block = head.CopyWithout(CoapOptionNumber.QBlock2);
            bool more;
            lock (source)
            {
                // A stream source reads (and seeks) in place: one block at a time.
                block.Payload = source.Read((long)number * BlockBytes, BlockBytes, out more);
            }

            SetBlock(block, CoapOptionNumber.QBlock2, new CoapBlock(number, more, exponent));
            return block;
        }
    }
}
