using System.Security.Cryptography;
using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.QBlock;

// The client side of Q-Block1 (RFC 9177 sections 4.3, 5 and 7.2): a body too large for one message goes out a
// MAX_PAYLOADS_SET at a time, each block a NON request of its own, with the missing ones sent again when a 4.08 lists them.
internal sealed partial class QBlockStage
{
    /// <summary>
    /// One body going out in Q-Block1 blocks: the next block never sent, the blocks a 4.08 asked for again, and the timer
    /// that paces the sets (NON_TIMEOUT_RANDOM unless a 2.31 says go on) and, once all are sent, bounds the wait for the
    /// answer (NON_RECEIVE_TIMEOUT doubling, NON_MAX_RETRANSMIT times, then the last block again).
    /// </summary>
    private sealed class Upload : ClientTransfer
    {
        private readonly object _lock = new();
        private readonly ReadOnlyMemory<byte> _body;
        private readonly byte[] _tag;
        private readonly int _exponent;
        private readonly int _count;
        private readonly TimeSpan _pause;
        private readonly SortedSet<int> _again = [];
        private int _next = 1;
        private bool _probing;
        private int _repeats;
        private ITimer? _timer;
        private bool _done;

        public Upload(QBlockStage stage, CoapClientCall call, CoapMessage original, bool probing)
            : base(stage, call, original, keepOpen: 2 * stage._options.MaxPayloads)
        {
            _body = original.Payload;
            _probing = probing;
            _pause = stage.NonTimeoutRandom();

            // RFC 9177 section 4.3: every block of one body carries the same Request-Tag, which no other body of ours
            // carries while it is in use (RFC 9175 section 3.4); a caller's own is kept.
            _tag = original.RequestTag is { } own ? own.ToArray() : RandomNumberGenerator.GetBytes(8);
            _exponent = stage._sizeExponent;
            if (stage._paths.MessageBudget(call.Peer) is int budget)
            {
                // On a path with an MTU every block fits one packet: its Q-Block1 option, Size1 and Request-Tag included.
                CoapMessage head = original.CopyWithout(CoapOptionNumber.Size1, CoapOptionNumber.RequestTag);
                head.Size1 = (uint)_body.Length;
                head.RequestTag = _tag;
                int tokenLength = call.NextTokenLength;
                _exponent = Blockwise.BlockwiseStage.FitExponent(_exponent, budget, e => Blockwise.BlockwiseStage.BlockMessageLength(head, CoapOptionNumber.QBlock1, new CoapBlock(Blockwise.BlockwiseStage.LastNumber(_body.Length, e), true, e), _body.Length, tokenLength));
            }

            _count = (_body.Length + Size - 1) / Size;
        }

        private int Size => 1 << (_exponent + 4);

        private int MaxPayloads => Stage._options.MaxPayloads;

        /// <summary>Sends block 0 as the call's request, then the rest of its set, or, while support is unknown, waits for the answer to block 0.</summary>
        public void Start(Action<CoapClientCall, CoapMessage> next)
        {
            if (_count - 1 > CoapBlock.MaxNumber)
            {
                throw new ArgumentException($"The body is too large to upload in {Size}-byte blocks: block numbers end at {CoapBlock.MaxNumber} (RFC 7959 section 2.2).", nameof(next));
            }

            CoapMessage first = Block(0);
            first.Token = Original.Token;

            // Support not yet known: block 0 goes as CON, so a 4.02 refusal (or our server's 2.31) comes back reliably.
            first.Type = _probing ? CoapMessageType.Confirmable : CoapMessageType.NonConfirmable;
            bool probing = _probing;
            Begin(first, next);
            lock (_lock)
            {
                if (_done || _next > 1)
                {
                    // An answer to block 0 has already moved the upload on (or ended it).
                    return;
                }

                if (probing)
                {
                    // Block 0 alone until it is answered, or until the pause passes without a refusal.
                    Arm(_pause, OnPause);
                    return;
                }
            }

            SendSet();
        }

