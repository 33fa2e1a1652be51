using System.Runtime.CompilerServices;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.Blockwise;

/// <summary>
/// Block-wise transfer (RFC 7959), as one stage on both sides. Block2 (downloads): on a server, a
/// response that does not fit one datagram (or that the client asks for in blocks) goes out one
/// block at a time with an ETag and Size2, and the body is kept for the follow-up requests so the
/// handler runs once; on a client, a response that announces more blocks is completed by fetching
/// them, checking that the ETag stays the same, and handed to the caller whole. Block1 (uploads): a
/// server joins the blocks of a request before its handler sees it (BlockwiseStage.Reassembly.cs);
/// a client sends a body too large for one message in blocks (BlockwiseStage.Upload.cs).
/// </summary>
/// <remarks>
/// The stored bodies and the uploads being joined are bounded in count, bytes and lifetime, so a
/// peer cannot make the server hold more than <see cref="BlockwiseOptions.MaxStoredBytes"/> plus
/// <see cref="BlockwiseOptions.MaxReassemblyBytes"/>. Over a reliable transport a response is split
/// when the client asks (a Block2 option in its request) or when it exceeds the peer's CSM
/// Max-Message-Size.
/// </remarks>
internal sealed partial class BlockwiseStage : CoapStage
{
    private readonly BlockwiseOptions _options;
    private readonly CoapPaths _paths;
    private readonly int _maxMessageSize;
    private readonly TimeProvider _time;
    private readonly int _sizeExponent;
    private readonly object _gate = new();
    private readonly BodyStore<StoredBody> _bodies;
    private readonly bool _serves;
    private long _lastRequestTag;

    /// <param name="endpoint">The endpoint's options: its block-wise settings, largest message, paths and clock.</param>
    /// <param name="uploadCheck">A server's check of an upload's first block, see <see cref="UploadCheck"/>; null on a client.</param>
    /// <param name="servesApplication">
    /// True for the endpoint's built-in block-wise stage, which carries the application's body: a caller's streamed body and
    /// progress (<see cref="BlockTransfer"/>), a handler's stream body and block size (<see cref="ResponseBody"/>). False for a
    /// second one outside OSCORE (RFC 8613 section 4.1.3.4), which cuts and joins the protected messages only.
    /// </param>
    public BlockwiseStage(CoapEndpointOptions endpoint, Func<CoapMessage, CoapMessage?>? uploadCheck = null, bool servesApplication = true)
    {
        _options = endpoint.Blockwise;
        _paths = CoapPaths.From(endpoint.Paths);
        _serves = servesApplication;
        UploadCheck = uploadCheck;
        _maxMessageSize = endpoint.MaxMessageSize;
        _time = endpoint.TimeProvider;
        _sizeExponent = CoapBlock.GetSizeExponent(_options.BlockSize);

        // Bounded: past the count or the bytes a body is not kept, and follow-up blocks run the handler again.
        _bodies = new BodyStore<StoredBody>(_options.MaxStoredBodies, _options.MaxStoredBytes, _time, static body => body.Owner?.Dispose());
    }

    /// <summary>The number of response bodies kept for follow-up block requests.</summary>
    public int StoredCount => _bodies.Count;

    /// <inheritdoc/>
    public override void ReceiveResponse(CoapClientCall call, CoapMessage response, Action<CoapClientCall, CoapMessage> next)
    {
        if (Slot<Upload>.Get(call.Features, this) is { } upload)
        {
            upload.OnFirstResponse(response, next);
            return;
        }

        if (response.Code == CoapCode.Continue && response.Block1 is not null)
        {
            // RFC 7959 section 2.3: 2.31 Continue answers a Block1 block, which this request was not.
            throw new CoapException($"{call.Peer.EndPoint} answered {call.RequestAt(this).Code} with 2.31 Continue and a Block1 option, but the request was not sent in blocks (RFC 7959 section 2.3).", call.Peer.EndPoint);
        }

        ReceiveBody(call, call.RequestAt(this), response, next);
    }

