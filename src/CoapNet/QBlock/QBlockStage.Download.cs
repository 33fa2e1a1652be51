using CoapNet.Blockwise;
using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.QBlock;

// The client side of Q-Block2 (RFC 9177 sections 4.4 and 7.2): a GET or FETCH offers Q-Block2; the server's blocks arrive
// without a request each, a whole set is answered with "Continue", and only the missing blocks are asked for again.
internal sealed partial class QBlockStage
{
    /// <summary>
    /// One body arriving in Q-Block2 blocks: which blocks arrived, the ETag they must all carry, and the timer that asks
    /// for the missing ones NON_RECEIVE_TIMEOUT after the latest block (doubling per repeat, NON_MAX_RETRANSMIT at most).
    /// Until the first response it waits as long as any request would (the endpoint's response timeout).
    /// </summary>
    private sealed class Download(QBlockStage stage, CoapClientCall call, CoapMessage original, IProgress<CoapTransferProgress>? reporter, bool probing) : ClientTransfer(stage, call, original, keepOpen: 4)
    {
        private readonly object _lock = new();
        private readonly List<bool> _received = [];
        private byte[] _body = [];
        private CoapMessage? _head;
        private int _exponent;
        private int _count = -1;
        private long _length = -1;
        private int _arrived;
        private long _bytes;
        private int _highest = -1;
        private int _highestSet = -1;
        private bool _highestMore;
        private int _continued;
        private int _repeats;
        private ITimer? _timer;
        private bool _done;

        private int MaxPayloads => Stage._options.MaxPayloads;

        /// <summary>Sends the caller's request with Q-Block2 NUM 0, M set: the whole body (RFC 9177 section 4.4).</summary>
        public void Start(Action<CoapClientCall, CoapMessage> next)
        {
            CoapMessage request = Original.CopyWithout(CoapOptionNumber.QBlock2);
            if (probing)
            {
                // Support not yet known: a CON, so a 4.02 refusal comes back reliably (RFC 7252 section 5.4.1).
                request.Type = CoapMessageType.Confirmable;
            }

            SetBlock(request, CoapOptionNumber.QBlock2, new CoapBlock(0, true, Stage.OfferedExponent(Call)));
            Begin(request, next);
            lock (_lock)
            {
                if (!_done && _timer is null)
                {
                    _timer = Stage._time.CreateTimer(static state => ((Download)state!).OnTimeout(), this, Stage._responseTimeout, Timeout.InfiniteTimeSpan);
                }
            }
        }

        /// <inheritdoc/>
        public override void OnResponse(CoapMessage response)
        {
            CoapMessage? final = null;
            CoapException? failure = null;
            CoapMessage? proceed = null;
            CoapTransferProgress? progress = null;
            bool fallBack = false;
            lock (_lock)
            {
                if (_done)
                {
                    return;
                }

                if (_head is null && response.Code == CoapCode.BadOption)
                {
                    fallBack = true;
                }
                else if (!response.Code.IsSuccess)
                {
                    // An error ends the transfer as it is: the caller sees its code, never a partial body.
                    final = response;
                }
                else if (!ReadBlocks(response, CoapOptionNumber.QBlock2, out CoapBlock[]? blocks) || blocks.Length != 1)
                {
                    if (_head is not null)
                    {
                        // Not a block of this body (a malformed option, a stray answer): the timer asks again if need be.
                        return;
                    }

                    // The body fit one message.
                    final = response;
                }
                else
                {
                    long before = _bytes;
                    failure = Store(response, blocks[0], out final, out proceed);
                    if (_bytes != before)
                    {
                        progress = new CoapTransferProgress(_bytes, _length >= 0 ? _length : _head!.Size2);
                    }
                }

                _done = fallBack || final is not null || failure is not null;
                if (_done)
                {
                    Stop(ref _timer);
                }
                else
                {
                    Arm();
                }
            }

            if (progress is { } report && failure is null)
            {
                // Outside the lock: the caller's reporter runs code of its own. Each new block, as block-wise reports
                // each block received, so a progress bar reads the same whichever of the two carries the body.
                reporter?.Report(report);
            }

            if (fallBack)
            {
                FallBack();
            }
            else if (failure is not null)
            {
                Call.Fail(failure);
            }
            else if (final is not null)
            {
                Finish(final);
            }
            else if (proceed is not null)
            {
                SendOpen(proceed);
            }
        }

