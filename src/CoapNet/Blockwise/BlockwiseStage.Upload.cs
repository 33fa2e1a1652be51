using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.Blockwise;

// The client side of Block1 (RFC 7959 sections 2.3, 2.5, 2.9.3): a request body too large for one
// message goes out block by block, each sent when the previous one is answered 2.31 Continue.
internal sealed partial class BlockwiseStage
{
    /// <inheritdoc/>
    public override void SendRequest(CoapClientCall call, CoapMessage request, Action<CoapClientCall, CoapMessage> next)
    {
        // UDP: a body up to the block size goes whole, as a response body does; past it, only when the
        // datagram still fits. TCP: whatever fits the peer's CSM Max-Message-Size goes whole.
        BlockTransfer? transfer = Transfer(call);
        BlockSource? streamed = transfer?.Source;
        int bert = call.IsReliable ? call.BertBlockSize : 0;
        int? budget = call.IsReliable ? null : _paths.MessageBudget(call.Peer);
        if (streamed is not null)
        {
            // A body from a stream: read as far as one block (the size the upload will use) to see whether it is more than one.
            ReadOnlyMemory<byte> head = streamed.Read(0, bert > 0 ? bert : _options.BlockSize, out bool more);
            if (!more && FitsBudget(WithPayload(request, head), call.NextTokenLength, budget))
            {
                request.Payload = head;
                streamed = null;
            }
        }

        if (streamed is null
            && (request.Payload.IsEmpty || request.Block1 is not null || !CarriesBody(request.Code)
                || (budget is not null ? FitsBudget(request, call.NextTokenLength, budget) && call.FitsOneMessage(request)
                    : (!call.IsReliable && request.Payload.Length <= _options.BlockSize) || call.FitsOneMessage(request))))
        {
            next(call, EarlyBlock2(call, request, budget));
            return;
        }

        Upload upload = new(this, call, transfer, request, streamed ?? new MemoryBlockSource(request.Payload), bert);
        Slot<Upload>.Set(call.Features, this, upload);
        next(call, upload.First());
    }

    /// <summary>
    /// On a path with an MTU, a GET or FETCH asks for a response body in blocks that fit it (an early Block2, RFC 7959
    /// section 2.4): the largest size with which a response carrying the request's token, a Block2 option and nothing
    /// else fits one packet. The server, which knows what else its response carries (an ETag, a Content-Format), may
    /// answer with smaller blocks; the server's own largest, 1024 bytes, needs no asking.
    /// </summary>
    private CoapMessage EarlyBlock2(CoapClientCall call, CoapMessage request, int? budget)
    {
        if (budget is not int limit || !_serves || (request.Code != CoapCode.Get && request.Code != CoapCode.Fetch)
            || request.Block2 is not null || request.HasOption(CoapOptionNumber.QBlock2))
        {
            return request;
        }

        int exponent = AskedExponent(Math.Min(_sizeExponent, 6), limit, call.NextTokenLength, CoapOptionNumber.Block2);
        if (exponent == 6)
        {
            return request;
        }

        CoapMessage asking = request.CopyWithout(CoapOptionNumber.Block2);
        asking.Block2 = new CoapBlock(0, false, exponent);
        return asking;
    }

    /// <summary>
    /// The largest block size, at most 2^(<paramref name="exponent"/> + 4), a client asks for on a path whose messages take
    /// <paramref name="budget"/> bytes: a response with its token, <paramref name="blockOption"/> at its longest and
    /// nothing else fits. What else the response carries only the server knows; it may answer with smaller blocks.
    /// </summary>
    internal static int AskedExponent(int exponent, int budget, int tokenLength, CoapOptionNumber blockOption)
    {
        CoapMessage bare = new() { Code = CoapCode.Content };
        return FitExponent(exponent, budget, e => BlockMessageLength(bare, blockOption, new CoapBlock(CoapBlock.MaxNumber, true, e), long.MaxValue, tokenLength));
    }