    /// <summary>Passes <paramref name="response"/> up, after fetching the rest of its body when it is the first of several Block2 blocks; follow-ups copy <paramref name="template"/>.</summary>
    private void ReceiveBody(CoapClientCall call, CoapMessage template, CoapMessage response, Action<CoapClientCall, CoapMessage> next)
    {
        // RFC 7959 section 2.4: a request may ask for a later block to start from (an early Block2 with NUM > 0); the
        // body is then the rest from there.
        int asked = template.Block2?.Number ?? 0;
        if (!response.Code.IsSuccess || response.Block2 is not { } first || (!first.More && first.Number == asked))
        {
            if (response.Code.IsSuccess && Transfer(call) is { Destination: { } destination } transfer)
            {
                // A body in one message goes where a block-wise one would: the caller's stream.
                destination.Write(response.Payload.Span);
                transfer.Progress?.Report(new CoapTransferProgress(response.Payload.Length, response.Payload.Length));
                CoapMessage written = response.CopyWithout(CoapOptionNumber.Block2);
                written.Payload = default;
                response = written;
            }

            next(call, response);
            return;
        }

        if (first.Number != asked)
        {
            throw new CoapException($"{call.Peer.EndPoint} answered with block {first.Number} of a body when block {asked} was expected (RFC 7959 section 2.4).", call.Peer.EndPoint);
        }

        // RFC 7959 section 3.1: fetch the rest block by block, each a new request that is the same but for Block2; with a
        // window, several at once by number (section 2.4), as many as Size2 says there are, or ahead until a block says
        // it is the last.
        if (_options.MaxBlocksInFlight > 1 && asked == 0 && first.More && first.SizeExponent != 7)
        {
            new WindowedDownload(this, call, template, response, response.Size2, next).Start();
            return;
        }

        Download download = new(this, call, template, response, next);
        download.Continue(first);
    }

    /// <inheritdoc/>
    public override void ReceiveRequest(CoapExchange exchange, Action<CoapExchange> next)
    {
        CoapMessage request = exchange.RequestAt(this);
        if (request.Block1 is { } part)
        {
            ReceiveBlock(exchange, part, next);
            return;
        }

        // RFC 7959 section 2.4: a request for a later block of a body already produced is answered from
        // it, without running the handler again.
        if (request.Block2 is { Number: > 0 } asked && _bodies.TryGet(Key(exchange.Peer, request), out StoredBody? body))
        {
            (int exponent, int bytes) = ResponseBlocks(exchange, null, asked);
            exchange.RespondFrom(this, Slice(body.Head, body.Source, body.Length, asked.Number, exponent, bytes, request.Size2 is not null));
            return;
        }

        next(exchange);
    }

    /// <inheritdoc/>
    public override void SendResponse(CoapExchange exchange, CoapMessage response, Action<CoapExchange, CoapMessage> next)
    {
        CoapMessage request = exchange.RequestAt(this);
        response = EchoBlock1(exchange, request, response);
        CoapBlock? asked = request.Block2;
        ResponseBody? handlers = _serves ? exchange.Features.Get<ResponseBody>() : null;

        // The usual answer, decided before the block-wise work and without its frame (clearing it was most of this method's
        // time under load, issue 39): no body of the handler's to serve in blocks, and the response goes whole.
        int? budget = exchange.IsReliable ? null : _paths.MessageBudget(exchange.Peer);
        if (handlers is null && GoesWhole(exchange, request, response, asked, null, budget))
        {
            next(exchange, response);
            return;
        }

        SendInBlocks(exchange, request, response, asked, handlers, budget, next);
    }