        // Caller holds the lock. Keeps one block; sets final when the body is whole, proceed to a "Continue" after a whole set.
        private CoapException? Store(CoapMessage response, CoapBlock block, out CoapMessage? final, out CoapMessage? proceed)
        {
            final = null;
            proceed = null;
            if (_head is null)
            {
                _head = response;
                _exponent = block.SizeExponent;
                if (response.Size2 is uint total)
                {
                    if (total > Stage._bounds.MaxBodySize)
                    {
                        return TooLarge(total);
                    }

                    _count = (int)Math.Max(1, (total + Size - 1) / Size);
                    _body = new byte[total];
                }
            }
            else if (!Blockwise.BlockwiseStage.SameETag(_head.ETag, response.ETag) || block.SizeExponent != _exponent)
            {
                // RFC 9177 section 4.4: every block of one body carries the same ETag.
                return new CoapException($"The representation at {Call.Peer.EndPoint} changed during the Q-Block2 transfer (its ETag or block size changed at block {block.Number}); fetch it again (RFC 9177 section 4.4).", Call.Peer.EndPoint);
            }

            ReadOnlySpan<byte> payload = response.Payload.Span;
            int number = block.Number;
            if ((block.More ? payload.Length != Size : payload.Length > Size) || (_count >= 0 && number >= _count))
            {
                return new CoapException($"{Call.Peer.EndPoint} sent Q-Block2 block {number} with {payload.Length} bytes, which does not fit a body of {_count} blocks of {Size} bytes (RFC 7959 section 2.2).", Call.Peer.EndPoint);
            }

            while (_received.Count <= number)
            {
                _received.Add(false);
            }

            if (_received[number])
            {
                return null;
            }

            long end = ((long)number * Size) + payload.Length;
            if (end > Stage._bounds.MaxBodySize)
            {
                return TooLarge(end);
            }

            if (end > _body.Length)
            {
                Array.Resize(ref _body, (int)Math.Min(Math.Max(end, 2L * _body.Length), Stage._bounds.MaxBodySize));
            }

            payload.CopyTo(_body.AsSpan(number * Size));
            _received[number] = true;
            _arrived++;
            _bytes += payload.Length;
            _repeats = 0;
            if (!block.More)
            {
                _count = number + 1;
                _length = end;
            }

            if (number > _highest)
            {
                _highest = number;
                _highestMore = block.More;
            }

            if (_count >= 0 && _arrived == _count)
            {
                CoapMessage whole = _head.CopyWithout(CoapOptionNumber.QBlock2);
                whole.Payload = _body.AsMemory(0, (int)(_length >= 0 ? _length : _body.Length));
                final = whole;
                return null;
            }

            // RFC 9177 section 7.2: the first block of a new set, while an earlier set still lacks some, asks for them at
            // once, rather than NON_RECEIVE_TIMEOUT after the latest block (which the server's next sets would put off).
            int set = number / MaxPayloads;
            if (set > _highestSet)
            {
                bool gap = _highestSet >= 0 && !SetArrived(0, set * MaxPayloads);
                _highestSet = set;
                if (gap)
                {
                    proceed = FollowUp(Missing(set * MaxPayloads));
                    return null;
                }
            }

            // RFC 9177 sections 4.4 and 7.2: a whole set, and nothing yet of the next, asks the server to go on at once.
            int nextSet = (set + 1) * MaxPayloads;
            if (nextSet > _continued && _highest < nextSet && (_count < 0 || nextSet < _count) && SetArrived(nextSet - MaxPayloads, nextSet))
            {
                _continued = nextSet;
                proceed = FollowUp([new CoapBlock(nextSet, true, _exponent)]);
            }

            return null;
        }

