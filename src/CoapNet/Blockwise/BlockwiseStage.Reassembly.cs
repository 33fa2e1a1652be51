using System.Globalization;
using System.Text;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.Blockwise;

// The server side of Block1 (RFC 7959 sections 2.3, 2.5, 2.9): the blocks of an upload are joined
// before the handler sees one request (atomic), or passed to it one by one (non-atomic).
internal sealed partial class BlockwiseStage
{
    // A buffer starts at most this large and grows with what arrives, whatever Size1 announces.
    private const int InitialUploadCapacity = 64 * 1024;

    private readonly Dictionary<string, Reassembly> _uploads = new(StringComparer.Ordinal);
    private long _reassemblyBytes;
    private long _nextUploadExpiry = long.MaxValue;

    /// <summary>The number of uploads being joined.</summary>
    public int ReassemblyCount
    {
        get
        {
            lock (_gate)
            {
                return _uploads.Count;
            }
        }
    }

    /// <summary>The bytes the uploads being joined hold or have announced (Size1), counted against <see cref="BlockwiseOptions.MaxReassemblyBytes"/>.</summary>
    public long ReassemblyBytes
    {
        get
        {
            lock (_gate)
            {
                return _reassemblyBytes;
            }
        }
    }

    /// <summary>
    /// Asked with the first block (NUM 0) of an upload before it is joined: an answer to send at once instead (a server's
    /// 4.04 for a path nothing serves, 4.05, 4.15...), or null to go on. Given by the server's routing.
    /// </summary>
    internal Func<CoapMessage, CoapMessage?>? UploadCheck { get; }

    /// <summary>A request carrying Block1: joined into the upload it belongs to, or passed on as it is (non-atomic).</summary>
    private void ReceiveBlock(CoapExchange exchange, CoapBlock block, Action<CoapExchange> next)
    {
        CoapMessage request = exchange.RequestAt(this);

        // RFC 7959 section 4: a Size1 over the limit is refused at once, before any block is kept.
        if (request.Size1 is uint announced && announced > _options.MaxUploadSize)
        {
            lock (_gate)
            {
                Forget(UploadKey(exchange.Peer, request));
            }

            exchange.RespondFrom(this, TooLarge(_options.MaxUploadSize, $"The body announced ({announced} bytes) exceeds"));
            return;
        }

        if (!_options.ReassembleUploads)
        {
            // Non-atomic (section 2.5): the handler takes each block; its response gets the Block1 echo.
            next(exchange);
            return;
        }

        CoapMessage? answer;
        ReadOnlyMemory<byte> body;
        bool bert = block.SizeExponent == 7;
        if (bert && exchange.BertBlockSize == 0)
        {
            answer = Diagnostic(CoapCode.BadRequest, "BERT blocks (SZX 7) need Block-Wise-Transfer in both CSMs and a Max-Message-Size of at least 2 KiB more than a header (RFC 8323 section 6).");
            body = default;
        }
        else if (block.More && (bert ? request.Payload.Length == 0 || request.Payload.Length % 1024 != 0 : request.Payload.Length != block.Size))
        {
            string expected = bert ? "a whole number of KiB (RFC 8323 section 6)" : $"exactly {block.Size} (RFC 7959 section 2.2)";
            answer = Diagnostic(CoapCode.BadRequest, $"Block {block.Number} carries {request.Payload.Length} bytes; every block but the last carries {expected}.");
            body = default;
            lock (_gate)
            {
                Forget(UploadKey(exchange.Peer, request));
            }
        }
        else if (block.Number == 0 && UploadCheck?.Invoke(request) is { } refusal)
        {
            // Nothing above would take the whole body either: say so now, before it is sent and held (section 2.5).
            answer = refusal;
            body = default;
            lock (_gate)
            {
                Forget(UploadKey(exchange.Peer, request));
            }
        }
        else
        {
            string key = UploadKey(exchange.Peer, request);
            lock (_gate)
            {
                long now = _time.GetTimestamp();
                SweepUploads(now);
                answer = Join(key, block, request, now, out body);
            }
        }

        if (answer is not null)
        {
            exchange.RespondFrom(this, answer);
            return;
        }

        // The last block: the handler sees one request with the whole body, and its response echoes
        // Block1 with M=0 (section 2.3); a large response still goes out in Block2 blocks (section 3.3).
        CoapMessage whole = request.CopyWithout(CoapOptionNumber.Block1, CoapOptionNumber.Size1);
        whole.Payload = body;
        exchange.ReplaceRequest(this, whole);
        Slot<JoinedUpload>.Set(exchange.Features, this, new JoinedUpload(new CoapBlock(block.Number, false, EchoExponent(block))));
        next(exchange);
    }