    /// <summary>
    /// True when <paramref name="response"/> goes as it is: an error, one the handler cut into blocks itself, or, with no
    /// block asked for, one that fits. Over TCP a body goes whole when it fits the peer's CSM Max-Message-Size (RFC 8323
    /// section 5.3.1), in blocks otherwise; over UDP when it fits a datagram, and on a path with an MTU one IP packet of it;
    /// within the handler's block size (<paramref name="chosen"/>) when it chose one.
    /// </summary>
    private bool GoesWhole(CoapExchange exchange, CoapMessage request, CoapMessage response, CoapBlock? asked, int? chosen, int? budget)
    {
        int tokenLength = request.Token.Length;
        return !response.Code.IsSuccess || response.Block2 is not null
            || (asked is null && (chosen is int size ? response.Payload.Length <= size && FitsBudget(response, tokenLength, budget)
                : exchange.IsReliable ? exchange.FitsOneMessage(response) : FitsOneDatagram(response, tokenLength, budget)));
    }

    /// <summary>A response the usual answer does not cover: a handler's body, a block asked for, or one too large for a message.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void SendInBlocks(CoapExchange exchange, CoapMessage request, CoapMessage response, CoapBlock? asked, ResponseBody? handlers, int? budget, Action<CoapExchange, CoapMessage> next)
    {
        int? chosen = handlers?.BlockSize;
        if (handlers?.Stream is { } stream)
        {
            SendStreamed(exchange, request, response, stream, handlers, budget, next);
            return;
        }

        // Without a body of the handler's, SendResponse has found already that the response does not go whole.
        if (handlers is not null && GoesWhole(exchange, request, response, asked, chosen, budget))
        {
            next(exchange, response);
            return;
        }

        int tokenLength = request.Token.Length;
        ReadOnlyMemory<byte> payload = response.Payload;
        if (response.ETag is null && handlers?.Immutable != true)
        {
            // Section 2.4: an ETag lets the client notice a representation that changes between blocks; one that never
            // changes needs none.
            response.ETag = ComputeETag(payload.Span, _options.ETagLength);
        }

        int number = asked?.Number ?? 0;
        bool size2 = IncludesSize2(request, number, budget);
        (int exponent, int bytes) = ResponseBlocks(exchange, chosen, asked);
        if (budget is int limit && number == 0)
        {
            // The first block fixes the block size of the transfer (RFC 7959 section 2.4): every block must fit the path.
            (exponent, bytes) = FitPath(response, payload.Length, exponent, limit, tokenLength, size2);
        }

        MemoryBlockSource source = new(payload);
        CoapMessage slice = Slice(response, source, payload.Length, number, exponent, bytes, size2);
        if (slice.Block2 is not null && payload.Length > bytes)
        {
            // The payload may be a slice of a buffer the handler reuses: keep a copy of its own.
            Store(Key(exchange.Peer, request), response, new MemoryBlockSource(payload.ToArray()), payload.Length, payload.Length, null);
        }

        next(exchange, slice);
    }

    /// <summary>
    /// A body a handler gave as a seekable stream (a file): read one block at a time, never whole, and
    /// kept open for the follow-up block requests until the stored body expires. Its ETag is the
    /// handler's, or one made from its length (a handler that wants changes of the same size noticed
    /// sets its own, such as one from the file's last write time).
    /// </summary>
    private void SendStreamed(CoapExchange exchange, CoapMessage request, CoapMessage response, Stream stream, ResponseBody handlers, int? budget, Action<CoapExchange, CoapMessage> next)
    {
        CoapBlock? asked = request.Block2;
        StreamBlockSource source = new(stream);
        long length = source.Length!.Value;
        bool stored = false;
        try
        {
            // The same block size a byte-array body would get (the handler's, the client's, ours or BERT's, no larger than
            // the path takes); reading the first block at that size also tells whether there is more.
            int number = asked?.Number ?? 0;
            bool size2 = IncludesSize2(request, number, budget);
            CoapMessage keyed = response.CopyWithout(CoapOptionNumber.Block2, CoapOptionNumber.Block1);
            keyed.Payload = default;
            if (!handlers.Immutable)
            {
                keyed.ETag ??= LengthETag(length);
            }

            (int exponent, int bytes) = ResponseBlocks(exchange, handlers.BlockSize, asked);
            if (budget is int limit && number == 0 && response.Code.IsSuccess)
            {
                (exponent, bytes) = FitPath(keyed, length, exponent, limit, request.Token.Length, size2);
            }

            ReadOnlyMemory<byte> head = source.Read(0, bytes, out bool more);
            if (!response.Code.IsSuccess && more)
            {
                // An error's body is never cut into blocks (a byte array's goes whole or is refused as too large, and
                // clients do not follow Block2 on an error), so one longer than a block is refused, never truncated:
                // the server answers 5.00 with this reason instead.
                throw new ArgumentException($"A {response.Code} response's body stream of {length} bytes does not fit one block of {bytes}; an error's body goes in one message, so give it as a byte array or shorten it.", nameof(response));
            }

            if (!response.Code.IsSuccess || (asked is null && !more))
            {
                // The whole body fits one block: it goes as a plain payload.
                CoapMessage whole = response.CopyWithout(CoapOptionNumber.Block2);
                whole.Payload = head;
                next(exchange, whole);
                return;
            }

            CoapMessage slice = Slice(keyed, source, length, number, exponent, bytes, size2);

            if (slice.Block2 is { More: true } || number > 0)
            {
                stored = Store(Key(exchange.Peer, request), keyed, source, length, 0, stream);
            }

            next(exchange, EchoBlock1(exchange, request, slice));
        }
        finally
        {
            if (!stored)
            {
                stream.Dispose();
            }
        }
    }