        /// <summary>
        /// NON_RECEIVE_TIMEOUT after the latest block (RFC 9177 section 7.2): asks for the missing blocks, lowest first, at
        /// most MAX_PAYLOADS in one request; past NON_MAX_RETRANSMIT repeats without a block, the transfer fails.
        /// </summary>
        private void OnTimeout()
        {
            CoapException? failure = null;
            CoapMessage? again = null;
            lock (_lock)
            {
                if (_done)
                {
                    return;
                }

                if (_head is null)
                {
                    failure = new CoapTimeoutException($"No response from {Call.Peer.EndPoint} to {Original.Code} within {Stage._responseTimeout}.", Call.Peer.EndPoint);
                }
                else if (_repeats >= Stage._options.NonMaxRetransmit)
                {
                    failure = new CoapTimeoutException($"Blocks of the body from {Call.Peer.EndPoint} were still missing after {_repeats} requests for them (RFC 9177 section 7.2, NON_MAX_RETRANSMIT).", Call.Peer.EndPoint);
                }
                else
                {
                    _repeats++;
                    again = FollowUp(Missing(_count >= 0 ? _count : _highest + 1));
                    Arm();
                }

                if (failure is not null)
                {
                    _done = true;
                    Stop(ref _timer);
                }
            }

            if (failure is not null)
            {
                Call.Fail(failure);
            }
            else if (again is not null)
            {
                SendOpen(again);
            }
        }

        // Caller holds the lock. The missing blocks below end, lowest first, at most MAX_PAYLOADS in one request.
        private List<CoapBlock> Missing(int end)
        {
            List<CoapBlock> missing = [];
            for (int number = 0; number < end && missing.Count < MaxPayloads; number++)
            {
                if (number >= _received.Count || !_received[number])
                {
                    missing.Add(new CoapBlock(number, false, _exponent));
                }
            }

            if (missing.Count == 0 && _highestMore)
            {
                // Everything up to the latest block arrived and more follow: that block on, and the rest of its set, or
                // "Continue" when it begins one (RFC 9177 section 4.4).
                missing.Add(new CoapBlock(_highest + 1, true, _exponent));
            }

            return missing;
        }

        /// <summary>The caller's request asking for <paramref name="blocks"/>: a fresh token (RFC 9175 section 4), NON (RFC 9177 section 7.2).</summary>
        private CoapMessage FollowUp(List<CoapBlock> blocks)
        {
            CoapMessage request = Original.CopyWithout(CoapOptionNumber.QBlock2);
            request.Token = default;
            request.Type = CoapMessageType.NonConfirmable;
            foreach (CoapBlock block in blocks)
            {
                request.Options.Add(CoapOptionNumber.QBlock2, block.Encoded);
            }

            return request;
        }

        // Caller holds the lock.
        private bool SetArrived(int from, int to)
        {
            for (int number = from; number < to; number++)
            {
                if (number >= _received.Count || !_received[number])
                {
                    return false;
                }
            }

            return true;
        }

        // Caller holds the lock.
        private void Arm()
        {
            Stop(ref _timer);
            _timer = Stage._time.CreateTimer(static state => ((Download)state!).OnTimeout(), this, Stage.ReceiveTimeout(_repeats), Timeout.InfiniteTimeSpan);
        }

        private int Size => 1 << (_exponent + 4);

        private CoapException TooLarge(long size)
            => new($"The body from {Call.Peer.EndPoint} ({size} bytes or more) exceeds {Stage._bounds.MaxBodySize} bytes, the largest this client assembles (BlockwiseOptions.MaxBodySize).", Call.Peer.EndPoint);
    }
}