        /// <inheritdoc/>
        public override void OnResponse(CoapMessage response)
        {
            bool fallBack = false;
            bool proceed = false;
            lock (_lock)
            {
                if (_done)
                {
                    return;
                }

                if (response.Code == CoapCode.BadOption && _probing)
                {
                    fallBack = true;
                }
                else if (response.Code == CoapCode.Continue)
                {
                    // RFC 9177 section 4.3: every block up to NUM arrived, so the next set may go at once; an older 2.31, or
                    // one after the last set, changes nothing.
                    if (!ReadBlocks(response, CoapOptionNumber.QBlock1, out CoapBlock[]? blocks) || blocks.Length != 1)
                    {
                        return;
                    }

                    _probing = false;
                    proceed = blocks[0].Number + 1 >= _next && _next < _count;
                    if (!proceed)
                    {
                        return;
                    }
                }
                else if (response.Code == CoapCode.RequestEntityIncomplete && response.ContentFormat == CoapContentFormat.MissingBlocksCborSeq)
                {
                    // RFC 9177 section 5: the listed blocks go again before the next set; a list out of order is dropped.
                    if (!MissingBlocks.TryDecode(response.Payload.Span, _count - 1, out List<int> missing) || missing.Count == 0)
                    {
                        return;
                    }

                    _probing = false;
                    foreach (int number in missing)
                    {
                        _again.Add(number);
                    }

                    proceed = true;
                }

                // Anything else answers the whole body, or ends it (a 4.08 without the list as in RFC 7959 section 2.9.2).
                _done = !proceed;
                if (_done)
                {
                    Stop(ref _timer);
                }
            }

            if (fallBack)
            {
                FallBack();
            }
            else if (proceed)
            {
                SendSet();
            }
            else
            {
                Finish(response);
            }
        }

        /// <summary>
        /// Sends the next burst: the blocks asked for again, else the rest of the current set, at most MAX_PAYLOADS (RFC
        /// 9177 section 7.2); then waits NON_TIMEOUT_RANDOM before the next, or, all sent, for the answer.
        /// </summary>
        private void SendSet()
        {
            List<int> burst = [];
            lock (_lock)
            {
                if (_done)
                {
                    return;
                }

                _probing = false;
                while (burst.Count < MaxPayloads && _again.Count > 0)
                {
                    int number = _again.Min;
                    _again.Remove(number);
                    burst.Add(number);
                }

                if (burst.Count == 0)
                {
                    int end = Math.Min(((_next / MaxPayloads) + 1) * MaxPayloads, _count);
                    for (; _next < end; _next++)
                    {
                        burst.Add(_next);
                    }
                }

                if (_again.Count > 0 || _next < _count)
                {
                    Arm(_pause, OnPause);
                }
                else
                {
                    // The server asks for what it lacks NON_RECEIVE_TIMEOUT after the latest block (section 7.2); the
                    // client waits twice that before prodding it, so the server's 4.08 comes first.
                    Arm(Stage.ReceiveTimeout(_repeats + 1), OnFinalTimeout);
                }
            }

            foreach (int number in burst)
            {
                SendOpen(Block(number));
            }
        }

        private void OnPause() => SendSet();

        /// <summary>No answer after every block went: the last block again (the server answers it, or lists what it lacks), NON_MAX_RETRANSMIT times.</summary>
        private void OnFinalTimeout()
        {
            CoapTimeoutException? failure = null;
            lock (_lock)
            {
                if (_done)
                {
                    return;
                }

                if (_repeats >= Stage._options.NonMaxRetransmit)
                {
                    _done = true;
                    Stop(ref _timer);
                    failure = new CoapTimeoutException($"No answer from {Call.Peer.EndPoint} to the {_count} blocks of the {Original.Code} body after {_repeats} repeats of its last block (RFC 9177 section 7.2, NON_MAX_RETRANSMIT).", Call.Peer.EndPoint);
                }
                else
                {
                    _repeats++;
                    Arm(Stage.ReceiveTimeout(_repeats + 1), OnFinalTimeout);
                }
            }

            if (failure is not null)
            {
                Call.Fail(failure);
                return;
            }

            SendOpen(Block(_count - 1));
        }

        // Caller holds the lock.
        private void Arm(TimeSpan due, Action then)
        {
            Stop(ref _timer);
            _timer = Stage._time.CreateTimer(static state => ((Action)state!)(), then, due, Timeout.InfiniteTimeSpan);
        }

        /// <summary>Block <paramref name="number"/>: a NON request with the caller's options, Q-Block1, Size1 (the whole body) and the Request-Tag.</summary>
        private CoapMessage Block(int number)
        {
            int offset = number * Size;
            int length = Math.Min(Size, _body.Length - offset);
            CoapMessage block = Original.CopyWithout(CoapOptionNumber.Size1, CoapOptionNumber.RequestTag);
            block.Token = default;
            block.Type = CoapMessageType.NonConfirmable;
            block.Payload = _body.Slice(offset, length);
            SetBlock(block, CoapOptionNumber.QBlock1, new CoapBlock(number, offset + length < _body.Length, _exponent));
            block.Size1 = (uint)_body.Length;
            block.RequestTag = _tag;
            return block;
        }
    }
}