    // A payload past the datagram size is not measured: the serializer refuses (throws) past 65,507 bytes. The response
    // goes out with its request's token, not its own (a handler's message has none), so that is the length measured.
    private bool FitsOneDatagram(CoapMessage response, int tokenLength, int? budget)
        => budget is int limit
            ? response.Payload.Length < limit && SerializedLength(response, tokenLength) <= Math.Min(limit, _maxMessageSize)
            : response.Payload.Length <= _options.BlockSize
                || (response.Payload.Length < _maxMessageSize && SerializedLength(response, tokenLength) <= _maxMessageSize);

    /// <summary>True when <paramref name="message"/> fits one IP packet of the path (<paramref name="budget"/> bytes), or there is no path limit.</summary>
    internal static bool FitsBudget(CoapMessage message, int tokenLength, int? budget)
        => budget is not int limit || (message.Payload.Length < limit && SerializedLength(message, tokenLength) <= limit);

    private static int SerializedLength(CoapMessage message, int tokenLength) => Serialization.CoapMessageSerializer.Udp.GetSerializedLength(message, tokenLength);

    /// <summary>
    /// RFC 7959 section 4: Size2 goes where the request asks for it (Size2 0), and unasked with the first block so a client
    /// can size its window. Toward a path with an MTU it goes only where asked: on the first block it would make that block
    /// larger than the rest, and the block size of the whole transfer smaller to fit it.
    /// </summary>
    private static bool IncludesSize2(CoapMessage request, int number, int? budget)
        => request.Size2 is not null || (number == 0 && budget is null);

    /// <summary>
    /// The largest block size, at most 2^(<paramref name="exponent"/> + 4), with which every Block2 block of a body of
    /// <paramref name="length"/> bytes fits <paramref name="budget"/> bytes: <paramref name="head"/>'s options (ETag,
    /// Content-Format, ...), the token, Size2 when it goes, the Block2 option at the body's last block number (the longest
    /// encoding) and a whole block of payload, as the serializer counts them. 16 bytes when even those do not fit.
    /// </summary>
    private static (int Exponent, int Bytes) FitPath(CoapMessage head, long length, int exponent, int budget, int tokenLength, bool size2)
    {
        CoapMessage sized = head;
        if (size2)
        {
            sized = head.CopyWithout(CoapOptionNumber.Size2);
            sized.Size2 = (uint)Math.Min(length, uint.MaxValue);
        }

        exponent = FitExponent(exponent, budget, e => BlockMessageLength(sized, CoapOptionNumber.Block2, new CoapBlock(LastNumber(length, e), true, e), length, tokenLength));
        return (exponent, 1 << (exponent + 4));
    }