    /// <summary>
    /// The block size of an upload on a path with an MTU: the largest with which its first block (with Size1 and the
    /// Request-Tag) and its last-numbered one (with the early Block2 it may carry) fit one packet, at most ours.
    /// </summary>
    private int UploadExponent(CoapClientCall call, CoapMessage original, byte[]? tag, long? length)
    {
        if (call.IsReliable || _paths.MessageBudget(call.Peer) is not int budget)
        {
            return _sizeExponent;
        }

        long total = length ?? long.MaxValue;
        CoapMessage first = original.CopyWithout(CoapOptionNumber.Size1, CoapOptionNumber.Block2);
        CoapMessage last = original.CopyWithout(CoapOptionNumber.Size1);
        if (tag is not null)
        {
            first.RequestTag = tag;
            last.RequestTag = tag;
        }

        first.Size1 = (uint)Math.Min(total, uint.MaxValue);
        int tokenLength = call.NextTokenLength;
        return FitExponent(_sizeExponent, budget, e => Math.Max(
            BlockMessageLength(first, CoapOptionNumber.Block1, new CoapBlock(0, true, e), total, tokenLength),
            BlockMessageLength(last, CoapOptionNumber.Block1, new CoapBlock(LastNumber(total, e), false, e), total, tokenLength)));
    }

    private static CoapMessage WithPayload(CoapMessage request, ReadOnlyMemory<byte> payload)
    {
        CoapMessage copy = request.CopyWithout(CoapOptionNumber.Block1);
        copy.Payload = payload;
        return copy;
    }

    /// <summary>
    /// A Request-Tag no other upload of this endpoint has carried (RFC 9175 section 3.3): the counter in as few bytes
    /// as it takes, 1 to 8. Two uploads to the same resource at once then never look like one to the server, which
    /// keys its reassembly by Request-Tag (section 3.4); a restarted endpoint reusing a tag only restarts an abandoned
    /// upload there, as block 0 does anyway.
    /// </summary>
    private byte[] NextRequestTag()
    {
        ulong tag = (ulong)Interlocked.Increment(ref _lastRequestTag);
        int length = Math.Max(1, 8 - (System.Numerics.BitOperations.LeadingZeroCount(tag) / 8));
        byte[] value = new byte[length];
        for (int i = length - 1; i >= 0; i--, tag >>= 8)
        {
            value[i] = (byte)tag;
        }

        return value;
    }

    private static bool CarriesBody(CoapCode code)
        => code == CoapCode.Put || code == CoapCode.Post || code == CoapCode.Fetch || code == CoapCode.Patch || code == CoapCode.IPatch;

    /// <summary>
    /// A client's upload of one body, block by block: each block is read from the source when it is
    /// sent, and each response decides the next step (the next block, a smaller block size, or the end).
    /// </summary>
    private sealed class Upload(BlockwiseStage stage, CoapClientCall call, BlockTransfer? transfer, CoapMessage original, BlockSource source, int bert)
    {
        // RFC 9175 section 3.4: every block of one upload carries the same Request-Tag, and no other upload of this
        // endpoint runs with it; a caller's own Request-Tag is kept instead.
        private readonly byte[]? _tag = original.HasOptions && original.RequestTag is not null ? null : stage.NextRequestTag();

        // BERT (SZX 7) when both CSMs offered it: blocks of several KiB, numbered in KiB (RFC 8323 section 6).
        private int _exponent = bert > 0 ? 7 : stage._sizeExponent;
        private long _offset;
        private int _length;
        private int _number;
        private bool _more;
        private bool _restarted;
        private Action<CoapClientCall, CoapMessage>? _next;


        /// <summary>The bytes of a block at the current size: BERT's several KiB, or 2^(SZX + 4).</summary>
        private int BlockBytes => _exponent == 7 ? bert : 1 << (_exponent + 4);

        /// <summary>Block numbers count KiB for BERT (RFC 8323 section 6), blocks otherwise.</summary>
        private int UnitShift => _exponent == 7 ? 10 : _exponent + 4;

        /// <summary>Block 0, with Size1 announcing the whole body (RFC 7959 section 4); the caller's token, if it set one.</summary>
        public CoapMessage First()
        {
            if (bert == 0)
            {
                // On a path with an MTU every block must fit one packet, its Request-Tag and Size1 included.
                _exponent = stage.UploadExponent(call, original, _tag, source.Length);
            }

            CoapMessage block = Block(0, 0);
            block.Token = original.Token;
            return block;
        }

        /// <summary>The response to block 0, passed up the stages: from here on every response goes to the step.</summary>
        public void OnFirstResponse(CoapMessage response, Action<CoapClientCall, CoapMessage> next)
        {
            _next = next;
            Step(response);
        }