    /// <summary>
    /// Adds one block to its upload. Returns the answer to send (2.31, or an error that ends the upload),
    /// or null when the upload is complete and <paramref name="body"/> holds it. Caller holds the lock.
    /// </summary>
    private CoapMessage? Join(string key, CoapBlock block, CoapMessage request, long now, out ReadOnlyMemory<byte> body)
    {
        body = default;
        ReadOnlyMemory<byte> payload = request.Payload;
        _uploads.TryGetValue(key, out Reassembly? upload);
        if (block.Number == 0)
        {
            // Block 0 starts the upload over (RFC 7959 section 2.5: the client may restart a transfer).
            if (upload is not null)
            {
                Forget(key);
            }

            long reserve = Math.Max(request.Size1 ?? 0, payload.Length);
            if (reserve > _options.MaxUploadSize || reserve > _options.MaxReassemblyBytes)
            {
                // Larger than this server ever joins: 4.13 with the size it can take (section 2.9.3), not a retry later.
                return TooLarge(Math.Min(_options.MaxUploadSize, _options.MaxReassemblyBytes), $"The body ({reserve} bytes) exceeds");
            }

            if (!block.More)
            {
                body = payload;
                return null;
            }

            // Full for now: RFC 7959 has no code for "too many uploads", and 4.13 with Size1 would tell the
            // client this body is too large for good. 5.03 Service Unavailable with Max-Age (RFC 7252
            // section 5.9.3.4) says "try again later", which is the truth: abandoned uploads are freed
            // within ReassemblyLifetime.
            if (_uploads.Count >= _options.MaxReassemblies || _reassemblyBytes + reserve > _options.MaxReassemblyBytes)
            {
                return Busy();
            }

            upload = new Reassembly(reserve, request.ContentFormat, (int)Math.Min(reserve, InitialUploadCapacity));
            _uploads.Add(key, upload);
            _reassemblyBytes += reserve;
        }
        else if (upload is null)
        {
            return Diagnostic(CoapCode.RequestEntityIncomplete, $"Block {block.Number} arrived, but no upload is in progress here: block 0 is missing or the upload expired (RFC 7959 section 2.9.2).");
        }
        else
        {
            long received = upload.Body.Length;
            long offset = block.Offset;
            if (block.More && offset + payload.Length <= received)
            {
                // A block already joined, sent again (a NON, or a retransmission under a new Message ID): answered again.
                return Continue(block);
            }

            string? mismatch = offset != received
                ? $"Block {block.Number} starts at byte {offset}, but {received} bytes were received: a block is missing or out of order"
                : request.ContentFormat != upload.ContentFormat ? "The Content-Format changed during the upload" : null;
            if (mismatch is not null)
            {
                Forget(key);
                return Diagnostic(CoapCode.RequestEntityIncomplete, mismatch + " (RFC 7959 section 2.9.2); start again from block 0.");
            }

            long size = received + payload.Length;
            if (size > _options.MaxUploadSize)
            {
                Forget(key);
                return TooLarge(_options.MaxUploadSize, $"The body (more than {received} bytes) exceeds");
            }

            long reserve = Math.Max(upload.Reserved, size);
            if (_reassemblyBytes - upload.Reserved + reserve > _options.MaxReassemblyBytes)
            {
                Forget(key);
                return Busy();
            }

            _reassemblyBytes += reserve - upload.Reserved;
            upload.Reserved = reserve;
        }

        upload.Append(payload.Span, _options.MaxUploadSize);
        if (block.More)
        {
            // The lifetime runs from the latest block, so a slow but live upload is kept.
            upload.ExpiresAt = now + (long)(_options.ReassemblyLifetime.TotalSeconds * _time.TimestampFrequency);
            _nextUploadExpiry = Math.Min(_nextUploadExpiry, upload.ExpiresAt);
            return Continue(block);
        }

        Forget(key);
        body = new ReadOnlyMemory<byte>(upload.Body.GetBuffer(), 0, (int)upload.Body.Length);
        return null;
    }

    /// <summary>Adds the Block1 echo to a success response to a block (section 2.3): M=0 after a joined upload, the block's own after a non-atomic one.</summary>
    /// <param name="exchange">The exchange the response answers.</param>
    /// <param name="request">The request as it came up to this stage (<see cref="CoapExchange.RequestAt"/>).</param>
    /// <param name="response">The response on its way down.</param>
    private CoapMessage EchoBlock1(CoapExchange exchange, CoapMessage request, CoapMessage response)
    {
        CoapBlock echo;
        if (Slot<JoinedUpload>.Get(exchange.Features, this) is { } joined)
        {
            echo = joined.Echo;
        }
        else if (request.Block1 is { } block)
        {
            echo = new CoapBlock(block.Number, block.More, EchoExponent(block));
        }
        else
        {
            return response;
        }

        if (!response.Code.IsSuccess || response.Block1 is not null)
        {
            return response;
        }

        // The response's options may be a handler's shared message: the echo goes on a copy.
        CoapMessage echoed = response.CopyWithout(CoapOptionNumber.Block1);
        echoed.MessageId = response.MessageId;
        echoed.Block1 = echo;
        return echoed;
    }