    /// <summary>The largest exponent from <paramref name="exponent"/> down to 0 (16-byte blocks) whose largest message, <paramref name="largestMessage"/>, fits <paramref name="budget"/>.</summary>
    internal static int FitExponent(int exponent, int budget, Func<int, int> largestMessage)
    {
        while (exponent > 0 && largestMessage(exponent) > budget)
        {
            exponent--;
        }

        return exponent;
    }

    /// <summary>The number of the last block of a body of <paramref name="length"/> bytes in blocks of 2^(<paramref name="exponent"/> + 4).</summary>
    internal static int LastNumber(long length, int exponent) => (int)Math.Min(CoapBlock.MaxNumber, Math.Max(0, (length - 1) >> (exponent + 4)));

    /// <summary>
    /// The size on the wire of <paramref name="head"/> carrying <paramref name="block"/> in option <paramref name="blockOption"/>
    /// (Block1, Block2 or a Q-Block one) and a whole block of payload (less when the body, <paramref name="length"/> bytes, is
    /// smaller), sent with a token of <paramref name="tokenLength"/> bytes.
    /// </summary>
    internal static int BlockMessageLength(CoapMessage head, CoapOptionNumber blockOption, CoapBlock block, long length, int tokenLength)
    {
        CoapMessage probe = head.CopyWithout(blockOption);
        probe.Options.Set(blockOption, UIntCodec.Encode(block.Encoded));
        probe.Payload = ProbePayload.AsMemory(0, (int)Math.Min(1 << (block.SizeExponent + 4), length));
        return SerializedLength(probe, tokenLength);
    }

    // Zeros to stand in for a block's payload when only its length is measured.
    private static readonly byte[] ProbePayload = new byte[1024];

    private static string Key(CoapPeer peer, CoapMessage request)
        => $"{peer}|{request.Code.Value}|{request.UriPath}?{request.UriQuery}|{request.Accept}";

    /// <summary>The ETag of a body read from a stream when the handler set none: its length, big-endian in as few bytes as it takes (at least 1).</summary>
    internal static byte[] LengthETag(long length)
    {
        ulong value = (ulong)length;
        byte[] etag = new byte[Math.Max(1, 8 - (System.Numerics.BitOperations.LeadingZeroCount(value) / 8))];
        for (int i = etag.Length - 1; i >= 0; i--, value >>= 8)
        {
            etag[i] = (byte)value;
        }

        return etag;
    }

    /// <summary>The ETag of a body the server cuts into blocks: a hash of it, <paramref name="length"/> bytes (see <see cref="BlockwiseOptions.ETagLength"/>).</summary>
    internal static byte[] ComputeETag(ReadOnlySpan<byte> payload, int length)
    {
        // FNV-1a over the body: cheap, and different for different bodies with high probability; folded into the length
        // asked for, so that every bit of the hash counts in a short ETag.
        ulong hash = 14695981039346656037UL;
        foreach (byte b in payload)
        {
            hash = (hash ^ b) * 1099511628211UL;
        }

        byte[] etag = new byte[length];
        for (int i = 0; i < 8; i++, hash >>= 8)
        {
            etag[i % length] ^= (byte)hash;
        }

        return etag;
    }

    /// <summary>
    /// The blocks a response is cut into: BERT (SZX 7, as many KiB as the peer's Max-Message-Size allows,
    /// RFC 8323 section 6) over a connection whose CSMs both offered it, unless the client asked for
    /// smaller blocks; otherwise our block size, or the client's smaller early SZX (RFC 7959 section 2.3).
    /// </summary>
    private (int Exponent, int Bytes) ResponseBlocks(CoapExchange exchange, int? chosen, CoapBlock? asked)
    {
        // A handler's own block size (CoapResponse.BlockSize) replaces ours and BERT for its body.
        int ours = chosen is int size ? CoapBlock.GetSizeExponent(size) : _sizeExponent;
        int bert = exchange.IsReliable && chosen is null ? exchange.BertBlockSize : 0;
        if (bert > 0 && (asked is null || asked.Value.SizeExponent == 7))
        {
            return (7, bert);
        }

        // An SZX 7 request where BERT is not available gets 1024-byte blocks (or the handler's).
        int exponent = asked is { } block ? Math.Min(Math.Min(block.SizeExponent, 6), ours) : ours;
        return (exponent, 1 << (exponent + 4));
    }