        private void OnFollowUpResponse(CoapMessage response)
        {
            try
            {
                Step(response);
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                // A response that makes no sense fails the call, never the receive loop it arrived on.
                call.Fail(e);
            }
        }

        private void Step(CoapMessage response)
        {
            CoapBlock? ack = response.Block1;

            // Section 2.3: 2.31 asks for the next block; a non-atomic server answers each block with a success and M=1.
            if (response.Code == CoapCode.Continue || (response.Code.IsSuccess && _more && ack is { More: true }))
            {
                if (!_more || ack is not { } echoed || echoed.Number != _number)
                {
                    call.Fail(new CoapException($"{call.Peer.EndPoint} answered block {_number} of the upload with {response.Code} and {(ack is { } b ? "Block1 " + b : "no Block1 option")} (RFC 7959 section 2.3).", call.Peer.EndPoint));
                    return;
                }

                // Section 2.5, late negotiation: a smaller SZX in the answer is used from the next block on,
                // numbered by the new size from the byte where this block ended.
                if (!(_exponent == 7 && echoed.SizeExponent == 7))
                {
                    _exponent = Math.Min(Math.Min(_exponent, 6), Math.Min(echoed.SizeExponent, 6));
                }

                long offset = _offset + _length;
                long number = offset >> UnitShift;
                if (number > CoapBlock.MaxNumber)
                {
                    call.Fail(new CoapException($"The body is too large to upload to {call.Peer.EndPoint} in {BlockBytes}-byte blocks: block numbers end at {CoapBlock.MaxNumber} (RFC 7959 section 2.2).", call.Peer.EndPoint));
                    return;
                }

                Report(offset);
                call.SendFollowUp(stage, Block(offset, (int)number), OnFollowUpResponse);
                return;
            }

            if (response.Code == CoapCode.RequestEntityTooLarge && ack is { } smaller && smaller.SizeExponent < _exponent && !_restarted)
            {
                // Section 2.9.3: the server named a block size it can take; start over once with it.
                _restarted = true;
                _exponent = smaller.SizeExponent;
                call.SendFollowUp(stage, Block(0, 0), OnFollowUpResponse);
                return;
            }

            if (response.Code.IsSuccess && _more)
            {
                call.Fail(new CoapException($"{call.Peer.EndPoint} answered block {_number} of the upload with {response.Code} before the last block was sent (RFC 7959 section 2.3).", call.Peer.EndPoint));
                return;
            }

            if (response.Code.IsSuccess)
            {
                Report(_offset + _length);
            }

            // The final response, or an error that ends the upload at once (4.08, 4.13, 5.03, ...): up to
            // the caller without the Block1 echo, through Block2 when its own body comes in blocks (section 3.3).
            CoapMessage final = ack is null ? response : response.CopyWithout(CoapOptionNumber.Block1);
            if (ack is not null)
            {
                final.Type = response.Type;
                final.MessageId = response.MessageId;
            }

            CoapMessage template = original.CopyWithout(CoapOptionNumber.Size1);
            template.Payload = default;
            template.Token = default;
            stage.ReceiveBody(call, template, final, _next!);
        }

        /// <summary>Tells the caller's progress handler how many body bytes the server has acknowledged.</summary>
        private void Report(long acknowledged) => transfer?.Progress?.Report(new CoapTransferProgress(acknowledged, source.Length));

        /// <summary>The block at <paramref name="offset"/>, numbered <paramref name="number"/> at the current size; read from the source now.</summary>
        private CoapMessage Block(long offset, int number)
        {
            ReadOnlyMemory<byte> data = source.Read(offset, BlockBytes, out bool more);

            // Block2 (an early size for the response, section 2.4) goes with the last block only.
            CoapMessage block = more ? original.CopyWithout(CoapOptionNumber.Size1, CoapOptionNumber.Block2) : original.CopyWithout(CoapOptionNumber.Size1);
            block.Token = default;
            block.Payload = data;
            block.Block1 = new CoapBlock(number, more, _exponent);
            if (_tag is not null)
            {
                block.RequestTag = _tag;
            }

            if (offset == 0 && source.Length is long total)
            {
                block.Size1 = (uint)total;
            }

            _offset = offset;
            _length = data.Length;
            _number = number;
            _more = more;
            return block;
        }
    }
}