    /// <summary>2.31 Continue with the block's number and M=1, and our size when smaller (late negotiation, RFC 7959 section 2.5).</summary>
    private CoapMessage Continue(CoapBlock block)
    {
        CoapMessage answer = new() { Code = CoapCode.Continue };
        answer.Block1 = new CoapBlock(block.Number, true, EchoExponent(block));
        return answer;
    }

    /// <summary>The SZX an echo carries: a BERT block's 7 when it was accepted (only then does it get this far), else our size when smaller.</summary>
    private int EchoExponent(CoapBlock block) => block.SizeExponent == 7 ? 7 : Math.Min(block.SizeExponent, _sizeExponent);

    private static CoapMessage TooLarge(long limit, string what)
    {
        // RFC 7959 section 2.9.3: Size1 in a 4.13 tells the client the largest body the server takes.
        CoapMessage answer = Diagnostic(CoapCode.RequestEntityTooLarge, $"{what} the {limit} bytes this server accepts.");
        answer.Size1 = (uint)Math.Min(limit, uint.MaxValue);
        return answer;
    }

    private CoapMessage Busy()
    {
        CoapMessage answer = Diagnostic(CoapCode.ServiceUnavailable, "Too many uploads are in progress; try again later.");
        answer.MaxAge = (uint)Math.Ceiling(_options.ReassemblyLifetime.TotalSeconds);
        return answer;
    }

    private static CoapMessage Diagnostic(CoapCode code, string text) => new() { Code = code, Payload = Encoding.UTF8.GetBytes(text) };

    /// <summary>An upload is told apart by its peer, method, URI and Request-Tag (RFC 7959 section 2.5, RFC 9175 section 3).</summary>
    private static string UploadKey(CoapPeer peer, CoapMessage request)
    {
        StringBuilder key = new();
        key.Append(peer.ToString()).Append('|').Append(request.Code.Value.ToString(CultureInfo.InvariantCulture))
            .Append('|').Append(request.UriPath).Append('?').Append(request.UriQuery);
        foreach (CoapOptionEntry option in request.ReadOptions())
        {
            if (option.Number == CoapOptionNumber.RequestTag)
            {
                key.Append("|tag=").Append(Convert.ToHexString(option.Value.Span));
            }
        }

        return key.ToString();
    }

    // Caller holds the lock.
    private void Forget(string key)
    {
        if (_uploads.Remove(key, out Reassembly? upload))
        {
            _reassemblyBytes -= upload.Reserved;
        }
    }

    // Caller holds the lock. Lazy, as for stored bodies: only when the earliest expiry has passed.
    private void SweepUploads(long now)
    {
        if (now < _nextUploadExpiry)
        {
            return;
        }

        long next = long.MaxValue;
        List<string>? expired = null;
        foreach (KeyValuePair<string, Reassembly> pair in _uploads)
        {
            if (pair.Value.ExpiresAt <= now)
            {
                (expired ??= []).Add(pair.Key);
            }
            else
            {
                next = Math.Min(next, pair.Value.ExpiresAt);
            }
        }

        if (expired is not null)
        {
            foreach (string key in expired)
            {
                Forget(key);
            }
        }

        _nextUploadExpiry = next;
    }

    /// <summary>The Block1 option the response to a joined upload echoes (RFC 7959 section 2.3): the last block's number, M=0.</summary>
    private sealed record JoinedUpload(CoapBlock Echo);

    /// <summary>One upload being joined: the bytes so far and what they are counted as.</summary>
    private sealed class Reassembly(long reserved, ushort? contentFormat, int capacity)
    {
        public MemoryStream Body { get; } = new(capacity);

        /// <summary>
        /// Adds a block. The buffer doubles as it fills, but never past what the upload is counted as
        /// when Size1 announced it (so the total bound is one on memory too), nor past the limit.
        /// </summary>
        public void Append(ReadOnlySpan<byte> block, long limit)
        {
            long needed = Body.Length + block.Length;
            if (needed > Body.Capacity)
            {
                long grown = Math.Max(needed, 2L * Body.Capacity);
                Body.Capacity = (int)Math.Max(needed, Math.Min(grown, Reserved > needed ? Reserved : limit));
            }

            Body.Write(block);
        }

        public long Reserved { get; set; } = reserved;

        public ushort? ContentFormat { get; } = contentFormat;

        public long ExpiresAt { get; set; }
    }
}