    /// <summary>
    /// Block <paramref name="number"/> (of <paramref name="bytes"/> bytes) of a body of <paramref name="length"/> bytes read from
    /// <paramref name="source"/>, with <paramref name="head"/>'s code and options and Block2 (and Size2) set; 4.02 past the end.
    /// A BERT block's number counts KiB (RFC 8323 section 6), any other's counts blocks.
    /// </summary>
    private static CoapMessage Slice(CoapMessage head, BlockSource source, long length, int number, int exponent, int bytes, bool includeSize2)
    {
        int size = bytes;
        long offset = (long)number * (exponent == 7 ? 1024 : size);
        if (offset >= length && length > 0)
        {
            return CoapResponse.Diagnostic(CoapCode.BadOption, $"Block {number} is beyond the end of the {length}-byte body.").Message;
        }

        CoapMessage slice = head.CopyWithout(CoapOptionNumber.Block2);
        bool more;
        lock (source)
        {
            // A stream source reads (and seeks) in place: one block at a time.
            slice.Payload = source.Read(offset, size, out more);
        }

        slice.Block2 = new CoapBlock(number, more, exponent);
        if (includeSize2)
        {
            // RFC 7959 section 4: Size2 tells the client the whole body's size.
            slice.Size2 = (uint)Math.Min(length, uint.MaxValue);
        }

        return slice;
    }

    /// <summary>
    /// Keeps a body for follow-up block requests: its head (code and options), where its bytes come
    /// from, and what owns them (a stream to close at the end); false when a bound refuses it.
    /// </summary>
    private bool Store(string key, CoapMessage response, BlockSource source, long length, long memoryBytes, IDisposable? owner)
    {
        // Later blocks answer Block2 requests only, so the Block1 echo of an upload's answer is not kept (RFC 7959 section 3.3).
        CoapMessage head = response.CopyWithout(CoapOptionNumber.Block2, CoapOptionNumber.Block1);
        head.Payload = default;
        return _bodies.Add(key, new StoredBody(head, source, length, owner), memoryBytes, _options.StoredBodyLifetime);
    }

    internal static bool SameETag(ReadOnlyMemory<byte>? first, ReadOnlyMemory<byte>? later)
        => first is null ? later is null : later is { } l && first.Value.Span.SequenceEqual(l.Span);

    /// <summary>The request for block <paramref name="number"/>: the same as <paramref name="template"/> but for Block2.</summary>
    private static CoapMessage BlockRequest(CoapMessage template, int number, int exponent)
    {
        CoapMessage follow = template.CopyWithout(CoapOptionNumber.Block2);

        // A fresh token for each block request, which the exchange layer assigns (RFC 7959 section 2.4 allows it);
        // the later blocks of a notification are fetched without Observe (RFC 7959 section 2.6).
        follow.Token = default;
        follow.Observe = null;
        follow.Block2 = new CoapBlock(number, false, exponent);
        return follow;
    }

    /// <summary>Why a successful answer to the request for block <paramref name="expected"/> cannot be used, or null when it can.</summary>
    private static CoapException? WrongBlock(CoapClientCall call, CoapMessage response, int expected, ReadOnlyMemory<byte>? etag)
    {
        if (response.Block2 is not { } got || got.Number != expected)
        {
            return new CoapException($"{call.Peer.EndPoint} answered the request for block {expected} with {(response.Block2 is { } b ? "block " + b.Number : "no Block2 option")} (RFC 7959 section 2.4).", call.Peer.EndPoint);
        }

        return SameETag(etag, response.ETag)
            ? null
            : new CoapException($"The representation at {call.Peer.EndPoint} changed during the block-wise transfer (its ETag changed at block {got.Number}); fetch it again (RFC 7959 section 2.4).", call.Peer.EndPoint);
    }

    /// <summary>A body kept for follow-up block requests: its head (code, options), its bytes' source and length, and what to close at its end.</summary>
    private sealed record StoredBody(CoapMessage Head, BlockSource Source, long Length, IDisposable? Owner);

    /// <summary>A client's download of one body, block by block; each step runs when the previous block arrives.</summary>
    private sealed class Download(BlockwiseStage stage, CoapClientCall call, CoapMessage template, CoapMessage first, Action<CoapClientCall, CoapMessage> next)
    {
        private readonly DownloadBody _body = new(call, stage.Transfer(call), first, stage._options.MaxBodySize);
        private readonly ReadOnlyMemory<byte>? _etag = first.ETag;
        private int _expected;

        public void Continue(CoapBlock block)
        {
            _body.Write(first.Payload.Span);
            RequestAfter(block, first.Payload.Length);
        }

        private void RequestAfter(CoapBlock block, int received)
        {
            if (_body.TooLarge() is { } tooLarge)
            {
                call.Fail(tooLarge);
                return;
            }

            // A BERT block (SZX 7, RFC 8323 section 6) carries several KiB and its number counts KiB.
            if (block.SizeExponent == 7 && (received == 0 || received % 1024 != 0))
            {
                call.Fail(new CoapException($"{call.Peer.EndPoint} sent a BERT block of {received} bytes that is not the last; BERT blocks carry whole KiB (RFC 8323 section 6).", call.Peer.EndPoint));
                return;
            }

            _expected = block.Number + (block.SizeExponent == 7 ? received / 1024 : 1);
            call.SendFollowUp(stage, BlockRequest(template, _expected, block.SizeExponent), OnBlock);
        }

        private void OnBlock(CoapMessage response)
        {
            try
            {
                Receive(response);
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                // The caller's stream refused a block (a full disk, a closed pipe), or the block made no sense: the call
                // fails with that, never the receive loop the block arrived on, where it would wait for its timeout.
                call.Fail(e);
            }
        }

        private void Receive(CoapMessage response)
        {
            if (!response.Code.IsSuccess)
            {
                // Surfaced as it is: the caller sees the error code, never a partial body as success.
                next(call, response);
                return;
            }

            if (WrongBlock(call, response, _expected, _etag) is { } wrong)
            {
                call.Fail(wrong);
                return;
            }

            CoapBlock got = response.Block2!.Value;
            _body.Write(response.Payload.Span);
            if (got.More)
            {
                RequestAfter(got, response.Payload.Length);
                return;
            }

            next(call, _body.Whole());
        }
    }

    /// <summary>What the caller asked of this call's transfer (a streamed body, progress), for the stage that carries the application's body.</summary>
    private BlockTransfer? Transfer(CoapClientCall call) => _serves ? call.Features.Get<BlockTransfer>() : null;

    /// <summary>
    /// A value this stage keeps for one exchange or call, told apart from another block-wise stage's on the same one (an
    /// inner and an outer stage around OSCORE both may join an upload or send one in blocks, RFC 8613 section 4.1.3.4): a
    /// short list, newest first, keyed by the stage.
    /// </summary>
    private sealed class Slot<T>(BlockwiseStage stage, T value, Slot<T>? next)
        where T : class
    {
        public static T? Get(CoapFeatures features, BlockwiseStage stage)
        {
            for (Slot<T>? slot = features.Get<Slot<T>>(); slot is not null; slot = slot.Next)
            {
                if (ReferenceEquals(slot.Stage, stage))
                {
                    return slot.Value;
                }
            }

            return null;
        }

        /// <summary>Keeps <paramref name="value"/> for <paramref name="stage"/>; set from the one thread the exchange or call is passing on.</summary>
        public static void Set(CoapFeatures features, BlockwiseStage stage, T value) => features.Set(new Slot<T>(stage, value, features.Get<Slot<T>>()));

        private BlockwiseStage Stage => stage;

        private T Value => value;

        private Slot<T>? Next => next;
    }
}
